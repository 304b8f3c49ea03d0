package chat

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/openai"
	"github.com/volcanic/telegram-agent/internal/openaitest"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// TestProviderFailuresInTheChat runs the OpenAI adapter against faults of
// the fake server: what the chat shows for a cut stream, a fallback model
// and a provider that stays down.
func TestProviderFailuresInTheChat(t *testing.T) {
	reset := openaitest.Text("never shown").Fail(openaitest.FailReset, 0)
	tests := []struct {
		name     string
		script   []openaitest.Response
		fallback []string
		want     []string
		// never are texts no message may show.
		never []string
	}{
		{
			name: "a stream cut after text streams again",
			script: []openaitest.Response{
				openaitest.Text("a broken first answer that goes on").Fail(openaitest.FailReset, 3),
				openaitest.Text("the whole answer"),
			},
			want:  []string{"the whole answer"},
			never: []string{"broken", "⚠️"},
		},
		{
			name:     "the primary stays down: the fallback answers, with a notice",
			script:   []openaitest.Response{openaitest.StatusError(503, "overloaded"), reset, openaitest.Text("from the backup")},
			fallback: []string{"backup-model"},
			want:     []string{"ℹ️ test-model is unavailable right now; backup-model answers instead.", "from the backup"},
			never:    []string{"⚠️"},
		},
		{
			name:   "down for good: the kind of problem, no address",
			script: []openaitest.Response{reset, reset},
			want:   []string{"⚠️ The model provider can't be reached right now."},
			never:  []string{"http", "127.0.0.1", "reset by peer"},
		},
		{
			name: "cut twice",
			script: []openaitest.Response{
				openaitest.Text("first try of an answer").Fail(openaitest.FailAbort, 3),
				openaitest.Text("second try of an answer").Fail(openaitest.FailAbort, 3),
			},
			want:  []string{"⚠️ The model's answer was cut off twice"},
			never: []string{"http", "unexpected EOF"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := openaitest.New(t, openaitest.WithChunkSize(4), openaitest.WithScript(tt.script...))
			provider := openai.NewProvider(openai.Config{APIKey: openAIKey, BaseURL: srv.URL(), MaxRetries: 1,
				RetryBaseDelay: 5 * time.Millisecond, FallbackModels: tt.fallback})
			h := newHarness(t, harnessConfig{provider: provider})
			h.tg.SendText(userID, userID, "hi")
			last := tt.want[len(tt.want)-1]
			msgs := h.waitMessages(userID, "the answer", func(msgs []telegramtest.Message) bool {
				for _, m := range msgs {
					if strings.Contains(m.Visible, last) {
						return true
					}
				}
				return false
			})
			var shown []string
			for _, m := range msgs {
				shown = append(shown, m.Visible)
			}
			all := strings.Join(shown, "\n")
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("the chat lacks %q; it shows %s", w, describe(msgs))
				}
			}
			for _, n := range tt.never {
				if strings.Contains(all, n) {
					t.Errorf("the chat shows %q; it shows %s", n, describe(msgs))
				}
			}
			if n := srv.Pending(); n != 0 {
				t.Errorf("%d scripted responses were not asked for", n)
			}
		})
	}
}

// TestCutStreamRestartsThePreview cuts the answer stream after a draft
// showed its text: the preview of the answer sent again shows only the new
// text, never the old one before it.
func TestCutStreamRestartsThePreview(t *testing.T) {
	var h *harness
	shown := func(text string) func() bool {
		return func() bool {
			for _, r := range h.tg.RequestsFor("sendMessageDraft") {
				if strings.Contains(r.Params["text"], text) {
					return true
				}
			}
			return false
		}
	}
	waitShown := func(ctx context.Context, text string) error {
		wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		return h.tg.WaitUntil(wctx, shown(text))
	}
	faux := agenttest.NewFauxProvider(
		agenttest.FauxFunc(func(ctx context.Context, _ agent.Request, onText func(string)) (agent.Response, error) {
			onText("OLD-PART of a first try ")
			if err := waitShown(ctx, "OLD-PART"); err != nil {
				return agent.Response{}, err
			}
			return agent.Response{}, fmt.Errorf("%w: connection reset", agent.ErrStreamInterrupted)
		}),
		agenttest.FauxFunc(func(ctx context.Context, _ agent.Request, onText func(string)) (agent.Response, error) {
			onText("NEW-ANSWER streamed again")
			if err := waitShown(ctx, "NEW-ANSWER"); err != nil {
				return agent.Response{}, err
			}
			return agent.Response{Text: "NEW-ANSWER streamed again"}, nil
		}),
	)
	h = newHarness(t, harnessConfig{provider: faux})
	h.tg.SendText(userID, userID, "hi")
	h.waitText(userID, "NEW-ANSWER streamed again")
	for _, r := range h.tg.RequestsFor("sendMessageDraft") {
		if text := r.Params["text"]; strings.Contains(text, "NEW-ANSWER") && strings.Contains(text, "OLD-PART") {
			t.Errorf("a preview of the new answer still shows the cut one: %q", text)
		}
	}
	for _, m := range h.tg.Messages(userID) {
		if strings.Contains(m.Visible, "OLD-PART") {
			t.Errorf("a message shows the cut answer: %q", m.Visible)
		}
	}
}
