package chat

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agent/tools"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/chat/botapi"
	"github.com/volcanic/telegram-agent/internal/hardening"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/sandbox"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

func TestMain(m *testing.M) {
	hardening.Apply(false, slog.New(slog.DiscardHandler))
	os.Exit(m.Run())
}

const (
	userID     = int64(1001)
	strangerID = int64(2002)
	// openAIKey is a configured secret besides the bot token.
	openAIKey = "sk-test-0123456789abcdef"
)

// harness is a chat host running against a fake Bot API server.
type harness struct {
	t         *testing.T
	tg        *telegramtest.Server
	host      *Host
	agent     *agent.Agent
	agentDir  string
	workspace string
	cancel    context.CancelFunc
	done      chan error
	stopOnce  sync.Once
}

type harnessConfig struct {
	provider agent.Provider
	// environ is the environment agent processes inherit from.
	environ map[string]string
	opts    []Option
	tgOpts  []telegramtest.Option
	// agentDir reuses a state directory (restart tests).
	agentDir, workspace string
	tg                  *telegramtest.Server
	// agentOpts are added to the agent's options.
	agentOpts []agent.Option
	// models are the models a chat may switch to (Config.Models).
	models []string
	// secrets are more secret values, beside the token and openAIKey.
	secrets []string
	// silentToStrangers is Config.SilentToStrangers.
	silentToStrangers bool
	// view gives the host a sandbox view of the workspace (Config.View).
	view bool
	// toolStatus is Config.ToolStatus ("": the default, last).
	toolStatus string
}

