package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/backoff"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
	"github.com/volcanic/telegram-agent/internal/tmpfstest"
	"github.com/volcanic/telegram-agent/internal/usage"
)

// The tests here run the host with its agent dir on a real tmpfs that
// fills up (tmpfstest) and is freed again.

// recordingSleep is a poll back-off that records its delays and waits a
// moment only, so that a test sees many retries quickly.
type recordingSleep struct {
	mu     sync.Mutex
	delays []time.Duration
}

func (r *recordingSleep) sleep(ctx context.Context, d time.Duration) bool {
	r.mu.Lock()
	r.delays = append(r.delays, d)
	r.mu.Unlock()
	return backoff.Sleep(ctx, 5*time.Millisecond)
}

func (r *recordingSleep) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.delays)
}

// fresh reports whether the heartbeat in dir was written since 1970 (an
// episode sets its time to 1970) and no marker of an unwritable agent dir
// is there: what the healthcheck reads.
func fresh(dir string) bool {
	info, err := os.Stat(filepath.Join(dir, HeartbeatFile))
	return err == nil && info.ModTime().After(time.Unix(0, 0)) && !exists(filepath.Join(dir, UnwritableFile))
}

// unhealthy reports whether the heartbeat in dir is from 1970 and the
// marker of an unwritable agent dir is there.
func unhealthy(dir string) bool {
	info, err := os.Stat(filepath.Join(dir, HeartbeatFile))
	return err == nil && !info.ModTime().After(time.Unix(0, 0)) && exists(filepath.Join(dir, UnwritableFile))
}

// warnings returns the records at Warn or above.
func warnings(rec *logRecorder) []logRecord {
	return rec.find(func(r logRecord) bool { return r.Level >= slog.LevelWarn })
}

// answerer answers every message with "answer: " and its text.
func answerer() *agenttest.FauxProvider {
	p := agenttest.NewFauxProvider()
	p.Handle(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		text := lastUserText(req)
		if _, after, ok := strings.Cut(text, "\n"); ok {
			text = after
		}
		return agent.Response{Text: "answer: " + text}, nil
	})
	return p
}

// TestPollingOnFullDisk sends a message while the agent dir is full: its
// update is not acknowledged (the same offset is asked for again, after a
// growing back-off), the host logs one Error for the whole episode, not
// one per retry, and the healthcheck's files say unhealthy; once space is
// freed the message is answered once, the host logs one Info, and the
// heartbeat is back.
func TestPollingOnFullDisk(t *testing.T) {
	d := tmpfstest.Mount(t, 1<<20)
	rec := newLogRecorder()
	backoff := &recordingSleep{}
	h := newHarness(t, harnessConfig{provider: answerer(), agentDir: d.Dir,
		opts: []Option{WithLogger(rec.logger()), withPollSleep(backoff.sleep)}})
	waitFor(t, "the first heartbeat", func() bool { return fresh(d.Dir) })

	d.Fill()
	rec.wait(t, "the episode's error", isLog(slog.LevelError, "the agent dir cannot be written"))
	m := h.tg.SendText(userID, userID, "hello on a full disk")
	waitFor(t, "five tries of the batch", func() bool { return backoff.count() >= 5 })
	polls := h.tg.RequestsFor("getUpdates")
	last := polls[len(polls)-1].Int("offset")
	if last > int64(m.ID) && polls[len(polls)-2].Int("offset") != last {
		t.Errorf("the offset moved on while the journal could not be written")
	}
	if got := h.tg.Messages(userID); len(got) != 0 {
		t.Errorf("the bot answered while its journal could not be written: %s", describe(got))
	}
	if w := warnings(rec); len(w) != 1 || w[0].Level != slog.LevelError || !strings.Contains(w[0].Message, "cannot be written") {
		t.Errorf("while the disk is full the log has %d warnings and errors, want one Error for the episode:\n%s", len(w), rec.Text())
	}
	if !unhealthy(d.Dir) {
		t.Errorf("while the disk is full the heartbeat is not from 1970 or there is no %s", UnwritableFile)
	}
	backoff.mu.Lock()
	for i, delay := range backoff.delays {
		if lo, hi := journalRetry.Bounds(i); delay < lo || delay > hi || delay > journalRetryMax {
			t.Errorf("retry %d waited %v, want [%v, %v], at most %v", i, delay, lo, hi, journalRetryMax)
		}
	}
	backoff.mu.Unlock()

	d.Drain()
	h.waitText(userID, "answer: hello on a full disk")
	rec.wait(t, "the end of the episode", isLog(slog.LevelInfo, "can be written again"))
	waitFor(t, "a fresh heartbeat", func() bool { return fresh(d.Dir) })
	h.stop()
	answers := 0
	for _, msg := range h.tg.Messages(userID) {
		if strings.Contains(msg.Visible, "answer: hello") {
			answers++
		}
	}
	if answers != 1 {
		t.Errorf("the message was answered %d times, want once: %s", answers, describe(h.tg.Messages(userID)))
	}
	if w := warnings(rec); len(w) != 1 {
		t.Errorf("the log has %d warnings and errors, want the episode's one:\n%s", len(w), rec.Text())
	}
}

