package mcp

import (
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Fake host secrets the loader must refuse to hand to a server. Failure
// messages never print them.
const (
	// hostToken is the bot token in the host's environment.
	hostToken = "123456:host-BOT-value-9f8e7d6c5b4a"
	// hostKeyPadded is a model key set with a trailing newline, as a
	// secret read from a file often is.
	hostKeyPadded = "sk-host-KEY-9a8b7c6d5e\n"
)

// hostSecrets are the host's own secret values, as the caller passes them
// to Load: a value shorter than MinimumSecretLength is ignored.
var hostSecrets = []string{hostToken, hostKeyPadded, "short"}

// hostLookup is the bot's full environment: testLookup plus the host's
// secrets under their names.
func hostLookup(name string) (string, bool) {
	switch name {
	case "TELEGRAM_BOT_TOKEN":
		return hostToken, true
	case "OPENAI_API_KEY":
		return strings.TrimSpace(hostKeyPadded), true
	case "SHORT":
		return "short", true
	case "PLAIN_WORD":
		return "tiny", true
	case "CREDENTIALS_B64":
		// A deployment's credentials file in base64, holding the host's
		// bot token among its fields.
		return base64.StdEncoding.EncodeToString([]byte(`{"type": "bot", "token": "` + hostToken + `"}`)), true
	case "TOKEN_HEAD":
		return hostToken[:len(hostToken)/2], true
	case "TOKEN_TAIL":
		return hostToken[len(hostToken)/2:], true
	case "TOKEN_PART_1", "TOKEN_PART_2", "TOKEN_PART_3", "TOKEN_PART_4":
		// Each quarter is shorter than the runs of its bytes the redactor
		// knows a secret by.
		i := int(name[len(name)-1] - '1')
		n := (len(hostToken) + 3) / 4
		return hostToken[i*n : min((i+1)*n, len(hostToken))], true
	}
	return testLookup(name)
}

// noTrustCheck accepts every file, so that the parsing tests run as any
// user; the real check has tests of its own, as another user.
func noTrustCheck(string) ([]string, error) { return nil, nil }

func TestLoad(t *testing.T) {
	tests := []struct {
		name string
		body string // "" means no file
		// inline passes body as MCP_CONFIG's JSON instead of a file.
		inline bool
		want   []ServerConfig
		// wantSecrets are the values expansion filled in.
		wantSecrets []string
		// warnHas are what the warnings must name, in order.
		warnHas [][]string
		// errHas are what the error must name; empty means no error.
		errHas []string
	}{
		{name: "no file"},
		{name: "empty", body: `{}`},
		{name: "empty inline", body: `  {}`, inline: true},
		{
			name: "expansion",
			body: `{"mcpServers": {
				"github": {"command": "npx", "args": ["-y", "server-github", "--token-file=${GITHUB_TOKEN}"], "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}", "PLAIN": "a $HOME b", "W": "${PLAIN_WORD}"}},
				"off": {"command": "x", "args": ["${GITHUB_TOKEN}"], "env": {"T": "${NOT_SET}"}, "disabled": true}
			}}`,
			want: []ServerConfig{
				{
					Name: "github", Command: "npx",
					Args: []string{"-y", "server-github", "--token-file=" + explicitToken},
					Env:  map[string]string{"GITHUB_TOKEN": explicitToken, "PLAIN": "a $HOME b", "W": "tiny"},
				},
				{Name: "off", Command: "x", Args: []string{explicitToken}, Env: map[string]string{"T": ""}, Disabled: true},
			},
			wantSecrets: []string{explicitToken},
			warnHas:     [][]string{{`server "github"`, "args[2]", "GITHUB_TOKEN", "/proc/<pid>/cmdline", `"env"`}},
		},
		{
			name:   "inline expansion",
			inline: true,
			body:   `{"mcpServers": {"s": {"command": "x", "args": ["--pw=${SERVICE_PASSWORD}"], "env": {"T": "${GITHUB_TOKEN}", "U": "${GITHUB_TOKEN}"}}}}`,
			want: []ServerConfig{{Name: "s", Command: "x", Args: []string{"--pw=" + configuredSecret},
				Env: map[string]string{"T": explicitToken, "U": explicitToken}}},
			wantSecrets: []string{configuredSecret, explicitToken},
			warnHas:     [][]string{{InlineSource, `server "s"`, "args[0]", "SERVICE_PASSWORD"}},
		},
		{
			// Credentials written into the arguments are as readable in
			// /proc/<pid>/cmdline as expanded ones: each is a secret, with
			// a warning; other arguments and short values are not.
			name: "literal credentials in args",
			body: `{"mcpServers": {"s": {"command": "x", "args": ["--api-key", "literal-ARG-key-0123", "--token=literal-TOKEN-0123", "https://u:literal-PW-0123@db.example/x?sig=literal-SIG-0123&page=2", "--verbose", "--key=short", "--token-file", "token-in-a-file.txt", "--secret", "/run/secrets/mcp-secret", "--api-key=./keys/k.pem", "SERVICE_API_KEY=literal-ENV-key-0123", "MODE=production-ready", "server.py"]}}}`,
			want: []ServerConfig{{Name: "s", Command: "x", Args: []string{"--api-key", "literal-ARG-key-0123", "--token=literal-TOKEN-0123",
				"https://u:literal-PW-0123@db.example/x?sig=literal-SIG-0123&page=2", "--verbose", "--key=short",
				"--token-file", "token-in-a-file.txt", "--secret", "/run/secrets/mcp-secret", "--api-key=./keys/k.pem",
				"SERVICE_API_KEY=literal-ENV-key-0123", "MODE=production-ready", "server.py"}}},
			wantSecrets: []string{"literal-ARG-key-0123", "literal-ENV-key-0123", "literal-PW-0123", "literal-SIG-0123", "literal-TOKEN-0123"},
			warnHas:     [][]string{{`server "s"`, "args[1]", "credential", "/proc/<pid>/cmdline"}, {"args[2]"}, {"args[3]"}, {"args[11]"}},
		},
		{name: "host secret in env", body: `{"mcpServers": {"s": {"command": "x", "env": {"X": "${TELEGRAM_BOT_TOKEN}"}}}}`, errHas: []string{`server "s"`, "env X", "TELEGRAM_BOT_TOKEN", "never handed"}},
		{name: "host secret inline", inline: true, body: `{"mcpServers": {"s": {"command": "x", "env": {"X": "${TELEGRAM_BOT_TOKEN}"}}}}`, errHas: []string{InlineSource, `server "s"`, "TELEGRAM_BOT_TOKEN"}},
		{name: "host secret in args", body: `{"mcpServers": {"s": {"command": "x", "args": ["--key=${OPENAI_API_KEY}"]}}}`, errHas: []string{`server "s"`, "args[0]", "OPENAI_API_KEY"}},
		{name: "host secret embedded", body: `{"mcpServers": {"s": {"command": "x", "env": {"H": "Bearer ${OPENAI_API_KEY} x"}}}}`, errHas: []string{"env H", "OPENAI_API_KEY"}},
		// A variable that holds a host secret in a form the redactor knows
		// is refused like one that holds it raw: the server would get it.
		{name: "host secret in base64", body: `{"mcpServers": {"s": {"command": "x", "env": {"CREDS": "${CREDENTIALS_B64}"}}}}`, errHas: []string{`server "s"`, "env CREDS", "CREDENTIALS_B64", "never handed"}},
		{name: "host secret in two halves", body: `{"mcpServers": {"s": {"command": "x", "args": ["--token=${TOKEN_HEAD}${TOKEN_TAIL}"]}}}`, errHas: []string{`server "s"`, "args[0]", "TOKEN_HEAD", "TOKEN_TAIL", "never handed"}},
		{name: "host secret in four parts", body: `{"mcpServers": {"s": {"command": "x", "env": {"T": "${TOKEN_PART_1}${TOKEN_PART_2}${TOKEN_PART_3}${TOKEN_PART_4}"}}}}`, errHas: []string{`server "s"`, "env T", "TOKEN_PART_1, TOKEN_PART_2, TOKEN_PART_3, TOKEN_PART_4", "never handed"}},
		{name: "host secret in a disabled server", body: `{"mcpServers": {"s": {"command": "x", "disabled": true, "env": {"X": "${TELEGRAM_BOT_TOKEN}"}}}}`, errHas: []string{`server "s"`, "TELEGRAM_BOT_TOKEN"}},
		{
			name: "short host value ignored",
			body: `{"mcpServers": {"s": {"command": "x", "env": {"X": "${SHORT}"}}}}`,
			want: []ServerConfig{{Name: "s", Command: "x", Env: map[string]string{"X": "short"}}},
		},
		{name: "unknown server key", body: `{"mcpServers": {"s": {"command": "x", "cwd": "/"}}}`, errHas: []string{`server "s"`, `unknown field "cwd"`}},
		{name: "unknown top-level key", body: `{"servers": {}}`, errHas: []string{`unknown field "servers"`}},
		{name: "unknown key inline", inline: true, body: `{"servers": {}}`, errHas: []string{InlineSource, `unknown field "servers"`}},
		{name: "missing command", body: `{"mcpServers": {"s": {"args": []}}}`, errHas: []string{`server "s"`, "no command"}},
		{name: "unset variable", body: `{"mcpServers": {"s": {"command": "x", "env": {"K": "${NOT_SET}"}}}}`, errHas: []string{`server "s"`, "env K", "NOT_SET is not set"}},
		{name: "unset variable in args", body: `{"mcpServers": {"s": {"command": "x", "args": ["${NOT_SET}"]}}}`, errHas: []string{"args[0]", "NOT_SET is not set"}},
		{name: "bad reference", body: `{"mcpServers": {"s": {"command": "x", "args": ["${A-B}"]}}}`, errHas: []string{"not a variable reference"}},
		{name: "not JSON", body: `{"mcpServers": `, errHas: []string{"invalid JSON"}},
		{
			name:   "every problem at once, no values",
			body:   `{"mcpServers": {"a": {"command": "x", "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}", "K": "${NOT_SET}"}}, "b": {}, "c": {"command": "x", "env": {"T": "${TELEGRAM_BOT_TOKEN}"}}}}`,
			errHas: []string{`server "a"`, `server "b"`, `server "c"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), DefaultFile)
			source, where := path, path
			if tt.inline {
				source, where = tt.body, InlineSource
			} else if tt.body != "" {
				if err := os.WriteFile(path, []byte(tt.body), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			cfg, err := load(source, hostLookup, asHostSecrets(hostSecrets), noTrustCheck)
			want := loadWant{servers: tt.want, secrets: tt.wantSecrets, warnHas: tt.warnHas}
			if len(tt.errHas) > 0 {
				want.errHas = append([]string{where}, tt.errHas...)
			}
			if !checkLoaded(t, cfg, err, want) {
				return
			}
			wantPath := path
			if tt.inline || tt.body == "" {
				wantPath = ""
			}
			if cfg.Path != wantPath || cfg.Inline != tt.inline {
				t.Errorf("Path, Inline = %q, %v; want %q, %v", cfg.Path, cfg.Inline, wantPath, tt.inline)
			}
		})
	}
}

// loadWant is what a test of Load expects: the servers, the secrets and
// what each warning names, or what the error names.
type loadWant struct {
	servers []ServerConfig
	secrets []string
	warnHas [][]string
	errHas  []string
}

// checkLoaded compares what load returned with want, and reports whether
// the configuration loaded and matched, so that the caller checks more.
func checkLoaded(t *testing.T, cfg Config, err error, want loadWant) bool {
	t.Helper()
	if len(want.errHas) > 0 {
		if err == nil {
			t.Fatal("no error")
		}
		msg := err.Error()
		checkNoValue(t, "the error", msg)
		for _, w := range want.errHas {
			if !strings.Contains(msg, w) {
				t.Errorf("the error lacks %q: %s", w, msg)
			}
		}
		return false
	}
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	// The expected values are fake; safe to print.
	if diff := cmp.Diff(want.servers, cfg.Servers); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want.secrets, cfg.Secrets); diff != "" {
		t.Errorf("secrets (-want +got):\n%s", diff)
	}
	if len(cfg.Warnings) != len(want.warnHas) {
		t.Fatalf("warnings = %q, want %d", cfg.Warnings, len(want.warnHas))
	}
	for i, w := range cfg.Warnings {
		checkNoValue(t, "a warning", w)
		for _, name := range want.warnHas[i] {
			if !strings.Contains(w, name) {
				t.Errorf("warning %d lacks %q: %s", i, name, w)
			}
		}
	}
	return !t.Failed()
}

// checkNoValue fails the test when text holds any fake value the tests
// expand.
func checkNoValue(t *testing.T, where, text string) {
	t.Helper()
	checkAbsent(t, where, "the token", text, explicitToken)
	checkAbsent(t, where, "the configured secret", text, configuredSecret)
	checkAbsent(t, where, "the host's bot token", text, hostToken)
	checkAbsent(t, where, "the host's key", text, strings.TrimSpace(hostKeyPadded))
	checkAbsent(t, where, "the literal credential", text, literalCredential)
	checkAbsent(t, where, "the injected header", text, "Injected")
}

func TestLoadEmptySource(t *testing.T) {
	for _, source := range []string{"", "  \n"} {
		cfg, err := Load(source, hostLookup, hostSecrets)
		if err != nil || len(cfg.Servers) != 0 || cfg.Path != "" {
			t.Errorf("Load(%q) = %+v, %v; want an empty configuration", source, cfg, err)
		}
	}
}

// asHostSecrets turns values into HostSecrets without sources.
func asHostSecrets(values []string) []HostSecret {
	out := make([]HostSecret, len(values))
	for i, v := range values {
		out[i] = HostSecret{Value: v}
	}
	return out
}

// A refusal names which of the host's secrets the variable holds, by its
// source, never the value; without a source it names the classes.
func TestHostSecretRefusalNamesTheSource(t *testing.T) {
	secrets := []HostSecret{{Value: hostToken, Source: "TELEGRAM_BOT_TOKEN"}, {Value: hostKeyPadded}}
	tests := []struct {
		name, ref, want string
	}{
		{"named", "TELEGRAM_BOT_TOKEN", "variable TELEGRAM_BOT_TOKEN holds a secret of the host's own: the value of TELEGRAM_BOT_TOKEN"},
		{"base64 of a named one", "CREDENTIALS_B64", "the value of TELEGRAM_BOT_TOKEN"},
		{"unnamed", "OPENAI_API_KEY", "variable OPENAI_API_KEY holds one of the host's own secrets (the bot token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := `{"mcpServers":{"s":{"command":"x","env":{"V":"${` + tt.ref + `}"}}}}`
			_, err := load(src, hostLookup, secrets, noTrustCheck)
			if err == nil || !errors.Is(err, errHostSecret) {
				t.Fatalf("load = %v, want a refusal of a host secret", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("the refusal %q lacks %q", err, tt.want)
			}
			if strings.Contains(err.Error(), hostToken) || strings.Contains(err.Error(), strings.TrimSpace(hostKeyPadded)) {
				t.Error("the refusal holds a secret value")
			}
		})
	}
}