// newHarness starts a host whose agent runs provider, with the built-in
// tools and a spawn policy over cfg.environ (never the test's own).
func newHarness(t *testing.T, cfg harnessConfig) *harness {
	t.Helper()
	tg := cfg.tg
	if tg == nil {
		tg = telegramtest.New(t, cfg.tgOpts...)
	}
	if cfg.agentDir == "" {
		cfg.agentDir = t.TempDir()
	}
	if cfg.workspace == "" {
		cfg.workspace = t.TempDir()
	}
	environ := cfg.environ
	if environ == nil {
		environ = map[string]string{"PATH": os.Getenv("PATH"), "HOME": cfg.workspace}
	}
	secrets := append([]string{tg.Token(), openAIKey}, cfg.secrets...)
	popts := spawnpolicy.DefaultOptions()
	popts.HardenHostProcess = false
	popts.SecretValues = secrets
	logger := testLogger(t)
	policy, err := spawnpolicy.New(popts, logger, func() map[string]string { return environ })
	if err != nil {
		t.Fatalf("spawnpolicy.New: %v", err)
	}
	red := redactor.New(secrets)
	ag, err := agent.New(cfg.provider, policy, red, append([]agent.Option{
		agent.WithLogger(logger),
		agent.WithModel("test-model"),
		agent.WithWorkspace(cfg.workspace),
		agent.WithSessionDir(filepath.Join(cfg.agentDir, "sessions")),
		agent.WithTools(tools.All(tools.WithKillGrace(200 * time.Millisecond))...),
		agent.WithAbortGrace(2 * time.Second),
	}, cfg.agentOpts...)...)
	if err != nil {
		t.Fatalf("agent.New: %v", err)
	}
	if err := ag.Start(context.Background()); err != nil {
		t.Fatalf("agent.Start: %v", err)
	}
	opts := append([]Option{
		WithLogger(logger),
		withRetryPolicy(botapi.RetryPolicy{Attempts: 6, BaseDelay: 20 * time.Millisecond, MaxDelay: 5 * time.Second}),
		withEditInterval(50 * time.Millisecond),
		withPollTimeout(time.Second),
		withShutdownGrace(5 * time.Second),
	}, cfg.opts...)
	var view *sandbox.View
	if cfg.view {
		view = &sandbox.View{Workspace: cfg.workspace, Temp: t.TempDir()}
	}
	host, err := New(Config{
		Token: tg.Token(), APIURL: tg.URL(), AllowedUserIDs: []int64{userID},
		Agent: ag, Redactor: red, AgentDir: cfg.agentDir, WorkspaceDir: cfg.workspace, Model: "test-model",
		Models: cfg.models, SilentToStrangers: cfg.silentToStrangers, View: view, ToolStatus: cfg.toolStatus,
	}, opts...)
	if err != nil {
		t.Fatalf("chat.New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &harness{t: t, tg: tg, host: host, agent: ag, agentDir: cfg.agentDir, workspace: cfg.workspace, cancel: cancel, done: make(chan error, 1)}
	go func() { h.done <- host.Run(ctx) }()
	t.Cleanup(h.stop)
	return h
}

// stop shuts the host down and waits for it.
func (h *harness) stop() {
	h.stopOnce.Do(func() {
		h.cancel()
		select {
		case err := <-h.done:
			if err != nil {
				h.t.Errorf("Run: %v", err)
			}
		case <-time.After(15 * time.Second):
			h.t.Errorf("Run did not return within 15s of the cancellation")
		}
		h.agent.Close()
	})
}

// waitMessages waits until the bot's messages in chat satisfy ok, checking
// after every request the fake server receives (15 s hang guard).
func (h *harness) waitMessages(chatID int64, what string, ok func([]telegramtest.Message) bool) []telegramtest.Message {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var msgs []telegramtest.Message
	if err := h.tg.WaitUntil(ctx, func() bool { msgs = h.tg.Messages(chatID); return ok(msgs) }); err != nil {
		h.t.Fatalf("waiting for %s: %v; the chat has %d messages: %s", what, err, len(msgs), describe(msgs))
	}
	return msgs
}

// waitText waits for a bot message in chat whose visible text contains s.
func (h *harness) waitText(chatID int64, s string) telegramtest.Message {
	h.t.Helper()
	var found telegramtest.Message
	h.waitMessages(chatID, strconv.Quote(s), func(msgs []telegramtest.Message) bool {
		for _, m := range msgs {
			if strings.Contains(m.Visible, s) {
				found = m
				return true
			}
		}
		return false
	})
	return found
}

// describe lists the visible texts of msgs for a failure message, each
// test secret replaced by its name, never shown.
func describe(msgs []telegramtest.Message) string {
	hide := strings.NewReplacer(telegramtest.DefaultToken, "<the bot token>", openAIKey, "<OPENAI_API_KEY>")
	var parts []string
	for _, m := range msgs {
		v := hide.Replace(m.Visible)
		if len(v) > 80 {
			v = v[:80] + "…"
		}
		parts = append(parts, strconv.Quote(v))
	}
	return strings.Join(parts, ", ")
}

// waitFor polls cond for up to 15 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// lastToolText returns the text of the request's last tool message.
func lastToolText(req agent.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == agent.RoleTool {
			return agent.TextOf(req.Messages[i].Content)
		}
	}
	return ""
}

// heldChat starts a host with cfg whose model answers no turn until it is
// cancelled, and holds the user's chat with a running turn ("hold the
// chat"), so that what the test sends next waits behind it.
func heldChat(t *testing.T, cfg harnessConfig) *harness {
	t.Helper()
	blocked := agenttest.NewFauxProvider(agenttest.FauxFunc(waitForCancel))
	cfg.provider = blocked
	h := newHarness(t, cfg)
	h.tg.SendText(userID, userID, "hold the chat")
	waitFor(t, "the turn to start", func() bool { return len(blocked.Requests()) == 1 })
	return h
}

// waitForCancel is a model turn that never answers: it returns once the
// turn is stopped (a /stop, or the host stopped as a crash would).
func waitForCancel(ctx context.Context, _ agent.Request, _ func(string)) (agent.Response, error) {
	<-ctx.Done()
	return agent.Response{}, ctx.Err()
}

// ranUserText answers with "ran: " and the request's last user text, so a
// test sees which message a turn ran.
func ranUserText(_ context.Context, req agent.Request, _ func(string)) (agent.Response, error) {
	return agent.Response{Text: "ran: " + lastUserText(req)}, nil
}

// lastUserText returns the text of the request's last user message.
func lastUserText(req agent.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == agent.RoleUser {
			return agent.TextOf(req.Messages[i].Content)
		}
	}
	return ""
}

// echoTool answers with the last tool result, in a code block.
func echoTool() agenttest.FauxResponse {
	return agenttest.FauxFunc(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		text := "The tool said:\n```\n" + lastToolText(req) + "\n```"
		onText(text)
		return agent.Response{Text: text}, nil
	})
}

// testLogger logs to the test at Debug, through no redactor: tests assert
// on what the host itself sends.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	if testing.Verbose() {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}