// TestHeartbeatOnFullDisk fills the agent dir of an idle bot: nothing
// waits to be journaled, yet the healthcheck must see that nothing can be
// written (setting a file's time needs no space; the heartbeat is written
// with content so that it fails), and see it healthy again after.
func TestHeartbeatOnFullDisk(t *testing.T) {
	d := tmpfstest.Mount(t, 1<<20)
	rec := newLogRecorder()
	newHarness(t, harnessConfig{provider: answerer(), agentDir: d.Dir, opts: []Option{WithLogger(rec.logger())}})
	waitFor(t, "the first heartbeat", func() bool { return fresh(d.Dir) })
	d.Fill()
	rec.wait(t, "the episode's error", isLog(slog.LevelError, "the agent dir cannot be written"))
	if !unhealthy(d.Dir) {
		t.Errorf("on a full disk the heartbeat is not from 1970 or there is no %s", UnwritableFile)
	}
	d.Drain()
	rec.wait(t, "the end of the episode", isLog(slog.LevelInfo, "can be written again"))
	if !fresh(d.Dir) {
		t.Errorf("after the disk was freed the heartbeat is from 1970 or %s is left", UnwritableFile)
	}
	if w := warnings(rec); len(w) != 1 {
		t.Errorf("the log has %d warnings and errors, want the episode's one:\n%s", len(w), rec.Text())
	}
}

// TestUnwritableMarkerOfEarlierRun starts the host where an earlier run,
// killed while the disk was full, left its marker: the healthcheck must
// not stay unhealthy once this run writes its heartbeat.
func TestUnwritableMarkerOfEarlierRun(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, UnwritableFile), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	newHarness(t, harnessConfig{provider: answerer(), agentDir: dir})
	waitFor(t, "a fresh heartbeat and no marker", func() bool { return fresh(dir) })
}

// TestTranscriptOnFullDisk fills the disk while the model answers: the
// answer cannot be saved to the transcript, and the user is told so in
// words, without the error's paths; the next message after space is freed
// is answered.
func TestTranscriptOnFullDisk(t *testing.T) {
	d := tmpfstest.Mount(t, 1<<20)
	rec := newLogRecorder()
	p := agenttest.NewFauxProvider()
	long := strings.Repeat("a long answer ", 800)
	p.Enqueue(agenttest.FauxFunc(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		d.Fill()
		return agent.Response{Text: long}, nil
	}), agenttest.FauxText("the second answer"))
	h := newHarness(t, harnessConfig{provider: p, agentDir: d.Dir, opts: []Option{WithLogger(rec.logger())}})
	m := h.tg.SendText(userID, userID, "first")
	told := h.waitText(userID, "could not be saved")
	if told.ReplyTo != m.ID || !strings.Contains(told.Visible, "disk is full") || strings.Contains(told.Visible, d.Dir) {
		t.Errorf("the user was told %q (in reply to %d), want the disk-full note in reply to %d, without paths", told.Visible, told.ReplyTo, m.ID)
	}
	rec.wait(t, "the episode's error", isLog(slog.LevelError, "the agent dir cannot be written"))
	d.Drain()
	h.tg.SendText(userID, userID, "second")
	h.waitText(userID, "the second answer")
	rec.wait(t, "the end of the episode", isLog(slog.LevelInfo, "can be written again"))
	if w := warnings(rec); len(w) != 1 {
		t.Errorf("the log has %d warnings and errors, want the episode's one:\n%s", len(w), rec.Text())
	}
}

