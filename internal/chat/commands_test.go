package chat

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

func TestCommandsAreRegistered(t *testing.T) {
	h := newHarness(t, harnessConfig{provider: agenttest.NewFauxProvider()})
	h.tg.MustWaitFor(telegramtest.IsMethod("setMyCommands"))
	var names []string
	for _, c := range h.tg.Commands() {
		names = append(names, c.Command)
	}
	if got := strings.Join(names, ","); got != "start,help,new,stop,status,usage,compact,model,tz,jobs,retry,verbose,approve,deny,approvals" {
		t.Errorf("commands = %s", got)
	}
	h.tg.SendText(userID, userID, "/help")
	h.waitText(userID, "/tz <zone>")
}

func TestTimeZoneCommand(t *testing.T) {
	faux := agenttest.NewFauxProvider()
	faux.Handle(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		return agent.Response{Text: "ok"}, nil
	})
	h := newHarness(t, harnessConfig{provider: faux})
	h.tg.SendText(userID, userID, "/tz Mars/Olympus")
	h.waitText(userID, "Europe/Berlin")
	h.tg.SendText(userID, userID, "/tz Asia/Tokyo")
	h.waitText(userID, "Time zone set to Asia/Tokyo")
	if got := h.host.TimeZone("1001"); got != "Asia/Tokyo" {
		t.Errorf("TimeZone = %q", got)
	}
	data, err := os.ReadFile(filepath.Join(h.agentDir, SettingsFile))
	if err != nil || !strings.Contains(string(data), "Asia/Tokyo") {
		t.Errorf("settings file: %v %s", err, data)
	}
	h.tg.SendText(userID, userID, "/status")
	h.waitText(userID, "Time zone: Asia/Tokyo")
}

func TestBadSettingsFileStopsStartUp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, SettingsFile)
	os.WriteFile(path, []byte("{not json"), 0o600)
	h := newHarness(t, harnessConfig{provider: agenttest.NewFauxProvider()})
	_, err := New(Config{Token: "x:y", AllowedUserIDs: []int64{1}, Agent: h.agent, Redactor: redactor.New(nil), AgentDir: dir, WorkspaceDir: dir})
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v, want one naming %s", err, path)
	}
	if data, _ := os.ReadFile(path); string(data) != "{not json" {
		t.Errorf("the bad file was overwritten")
	}
}

func TestNewSessionKeepsTranscript(t *testing.T) {
	faux := agenttest.NewFauxProvider(agenttest.FauxText("first"), agenttest.FauxText("second"))
	h := newHarness(t, harnessConfig{provider: faux})
	h.tg.SendText(userID, userID, "hello")
	h.waitText(userID, "first")
	h.tg.SendText(userID, userID, "/new")
	h.waitText(userID, "New session started")
	h.tg.SendText(userID, userID, "hello again")
	h.waitText(userID, "second")
	reqs := faux.Requests()
	if n := len(reqs[1].Messages); n != 1 {
		t.Errorf("the new session's first request has %d messages, want 1", n)
	}
	files, _ := filepath.Glob(filepath.Join(h.agentDir, "sessions", "*"))
	if len(files) < 2 {
		t.Errorf("transcripts = %d, want the old and the new", len(files))
	}
}

type fakeJobs struct {
	mu        sync.Mutex
	cancelled []string
}

func (f *fakeJobs) ListJobs(target string) []JobView {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.cancelled) > 0 {
		return nil
	}
	return []JobView{{ID: "j1", Name: "water plants", Schedule: "0 9 * * *", Next: time.Date(2030, 1, 2, 8, 0, 0, 0, time.UTC)}}
}

func (f *fakeJobs) CancelJob(target, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if id != "j1" {
		return errors.New("no such job")
	}
	f.cancelled = append(f.cancelled, target+"/"+id)
	return nil
}

