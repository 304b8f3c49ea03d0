package chat

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/openai"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func bufferLogger(b *syncBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func TestTurnErrorWording(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"bad key", &agent.ProviderError{StatusCode: 401, Message: "Incorrect API key provided: sk-proj-****abcd."},
			"⚠️ The model provider rejected the bot's API key — the operator should check OPENAI_API_KEY."},
		{"forbidden", fmt.Errorf("wrapped: %w", &agent.ProviderError{StatusCode: 403, Message: "no"}),
			"⚠️ The model provider rejected the bot's API key — the operator should check OPENAI_API_KEY."},
		{"rate limited", &agent.ProviderError{StatusCode: 429, Message: "slow down"},
			"⚠️ The model provider is rate-limiting; try again in a minute."},
		{"server error", &agent.ProviderError{StatusCode: 503, Message: "overloaded"},
			"⚠️ The model provider is having trouble (HTTP 503); try again shortly."},
		{"timeout", &agent.ProviderError{Message: "no data from the model provider for 2m0s", Err: context.DeadlineExceeded},
			"⚠️ The model provider can't be reached right now."},
		{"refused", fmt.Errorf("model provider: %w", &url.Error{Op: "Post", URL: "http://127.0.0.1:9/v1/chat/completions",
			Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}),
			"⚠️ The model provider can't be reached right now."},
		{"no such host", fmt.Errorf("model provider: %w", &url.Error{Op: "Post", URL: "https://nowhere.invalid/v1",
			Err: &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "nowhere.invalid", IsNotFound: true}}}),
			"⚠️ The model provider can't be reached right now."},
		{"tls", fmt.Errorf("model provider: %w", &url.Error{Op: "Post", URL: "https://e.com/v1", Err: &tls.CertificateVerificationError{}}),
			"⚠️ The model provider can't be reached right now."},
		{"too long", &agent.ProviderError{StatusCode: 400, Code: "context_length_exceeded", Message: "maximum context length"},
			"⚠️ The conversation no longer fits the model's context window. Send /compact to summarise the older messages, or /new to start a fresh session."},
		{"other", errors.New("agent: something odd\nwith a second line"), "⚠️ The turn failed: agent: something odd"},
		{"other with an address", errors.New("agent: fetching https://internal.example:8443/v1/x failed"), "⚠️ The turn failed: agent: fetching (address) failed"},
		{"cut twice", fmt.Errorf("%w: %w", agent.ErrStreamInterrupted, &agent.ProviderError{Message: "ended early", Err: io.ErrUnexpectedEOF}),
			"⚠️ The model's answer was cut off twice (the connection dropped); send your message again."},
		{"unreadable answer", &agent.ProviderError{Message: "the answer could not be read (invalid JSON)", Err: &json.SyntaxError{}},
			"⚠️ The model provider's answer broke off or could not be read; try again."},
		{"refused", &agent.ProviderError{StatusCode: 404, Message: "The model `x` does not exist. See https://platform.openai.com/docs/models"},
			"⚠️ The model provider refused the request (HTTP 404): The model `x` does not exist. See (address)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := turnError(tt.err); got != tt.want {
				t.Errorf("turnError = %q, want %q", got, tt.want)
			}
		})
	}
}

// A provider that rejects the key: the chat gets plain words, not the
// provider's text, and the log has the failure at Error with the scope.
func TestFailedTurnIsWordedAndLogged(t *testing.T) {
	faux := agenttest.NewFauxProvider(agenttest.FauxError(&agent.ProviderError{StatusCode: 401, Message: "Incorrect API key provided: sk-proj-****abcd."}))
	var logs syncBuffer
	h := newHarness(t, harnessConfig{provider: faux, opts: []Option{WithLogger(bufferLogger(&logs))}})
	h.tg.SendText(userID, userID, "hi")
	h.waitText(userID, "rejected the bot's API key")
	for _, m := range h.tg.Messages(userID) {
		if strings.Contains(m.Visible, "Incorrect API key") {
			t.Errorf("the chat shows the provider's raw error: %q", m.Visible)
		}
	}
	waitFor(t, "the failure in the log", func() bool {
		l := logs.String()
		return strings.Contains(l, "level=ERROR") && strings.Contains(l, `msg="turn failed"`) && strings.Contains(l, "scope=1001")
	})
}