// TestStorageErrorWords: a turn that failed because its transcript could
// not be written is told and logged as that, never as an unreachable
// model provider (a file error wraps a syscall.Errno, which is a
// net.Error too).
func TestStorageErrorWords(t *testing.T) {
	tests := []struct {
		name            string
		err             error
		wantText        string
		wantOutcome     string
		wantUnreachable bool
	}{
		{"a full disk", fmt.Errorf("agent: transcript: %w", &fs.PathError{Op: "write", Path: "/data/sessions/chat_1.jsonl", Err: syscall.ENOSPC}),
			"disk is full", "failed: agent dir not writable", false},
		{"a read-only disk", fmt.Errorf("agent: transcript: %w", &fs.PathError{Op: "open", Path: "/data/sessions/chat_1.jsonl", Err: syscall.EROFS}),
			"cannot be written", "failed: agent dir not writable", false},
		{"another file error", fmt.Errorf("agent: %w", &fs.PathError{Op: "open", Path: "/data/x", Err: syscall.EACCES}),
			"The turn failed", "failed", false},
		{"a refused connection", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED},
			"can't be reached", "failed: provider unreachable", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := turnError(tt.err); !strings.Contains(got, tt.wantText) || strings.Contains(got, "/data/sessions") {
				t.Errorf("turnError = %q, want it to say %q, without the path", got, tt.wantText)
			}
			if got := turnOutcome(agent.TurnResult{}, tt.err); got != tt.wantOutcome {
				t.Errorf("turnOutcome = %q, want %q", got, tt.wantOutcome)
			}
			if got := unreachable(tt.err); got != tt.wantUnreachable {
				t.Errorf("unreachable = %v, want %v", got, tt.wantUnreachable)
			}
		})
	}
}

