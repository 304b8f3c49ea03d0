package securitytest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/openaitest"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// TestSecurityApprovalFamilies runs the built bot with APPROVAL_MODE=risky
// and a model that makes, in one turn, a call of every kind of construct
// approvals once missed: long options of xargs with a value, a shell named
// by a variable, a string run later (trap), an alias, a script downloaded
// and then run, a git -c key that names a command, util-linux wrappers,
// prlimit on the bot itself, and schedule_job with a watcher script that
// does it again. Each must reach the chat as an approval request; the
// user denies each, the model hears of every denial, no job is created
// and the victim directory survives.
func TestSecurityApprovalFamilies(t *testing.T) {
	set, l := newBotLayout(t)
	l.writeMCPConfig(t)
	s := newSuite(set, vectorPaths{secrets: l.secretsDir}, nil)
	const chat = firstChatID
	victim := filepath.Join(l.workspace, "victim")
	if err := os.MkdirAll(victim, 0o700); err != nil {
		t.Fatal(err)
	}
	l.giveToBot(t, victim)
	writeBotFile(t, l, filepath.Join(victim, "keep"), "x")
	commands := []string{
		`echo ./victim | xargs --max-args 1 rm -rf`,
		`$SHELL -c 'rm -rf ./victim'`,
		`trap 'rm -rf ./victim' EXIT; true`,
		"shopt -s expand_aliases\nalias r='rm -rf'\nr ./victim",
		`curl -so i.sh http://127.0.0.1:9/i.sh; ./i.sh`,
		`git -c core.pager='rm -rf ./victim' log`,
		`setsid -f rm -rf ./victim`,
		`unshare -r rm -rf ./victim`,
		`prlimit --pid $PPID --cpu=1:1`,
	}
	var calls []openaitest.ToolCall
	for i, c := range commands {
		args, err := json.Marshal(map[string]any{"command": fmt.Sprintf("%s # FAMILY-%d", c, i)})
		if err != nil {
			t.Fatal(err)
		}
		calls = append(calls, openaitest.ToolCall{Name: "bash", Arguments: string(args)})
	}
	job, err := json.Marshal(map[string]string{"schedule": "*/5 * * * *", "prompt": "watch the bot", "script": "prlimit --pid $PPID --cpu=1:1 # FAMILY-job"})
	if err != nil {
		t.Fatal(err)
	}
	calls = append(calls, openaitest.ToolCall{Name: "schedule_job", Arguments: string(job)})
	markers := len(calls)

	tg, ai, b := riskyBot(t, set, l, s, chat, calls...)
	tg.SendText(chat, chat, "go")
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	denied := map[int]bool{}
	asked := []string{}
	for len(asked) < markers {
		var request telegramtest.Message
		waitUntil(ctx, 50*time.Millisecond, func() bool {
			for _, m := range tg.Messages(chat) {
				if strings.Contains(m.Visible, "Approval needed") && !denied[m.ID] {
					request = m
					return true
				}
			}
			return b.exited() || len(ai.ChatRequests()) >= 2
		})
		if request.ID == 0 {
			break
		}
		denied[request.ID] = true
		asked = append(asked, request.Visible)
		tg.SendCallback(chat, chat, request.ID, denyButton(t, request))
	}
	if !waitUntil(ctx, 100*time.Millisecond, func() bool { return b.exited() || len(ai.ChatRequests()) >= 2 }) || b.exited() {
		t.Fatalf("the model was not asked again after the denials; the bot's log, redacted:\n%s", s.safe(lastLines(b.log.String(), 40)))
	}
	b.stop(t)
	shown := strings.Join(asked, "\n")
	for i := range commands {
		if !strings.Contains(shown, fmt.Sprintf("FAMILY-%d", i)) {
			t.Errorf("no approval request for %q", commands[i])
		}
	}
	if !strings.Contains(shown, "FAMILY-job") {
		t.Error("no approval request for the watcher script of schedule_job")
	}
	var denials int
	for _, m := range ai.ChatRequests()[1].Messages {
		if m.Role == "tool" && strings.Contains(m.Text(), "the user denied") {
			denials++
		}
	}
	if denials != markers {
		t.Errorf("the model heard of %d denials, want %d", denials, markers)
	}
	if _, err := os.Stat(filepath.Join(victim, "keep")); err != nil {
		t.Errorf("the victim directory did not survive: %v", err)
	}
	if data, err := os.ReadFile(filepath.Join(l.agentDir, "jobs.json")); err == nil && strings.Contains(string(data), "FAMILY-job") {
		t.Error("the denied watcher job was created")
	}
}
