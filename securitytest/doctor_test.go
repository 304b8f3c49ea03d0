package securitytest

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/asusertest"
	"github.com/volcanic/telegram-agent/internal/openaitest"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// runSubcommand runs the built bot's subcommand with env, as the bot's
// user, and returns what it printed (stdout and stderr).
func runSubcommand(t *testing.T, l *layout, env []string, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command(l.botBinary, args...)
	cmd.Env = env
	cmd.Dir = l.workspace
	cmd.Stdout, cmd.Stderr = &out, &out
	if l.asRoot {
		asusertest.Drop(cmd)
	}
	if err := asusertest.Start(t, cmd); err != nil {
		t.Fatalf("starting telegram-bot %s: %v", strings.Join(args, " "), err)
	}
	var exitErr *exec.ExitError
	if err := cmd.Wait(); err != nil && !errors.As(err, &exitErr) {
		t.Fatalf("waiting for telegram-bot %s: %v", strings.Join(args, " "), err)
	}
	return out.String()
}

// TestSecurityDoctor runs telegram-bot doctor and healthcheck, which an
// operator runs with the deployment's whole environment and whose output
// lands in terminals, CI logs and Docker's health log, against the fake
// servers with every fake secret set, and a hosted MCP server whose url
// carries credentials and cannot be reached: no form of any secret may be
// printed.
func TestSecurityDoctor(t *testing.T) {
	set, l := newBotLayout(t)
	l.writeMCPConfig(t)
	s := newSuite(set, vectorPaths{secrets: l.secretsDir}, nil)
	tg := telegramtest.New(t, telegramtest.WithToken(set.byName(envBotToken).value))
	ai := openaitest.New(t, openaitest.AllowUnscripted())
	env := botEnv(l, set, tg.URL(), ai.URL(), []int64{firstChatID})

	pathToken, queryToken := randomHex(t, 20), randomHex(t, 20)
	unreachable := setEnv(env, fmt.Sprintf(`MCP_CONFIG={"mcpServers":{"hosted":{"url":"http://127.0.0.1:1/mcp/u/%s?api_key=%s"}}}`, pathToken, queryToken))
	secrets := append(set.searched(),
		secret{name: "the MCP url's path token", value: pathToken, forms: derivedForms(pathToken)},
		secret{name: "the MCP url's api_key", value: queryToken, forms: derivedForms(queryToken)})

	for _, run := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"doctor", env, []string{"doctor"}, "Process environment"},
		{"doctor with an unreachable MCP url", unreachable, []string{"doctor"}, "MCP server hosted"},
		{"healthcheck", env, []string{"healthcheck"}, "heartbeat"},
	} {
		t.Run(run.name, func(t *testing.T) {
			out := runSubcommand(t, l, run.env, run.args...)
			if !strings.Contains(out, run.want) {
				t.Errorf("the output lacks %q; it ends, redacted:\n%s", run.want, s.safe(lastLines(out, 30)))
			}
			for _, f := range scan(secrets, []piece{{where: "the output of " + run.name, text: out}}) {
				t.Errorf("LEAK %s", f)
			}
		})
	}
}