func TestJobsCommand(t *testing.T) {
	jobs := &fakeJobs{}
	h := newHarness(t, harnessConfig{provider: agenttest.NewFauxProvider(), opts: []Option{WithJobBoard(jobs)}})
	h.tg.SendText(userID, userID, "/tz Asia/Tokyo")
	h.waitText(userID, "Time zone set")
	h.tg.SendText(userID, userID, "/jobs")
	m := h.waitText(userID, "water plants")
	if !strings.Contains(m.Visible, "17:00") {
		t.Errorf("next run not in the chat's zone: %q", m.Visible)
	}
	var markup struct {
		InlineKeyboard [][]struct {
			CallbackData string `json:"callback_data"`
		} `json:"inline_keyboard"`
	}
	if err := json.Unmarshal([]byte(m.ReplyMarkup), &markup); err != nil || len(markup.InlineKeyboard) != 1 {
		t.Fatalf("markup %s: %v", m.ReplyMarkup, err)
	}
	if !strings.Contains(m.Visible, "water plants: every day at 09:00, next") {
		t.Errorf("the schedule is not in words: %q", m.Visible)
	}
	h.tg.SendCallback(userID, userID, m.ID, markup.InlineKeyboard[0][0].CallbackData)
	h.waitText(userID, "Cancelled job “water plants”.")
	// The list is re-rendered in place, without the cancelled job's button.
	h.waitMessages(userID, "the /jobs message re-rendered", func(msgs []telegramtest.Message) bool {
		for _, msg := range msgs {
			if msg.ID == m.ID {
				return msg.Visible == "No scheduled jobs." && !strings.Contains(msg.ReplyMarkup, "cancel:")
			}
		}
		return false
	})
	// A stale button (another copy of the list) gets a friendly toast.
	h.tg.SendCallback(userID, userID, m.ID, markup.InlineKeyboard[0][0].CallbackData)
	waitFor(t, "the toast", func() bool {
		for _, r := range h.tg.RequestsFor("answerCallbackQuery") {
			if r.Params["text"] == "That job is already gone." {
				return true
			}
		}
		return false
	})
	jobs.mu.Lock()
	defer jobs.mu.Unlock()
	if len(jobs.cancelled) != 1 || jobs.cancelled[0] != "1001/j1" {
		t.Errorf("cancelled = %v", jobs.cancelled)
	}
}

func TestJobsWithoutScheduler(t *testing.T) {
	h := newHarness(t, harnessConfig{provider: agenttest.NewFauxProvider()})
	h.tg.SendText(userID, userID, "/jobs")
	h.waitText(userID, "Scheduling is not enabled")
}

// The scheduler's way in: Prompt queues a labelled turn, Notify sends text.
func TestSchedulerPromptAndNotify(t *testing.T) {
	faux := agenttest.NewFauxProvider(agenttest.FauxText("it is time"))
	h := newHarness(t, harnessConfig{provider: faux})
	waitFor(t, "the host to poll", func() bool { return len(h.tg.RequestsFor("getUpdates")) > 0 })
	if err := h.host.Prompt(context.Background(), "1001", "daily check", "check the plants"); err != nil {
		t.Fatal(err)
	}
	m := h.waitText(userID, "it is time")
	if !strings.Contains(m.Visible, "daily check") {
		t.Errorf("the answer is not labelled: %q", m.Visible)
	}
	if err := h.host.Notify(context.Background(), "1001", "watcher failed: "+h.tg.Token()); err != nil {
		t.Fatal(err)
	}
	h.waitText(userID, "watcher failed: [REDACTED]")
	if err := h.host.Prompt(context.Background(), "nonsense", "x", "y"); err == nil {
		t.Errorf("a bad target was accepted")
	}
}

func TestSanitizeFileName(t *testing.T) {
	for in, want := range map[string]string{
		"../../etc/passwd": "passwd",
		".bashrc":          "bashrc",
		"a b.txt":          "a_b.txt",
		"":                 "file",
		"..":               "file",
		`C:\x\y.pdf`:       "y.pdf",
	} {
		if got := sanitizeFileName(in); got != want {
			t.Errorf("sanitizeFileName(%q) = %q, want %q", in, got, want)
		}
	}
}

// oneShotJobs is a job board with one one-shot job.
type oneShotJobs struct{}

func (oneShotJobs) ListJobs(string) []JobView {
	return []JobView{{ID: "t1", Name: "tea", Schedule: "2026-11-30 05:30", Next: time.Date(2026, 11, 30, 5, 30, 0, 0, time.UTC)}}
}

func (oneShotJobs) CancelJob(string, string) error { return nil }

// /jobs shows a one-shot job as "once" with its time, not as its raw
// schedule followed by a "next" run.
func TestJobsOneShot(t *testing.T) {
	h := newHarness(t, harnessConfig{provider: agenttest.NewFauxProvider(), opts: []Option{WithJobBoard(oneShotJobs{})}})
	h.tg.SendText(userID, userID, "/tz UTC")
	h.waitText(userID, "Time zone set")
	h.tg.SendText(userID, userID, "/jobs")
	m := h.waitText(userID, "tea")
	if diff := cmp.Diff("• tea: once, Mon 30 Nov 05:30 UTC", m.Visible); diff != "" {
		t.Errorf("/jobs (-want +got):\n%s", diff)
	}
}
