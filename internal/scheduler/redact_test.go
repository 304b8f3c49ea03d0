package scheduler

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/redactor"
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

// TestInterruptedNoticeRedactsBeforeItCuts forges jobs.json with a firing
// one-shot job whose name, or id, holds the base64 form of a host secret
// where the notice's cut of that field falls inside it: the start-up
// notice must quote no piece of it, which it would when it cut the field
// first and redacted the cut notice.
func TestInterruptedNoticeRedactsBeforeItCuts(t *testing.T) {
	for _, tc := range []struct {
		name string
		// job returns the forged job's id and name, given the encoded
		// secret.
		job func(encoded string) (id, name string)
	}{
		{name: "name", job: func(encoded string) (string, string) {
			return "f0000001", strings.Repeat("w", 30) + encoded
		}},
		{name: "id", job: func(encoded string) (string, string) {
			return "f00" + encoded, "call-mum"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var encoded string
			file := func(e *env) string {
				encoded = base64.StdEncoding.EncodeToString([]byte(e.secret))
				id, name := tc.job(encoded)
				return `{"version": 1, "jobs": [{"id": "` + id + `", "name": "` + name + `", "target": "chat-a", ` +
					`"schedule": "2026-06-01 09:00", "at": "2026-06-01T07:00:00Z", "prompt": "p", ` +
					`"created": "2026-05-01T00:00:00Z", "fired": "2026-06-01T07:00:00Z"}]}`
			}
			e := newEnv(t, setup{file: file})
			if got := e.s.redactor().Redact("ww" + encoded); strings.Contains(got, encoded[:12]) {
				t.Fatalf("the redactor does not catch the base64 form (%d bytes) whole; the test proves nothing", len(encoded))
			}
			if err := e.s.Start(t.Context(), e.chats); err != nil {
				t.Fatal(err)
			}
			msgs := e.chats.waitFor(t, 1)
			e.stop(t)
			if len(msgs) != 1 || msgs[0].Kind != "notify" {
				t.Fatalf("the chats got %d message(s) (%d notice(s)), want one notice", len(msgs), count(msgs, "notify"))
			}
			notice := msgs[0].Text
			const piece = 8
			for i := 0; i+piece <= len(encoded); i++ {
				if strings.Contains(notice, encoded[i:i+piece]) {
					t.Fatalf("the notice (%d bytes) holds %d bytes of the secret's base64 form (%d bytes) from offset %d",
						len(notice), piece, len(encoded), i)
				}
			}
		})
	}
}

// TestJobsFileIsRedacted checks that jobs.json holds a job's name, prompt
// and script redacted, as they would leave: the agent can read the file,
// and a job runs what it holds. A job created through schedule_job is
// redacted when it is created; one read from a forged file is redacted
// when the file is written again.
func TestJobsFileIsRedacted(t *testing.T) {
	forged := func(e *env) string {
		return `{"version": 1, "jobs": [
  {"id": "a0000001", "name": "call ` + e.secret + `", "target": "chat-a", "schedule": "0 * * * *", "prompt": "use ` + e.secret + `", "script": "echo ` + e.secret + `", "created": "2026-05-01T00:00:00Z"}
]}`
	}
	e := newEnv(t, setup{file: forged})
	args, err := json.Marshal(map[string]string{
		"schedule": "0 9 * * *", "name": "job " + e.secret, "prompt": "say " + e.secret, "script": "echo " + e.secret,
	})
	if err != nil {
		t.Fatal(err)
	}
	if r := e.callTool(t, "schedule_job", "chat-a", string(args)); r.IsError {
		t.Fatalf("schedule_job failed: %s", agent.TextOf(r.Content))
	}
	data, err := os.ReadFile(filepath.Join(e.dir, "jobs.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The file is JSON, which may escape some of the secret's bytes: the
	// redactor knows that form too.
	if strings.Contains(string(data), e.secret) || e.s.redactor().Redact(string(data)) != string(data) {
		t.Errorf("jobs.json (%d bytes) holds the secret (%d bytes)", len(data), len(e.secret))
	}
	if n := strings.Count(string(data), redactor.Token); n != 6 {
		t.Errorf("jobs.json holds %d redaction tokens, want 6 (name, prompt, script of two jobs)", n)
	}
	for _, j := range e.s.All() {
		if strings.Contains(j.Name+j.Prompt+j.Script, e.secret) && j.ID != "a0000001" {
			t.Errorf("the job created through schedule_job holds the secret in memory")
		}
	}
}
