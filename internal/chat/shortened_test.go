package chat

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/agenttest"
)

// namedJobs is a job board with one job of the given name.
type namedJobs struct{ name string }

func (j namedJobs) ListJobs(string) []JobView {
	return []JobView{{ID: "j1", Name: j.name, Schedule: "0 9 * * *", Next: time.Date(2030, 1, 2, 8, 0, 0, 0, time.UTC)}}
}

func (namedJobs) CancelJob(string, string) error { return nil }

// A text the agent or a user wrote is redacted whole before the chat cuts
// it short (a button's label, an argument echoed back): cut first, a part
// of a secret's base64 form could be left that the sender's redaction of
// the whole message no longer recognises.
func TestCutTextsAreRedactedBeforeTheCut(t *testing.T) {
	const secret = "planted-secret-0f9e8d7c6b5a49382716"
	encoded := base64.StdEncoding.EncodeToString([]byte(secret))
	// Letters, then the encoded secret, so that the cut (30 runes for a
	// button, 60 for an argument) falls inside it.
	text := func(letters int) string { return strings.Repeat("w", letters) + encoded }
	tests := []struct {
		name, send, wait string
		job              string
	}{
		{name: "the cancel button of /jobs", send: "/jobs", wait: "every day at 09:00", job: text(10)},
		{name: "an unknown time zone", send: "/tz " + text(40), wait: "is not an IANA time zone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := harnessConfig{provider: agenttest.NewFauxProvider(), secrets: []string{secret}}
			if tt.job != "" {
				cfg.opts = []Option{WithJobBoard(namedJobs{name: tt.job})}
			}
			h := newHarness(t, cfg)
			h.tg.SendText(userID, userID, tt.send)
			m := h.waitText(userID, tt.wait)
			for _, shown := range []string{m.Visible, m.ReplyMarkup} {
				for i := 0; i+8 <= len(encoded); i++ {
					if strings.Contains(shown, encoded[i:i+8]) {
						t.Fatalf("the message (%d bytes) holds 8 bytes of the secret's base64 form (%d bytes) from offset %d", len(shown), len(encoded), i)
					}
				}
			}
		})
	}
}