// An unreachable provider, through the real adapter.
func TestUnreachableProvider(t *testing.T) {
	provider := openai.NewProvider(openai.Config{APIKey: openAIKey, BaseURL: "http://127.0.0.1:9/v1", MaxRetries: -1})
	h := newHarness(t, harnessConfig{provider: provider})
	h.tg.SendText(userID, userID, "hi")
	m := h.waitText(userID, "can't be reached")
	if strings.Contains(m.Visible, "dial tcp") {
		t.Errorf("the chat shows the raw error: %q", m.Visible)
	}
}

// An empty answer says so, with what to do.
func TestEmptyAnswer(t *testing.T) {
	h := newHarness(t, harnessConfig{provider: agenttest.NewFauxProvider(agenttest.FauxText(""))})
	h.tg.SendText(userID, userID, "hi")
	h.waitText(userID, "The model returned an empty answer — try again, or /new if this keeps happening.")
}

// /new during a turn, then /stop: the turn stops and the new session
// starts at once (the hint of /new's reply holds).
func TestStopKeepsAQueuedNew(t *testing.T) {
	faux := agenttest.NewFauxProvider(agenttest.FauxFunc(waitForCancel))
	faux.Handle(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		return agent.Response{Text: fmt.Sprintf("messages: %d", len(req.Messages))}, nil
	})
	h := newHarness(t, harnessConfig{provider: faux})
	h.tg.SendText(userID, userID, "one")
	waitFor(t, "the first turn", func() bool { return len(faux.Requests()) == 1 })
	h.tg.SendText(userID, userID, "/new")
	h.waitText(userID, "A new session will start after the current turn")
	h.tg.SendText(userID, userID, "queued message")
	h.waitText(userID, "Queued")
	h.tg.SendText(userID, userID, "/stop")
	h.waitText(userID, "dropped 1 queued message.")
	h.waitText(userID, "New session started")
	h.tg.SendText(userID, userID, "two")
	h.waitText(userID, "messages: 1")
}

// The Stop button stops the tool (shown as stopped, not failed) and says
// so in the chat.
func TestStopButtonShowsStopped(t *testing.T) {
	faux := agenttest.NewFauxProvider(agenttest.FauxToolCalls(agenttest.FauxCall("bash", `{"command":"sleep 1000"}`)))
	h := newHarness(t, harnessConfig{provider: faux})
	h.tg.SendText(userID, userID, "sleep")
	status, data := h.waitStatus(userID, "bash: sleep 1000")
	h.tg.SendCallback(userID, userID, status.ID, data)
	h.waitText(userID, "⏹ Stopped.")
	h.waitMessages(userID, "the status to show the stop", func(msgs []telegramtest.Message) bool {
		for _, m := range msgs {
			if m.ID == status.ID {
				return strings.HasPrefix(m.Visible, "⏹ bash: sleep 1000") && !strings.Contains(m.ReplyMarkup, callbackStop)
			}
		}
		return false
	})
}

// A failed command shows its exit code and the last line it printed; a
// call with broken arguments shows why.
func TestToolStatusShowsFailures(t *testing.T) {
	faux := agenttest.NewFauxProvider(
		agenttest.FauxToolCalls(agenttest.FauxCall("bash", `{"command":"echo no such directory >&2; exit 3"}`)),
		agenttest.FauxText("it failed"),
		agenttest.FauxToolCalls(agenttest.FauxCall("bash", `{"command": `)),
		agenttest.FauxText("broken"),
	)
	h := newHarness(t, harnessConfig{provider: faux})
	h.tg.SendText(userID, userID, "fail")
	h.waitText(userID, "it failed")
	h.waitText(userID, "❌ bash (exit 3): echo no such directory >&2; exit 3\n   no such directory")
	h.tg.SendText(userID, userID, "break")
	h.waitText(userID, "broken")
	h.waitText(userID, "❌ bash\n   Invalid arguments for tool")
}
