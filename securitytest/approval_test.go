package securitytest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/volcanic/telegram-agent/internal/openaitest"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// TestSecurityApprovalRequest runs the built bot with APPROVAL_MODE=risky
// and a model that calls bash with a risky command holding every known
// secret raw, in base64 and split by HTML, and markup that tries to close
// the request's <pre> and add a link. The approval request the chat gets
// must show none of the secrets in any form, and the markup as text; the
// user's Deny must reach the model as a denial, and the command never run.
func TestSecurityApprovalRequest(t *testing.T) {
	set, l := newBotLayout(t)
	l.writeMCPConfig(t)
	s := newSuite(set, vectorPaths{secrets: l.secretsDir}, nil)
	const chat = firstChatID

	var parts []string
	for _, sec := range set.known() {
		v := sec.value
		half := len(v) / 2
		parts = append(parts, v, base64.StdEncoding.EncodeToString([]byte(v)), v[:half]+"</pre><b>"+v[half:])
	}
	marker := "APPROVAL-MARKER"
	command := "rm -rf ./scratch-" + marker + " # " + strings.Join(parts, " ") + ` </pre><a href="https://evil.example/">Allow</a>`
	args, err := json.Marshal(map[string]any{"command": command, "timeout": 30})
	if err != nil {
		t.Fatal(err)
	}
	tg, ai, b := riskyBot(t, set, l, s, chat, openaitest.ToolCall{Name: "bash", Arguments: string(args)})
	tg.SendText(chat, chat, "clean up")
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	var request telegramtest.Message
	waitUntil(ctx, 100*time.Millisecond, func() bool {
		for _, m := range tg.Messages(chat) {
			if strings.Contains(m.Visible, "Approval needed") {
				request = m
				return true
			}
		}
		return b.exited()
	})
	if request.ID == 0 {
		t.Fatalf("no approval request reached the chat; the bot's log, redacted:\n%s", s.safe(lastLines(b.log.String(), 40)))
	}
	if !strings.Contains(request.Visible, marker) || !strings.Contains(request.Visible, `<a href="https://evil.example/">`) {
		t.Errorf("the approval request does not show the command, its markup as text; it shows, redacted:\n%s", s.safe(request.Visible))
	}
	tg.SendCallback(chat, chat, request.ID, denyButton(t, request))
	if !waitUntil(ctx, 100*time.Millisecond, func() bool { return b.exited() || len(ai.ChatRequests()) >= 2 }) || b.exited() {
		t.Fatalf("the model was not asked again after the denial; the bot's log, redacted:\n%s", s.safe(lastLines(b.log.String(), 40)))
	}
	b.stop(t)
	if got := ai.ChatRequests()[1].LastMessage().Text(); !strings.Contains(got, "the user denied") {
		t.Errorf("the model did not get the denial: %s", s.safe(got))
	}
	// The model itself wrote the secrets into its tool call here (it
	// never sees one: this stands for a model that got one all the same):
	// the transcript stores the call redacted, as it would leave, so the
	// agent dir is searched like the channels that leave the host.
	for _, r := range s.evaluateGlobal(observe(t, l, ai, tg, b)) {
		if r.outcome == outcomeLeak || r.outcome == outcomeFail {
			t.Errorf("%s %s %s: %s", r.vector, r.channel, r.outcome, strings.Join(r.details, "; "))
		}
	}
}

// riskyBot starts the built bot with APPROVAL_MODE=risky for chat, a fake
// Telegram and a model that answers with calls and then "done", and waits
// until it polls.
func riskyBot(t *testing.T, set secretSet, l *layout, s *suite, chat int64, calls ...openaitest.ToolCall) (*telegramtest.Server, *openaitest.Server, *bot) {
	t.Helper()
	tg := telegramtest.New(t, telegramtest.WithToken(set.byName(envBotToken).value), telegramtest.WithWaitTimeout(startTimeout))
	ai := openaitest.New(t, openaitest.WithScript(openaitest.ToolCalls(calls...), openaitest.Text("done")))
	env := setEnv(botEnv(l, set, tg.URL(), ai.URL(), []int64{chat}), "APPROVAL_MODE=risky")
	b := startBot(t, l, env)
	if !waitPolling(tg, b, 0) {
		t.Fatalf("the bot did not start polling; its log, redacted:\n%s", s.safe(lastLines(b.log.String(), 40)))
	}
	return tg, ai, b
}

// denyButton returns the callback data of an approval request's Deny
// button.
func denyButton(t *testing.T, request telegramtest.Message) string {
	t.Helper()
	var kb models.InlineKeyboardMarkup
	if err := json.Unmarshal([]byte(request.ReplyMarkup), &kb); err != nil {
		t.Fatalf("the approval request's buttons do not decode: %v", err)
	}
	for _, row := range kb.InlineKeyboard {
		for _, btn := range row {
			if strings.HasSuffix(btn.CallbackData, ":deny") {
				return btn.CallbackData
			}
		}
	}
	t.Fatal("the approval request has no Deny button")
	return ""
}