// TestUsageRecorderOnFullDisk records usage while the usage log cannot be
// written: one Error for the episode, not one per model response, and one
// Info once it is written again; what was not written still counts.
func TestUsageRecorderOnFullDisk(t *testing.T) {
	d := tmpfstest.Mount(t, 1<<20)
	store, err := usage.Open(filepath.Join(d.Dir, "usage.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	rec := newLogRecorder()
	record := UsageRecorder(store, rec.logger())
	report := agent.UsageReport{SessionID: "chat_1001", Scope: itoa64(userID), Model: "m", Usage: agent.Usage{PromptTokens: 10, CompletionTokens: 1}}
	d.Fill()
	for range 3 {
		record(t.Context(), report)
	}
	if w := warnings(rec); len(w) != 1 || w[0].Level != slog.LevelError {
		t.Errorf("three failed records logged %d warnings and errors, want one Error:\n%s", len(w), rec.Text())
	}
	d.Drain()
	record(t.Context(), report)
	rec.wait(t, "the usage log written again", isLog(slog.LevelInfo, "usage log is written again"))
	if got := store.Today(itoa64(userID), time.UTC).Sum().Prompt; got != 40 {
		t.Errorf("today's prompt tokens %d, want 40: the records not written still count", got)
	}
}

// TestWebhookOnFullDisk delivers an update by webhook while the agent dir
// is full: it is answered 503, so that Telegram delivers it again, until
// space is freed; then it runs once, and the episode had one Error.
func TestWebhookOnFullDisk(t *testing.T) {
	d := tmpfstest.Mount(t, 1<<20)
	rec := newLogRecorder()
	tg := telegramtest.New(t)
	h := webhookHarness(t, tg, testWebhook(t), harnessConfig{provider: answerer(), agentDir: d.Dir, opts: []Option{WithLogger(rec.logger())}})
	waitFor(t, "the first heartbeat", func() bool { return fresh(d.Dir) })
	d.Fill()
	m := tg.SendText(userID, userID, "hello by webhook")
	refused := func() int {
		n := 0
		for _, dl := range tg.Deliveries() {
			if dl.Status == http.StatusServiceUnavailable {
				n++
			}
		}
		return n
	}
	waitFor(t, "three deliveries answered 503", func() bool { return refused() >= 3 })
	if got := tg.Messages(userID); len(got) != 0 {
		t.Errorf("the bot answered while its journal could not be written: %s", describe(got))
	}
	if !unhealthy(d.Dir) {
		t.Errorf("while the disk is full the heartbeat is not from 1970 or there is no %s", UnwritableFile)
	}
	d.Drain()
	h.waitText(userID, "answer: hello by webhook")
	rec.wait(t, "the end of the episode", isLog(slog.LevelInfo, "can be written again"))
	h.stop()
	answers := 0
	for _, msg := range tg.Messages(userID) {
		if msg.ReplyTo == m.ID || strings.Contains(msg.Visible, "answer: hello") {
			answers++
		}
	}
	if answers != 1 {
		t.Errorf("the update was answered %d times, want once: %s", answers, describe(tg.Messages(userID)))
	}
	errs := rec.find(func(r logRecord) bool { return r.Level >= slog.LevelError })
	others := rec.find(func(r logRecord) bool {
		return r.Level == slog.LevelWarn && !strings.Contains(r.Message, "the webhook is not healthy")
	})
	if len(errs) != 1 || len(others) != 0 {
		t.Errorf("the log has %d errors and %d other warnings, want the episode's one error:\n%s", len(errs), len(others), rec.Text())
	}
}

// TestSessionOpenOnFullDisk reopens, on a full disk, a session whose
// transcript ends with a tool call without its result (a crash in the
// tool): the repair cannot be written, and the chat is told in words,
// without the paths.
func TestSessionOpenOnFullDisk(t *testing.T) {
	d := tmpfstest.Mount(t, 1<<20)
	sessions := filepath.Join(d.Dir, "sessions")
	if err := os.MkdirAll(sessions, 0o700); err != nil {
		t.Fatal(err)
	}
	// The transcript fills its page exactly: the repair needs a new one.
	page := os.Getpagesize()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	call := transcriptLine(t, map[string]any{"type": "message", "message": agent.Message{Role: agent.RoleAssistant, Time: at,
		ToolCalls: []agent.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"true"}`}}}})
	var data []byte
	for pad := 0; len(data) != page; pad++ {
		if len(data) > page {
			t.Fatalf("no padding makes the transcript %d bytes", page)
		}
		user := transcriptLine(t, map[string]any{"type": "message", "message": agent.Message{Role: agent.RoleUser, Time: at,
			Content: []agent.Content{agent.Text(strings.Repeat("x", pad))}}})
		data = append(user, call...)
	}
	if err := os.WriteFile(filepath.Join(sessions, "chat_1001.jsonl"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, harnessConfig{provider: answerer(), agentDir: d.Dir})
	waitFor(t, "the first heartbeat", func() bool { return fresh(d.Dir) })
	// One page is left: the journal's first append takes it.
	d.FillBut(int64(page))
	h.tg.SendText(userID, userID, "hi")
	told := h.waitText(userID, "cannot be opened")
	if !strings.Contains(told.Visible, "disk is full") || strings.Contains(told.Visible, d.Dir) {
		t.Errorf("the chat was told %q, want the full disk named, without paths", told.Visible)
	}
}

// transcriptLine is v as one line of a transcript.
func transcriptLine(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}
