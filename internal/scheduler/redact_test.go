package scheduler

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/agent"
)

// TestQuotedPromptIsRedactedBeforeItIsCut puts the base64 form of a host
// secret in a job's prompt where the 200-byte cut of a quote falls inside
// it: the unprompted one-shot alert and list_jobs must quote no piece of
// it, which they would when they cut first and redacted the cut text.
func TestQuotedPromptIsRedactedBeforeItIsCut(t *testing.T) {
	for _, tc := range []struct {
		name  string
		quote func(t *testing.T, e *env, j Job) string
	}{
		{name: "unprompted one-shot alert", quote: func(t *testing.T, e *env, j Job) string {
			e.chats.onPrompt = func(context.Context, string, string, string) error {
				return errors.New("chat: the chat's queue is full")
			}
			e.runNow(t, j.ID)
			for _, m := range e.chats.sent() {
				if m.Kind == "notify" {
					return m.Text
				}
			}
			t.Fatal("the chat was not told of the refused prompt")
			return ""
		}},
		{name: "list_jobs", quote: func(t *testing.T, e *env, j Job) string {
			return agent.TextOf(e.callTool(t, "list_jobs", "chat-a", `{}`).Content)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, setup{})
			encoded := base64.StdEncoding.EncodeToString([]byte(e.secret))
			// The quote starts at byte 0 of the prompt; the form starts 30
			// bytes before the cut at 200 and ends after it.
			prompt := strings.Repeat("w", 169) + " " + encoded + " and then some more words"
			if got := e.s.redactor().Redact(prompt); strings.Contains(got, encoded[:12]) {
				t.Fatalf("the redactor does not catch the base64 form (%d bytes) whole; the test proves nothing", len(encoded))
			}
			j := e.schedule(t, "chat-a", "2030-06-01 13:00", prompt, "")
			quoted := tc.quote(t, e, j)
			const piece = 8
			for i := 0; i+piece <= len(encoded); i++ {
				if strings.Contains(quoted, encoded[i:i+piece]) {
					t.Fatalf("the quote (%d bytes) holds %d bytes of the secret's base64 form (%d bytes) from offset %d",
						len(quoted), piece, len(encoded), i)
				}
			}
		})
	}
}
