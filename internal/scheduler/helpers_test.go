package scheduler

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// sent is one message the fake front end got from the scheduler.
type sent struct {
	Kind   string // "prompt" or "notify"
	Target string
	Label  string
	Text   string
}

// fakeChats records what the scheduler sends, and answers TimeZone from a
// map. onPrompt, when set, runs for every Prompt (the end-to-end test
// forwards it to a session); onNotify, when set, answers every Notify, and
// a notice it refuses is recorded as kind "refused".
type fakeChats struct {
	mu       sync.Mutex
	zones    map[string]string
	msgs     []sent
	changed  chan struct{}
	onPrompt func(ctx context.Context, target, label, prompt string) error
	onNotify func(target string) error
}

func newFakeChats(zones map[string]string) *fakeChats {
	return &fakeChats{zones: zones, changed: make(chan struct{}, 1)}
}

func (f *fakeChats) add(m sent) {
	f.mu.Lock()
	f.msgs = append(f.msgs, m)
	f.mu.Unlock()
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

func (f *fakeChats) Prompt(ctx context.Context, target, label, prompt string) error {
	f.add(sent{Kind: "prompt", Target: target, Label: label, Text: prompt})
	if f.onPrompt != nil {
		return f.onPrompt(ctx, target, label, prompt)
	}
	return nil
}

func (f *fakeChats) Notify(_ context.Context, target, text string) error {
	if f.onNotify != nil {
		if err := f.onNotify(target); err != nil {
			f.add(sent{Kind: "refused", Target: target, Text: text})
			return err
		}
	}
	f.add(sent{Kind: "notify", Target: target, Text: text})
	return nil
}

// errRefusedForGood is what an onNotify returns for a refusal for good
// (Telegram's 403, a target that is no chat); any other error passes.
var errRefusedForGood = errors.New("telegram sendMessage: 403 Forbidden: bot was blocked by the user")

func (f *fakeChats) Refused(err error) bool { return errors.Is(err, errRefusedForGood) }

func (f *fakeChats) TimeZone(target string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.zones[target]
}

// sent returns a copy of what was sent so far.
func (f *fakeChats) sent() []sent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]sent(nil), f.msgs...)
}

// hangGuard is how long a test waits for an event before it gives up: a
// guard against a hang, never a measure of speed.
const hangGuard = 30 * time.Second

// waitFor waits until at least n messages were sent, failing the test
// after the hang guard.
func (f *fakeChats) waitFor(t *testing.T, n int) []sent {
	t.Helper()
	deadline := time.After(hangGuard)
	for {
		if got := f.sent(); len(got) >= n {
			return got
		}
		select {
		case <-f.changed:
		case <-deadline:
			t.Fatalf("waited %s for %d message(s) to the chat, got %d", hangGuard, n, len(f.sent()))
		}
	}
}

// fakeClock is a clock the test moves by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// pass is one pass of the firing loop: the time it read from the clock
// and how many runs it started.
type pass struct {
	now   time.Time
	fired int
}

// passes records the firing loop's passes (the scheduler's onPass hook).
type passes struct {
	mu      sync.Mutex
	seen    []pass
	changed chan struct{}
}

func (p *passes) add(now time.Time, fired int) {
	p.mu.Lock()
	p.seen = append(p.seen, pass{now: now, fired: fired})
	p.mu.Unlock()
	select {
	case p.changed <- struct{}{}:
	default:
	}
}

// first returns the first pass that read now, if there was one.
func (p *passes) first(now time.Time) (pass, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, ps := range p.seen {
		if ps.now.Equal(now) {
			return ps, true
		}
	}
	return pass{}, false
}

// waitPass pokes the firing loop and waits for its first pass that read
// now from the clock. Each step of a test sets the clock to a time it did
// not show before, so that pass came after the step: what it fired, or
// did not fire, is the scheduler's answer to that step.
func (e *env) waitPass(t *testing.T, now time.Time) pass {
	t.Helper()
	e.s.poke()
	deadline := time.After(hangGuard)
	for {
		if ps, ok := e.passes.first(now); ok {
			return ps
		}
		select {
		case <-e.passes.changed:
		case <-deadline:
			t.Fatalf("waited %s for a pass of the firing loop at %v", hangGuard, now)
		}
	}
}

// passAt sets clock to now and waits for the firing loop's pass at now.
func (e *env) passAt(t *testing.T, clock *fakeClock, now time.Time) pass {
	t.Helper()
	clock.Set(now)
	return e.waitPass(t, now)
}

// stop stops the scheduler and waits for its runs to end, so that what
// they sent is all there is.
func (e *env) stop(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	defer cancel()
	if err := e.s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

// fifo makes name in the workspace a named pipe that a script holds open
// (for example "sleep 30 3>name &"). opened is closed once a process opened
// it for writing, gone once every writer closed it: the process holding it
// ended.
func (e *env) fifo(t *testing.T, name string) (opened, gone <-chan struct{}) {
	t.Helper()
	path := filepath.Join(e.workspace, name)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	o, g := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(g)
		f, err := os.Open(path) // blocks until a writer opens it
		close(o)
		if err != nil {
			return
		}
		defer f.Close()
		_, _ = io.Copy(io.Discard, f) // EOF once every writer closed it
	}()
	t.Cleanup(func() {
		// Release the reader if no writer ever came.
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
	return o, g
}

// within fails the test unless ch is closed within the hang guard.
func within(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(hangGuard):
		t.Fatalf("waited %s for %s", hangGuard, what)
	}
}

// randomSecret returns a fresh secret value, so no test depends on a
// literal that could leak into a message.
func randomSecret(t *testing.T) string {
	t.Helper()
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return "s3cr3t-" + hex.EncodeToString(b[:])
}

// env is the test harness: an agent (faux provider, a spawn policy over an
// injected environment holding the bot token and a secret under an
// innocent name, a redactor for both) with the scheduler activated.
type env struct {
	s         *Scheduler
	chats     *fakeChats
	agent     *agent.Agent
	faux      *agenttest.FauxProvider
	dir       string // the agent dir, holding jobs.json
	workspace string
	passes    *passes
	token     string // TELEGRAM_BOT_TOKEN's value
	secret    string // the value of an innocently named variable, in SecretValues
}

// setup holds what a test changes in the harness.
type setup struct {
	opts  []Option
	zones map[string]string
	hooks []spawnpolicy.Hook
	faux  []agenttest.FauxResponse
	dir   string // the agent dir; a fresh one when empty
	// file, when set, returns the jobs.json to start on, written before
	// the scheduler is built; it may plant e's secrets in it.
	file func(e *env) string
	// sandboxed starts scripts through the agent sandbox's launcher (this
	// test binary), with the workspace as its view's.
	sandboxed bool
	// late leaves the chats to Start, as main hands them. Otherwise the
	// harness hands them at once, so that a test may schedule in a chat's
	// zone and run a job (runNow) without the firing loop.
	late bool
}

func newEnv(t *testing.T, su setup) *env {
	t.Helper()
	e := &env{dir: su.dir, workspace: t.TempDir(), token: randomSecret(t), secret: randomSecret(t),
		passes: &passes{changed: make(chan struct{}, 1)}}
	if e.dir == "" {
		e.dir = t.TempDir()
	}
	zones := su.zones
	if zones == nil {
		zones = map[string]string{"chat-a": "Europe/Berlin", "chat-b": "America/New_York"}
	}
	e.chats = newFakeChats(zones)
	popts := spawnpolicy.DefaultOptions()
	popts.HardenHostProcess = false
	popts.SecretValues = []string{e.token, e.secret}
	popts.Hooks = su.hooks
	if su.sandboxed {
		popts.Sandbox = testLauncher(t, e.workspace)
	}
	environ := map[string]string{
		"PATH":               os.Getenv("PATH"),
		"HOME":               e.workspace,
		"LANG":               "C.UTF-8",
		"TELEGRAM_BOT_TOKEN": e.token,
		"INNOCENT_NAME":      e.secret,
		"KEEP_ME":            "visible",
	}
	policy, err := spawnpolicy.New(popts, slog.New(slog.DiscardHandler), func() map[string]string { return environ })
	if err != nil {
		t.Fatal(err)
	}
	if su.file != nil {
		if err := os.WriteFile(filepath.Join(e.dir, "jobs.json"), []byte(su.file(e)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	opts := append([]Option{WithWorkspace(e.workspace), WithLogger(slog.New(slog.DiscardHandler))}, su.opts...)
	e.s, err = New(filepath.Join(e.dir, "jobs.json"), opts...)
	if err != nil {
		t.Fatal(err)
	}
	e.s.cfg.onPass = e.passes.add
	if !su.late {
		e.s.chats = e.chats
	}
	e.faux = agenttest.NewFauxProvider(su.faux...)
	e.agent, err = agent.New(e.faux, policy, redactor.New([]string{e.token, e.secret}),
		agent.WithExtensions(e.s), agent.WithWorkspace(e.workspace))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.agent.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
		defer cancel()
		if err := e.s.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
		e.agent.Close()
	})
	return e
}

// writeFile writes name in the workspace.
func (e *env) writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(e.workspace, name), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// schedule adds a job for target, failing the test on error.
func (e *env) schedule(t *testing.T, target, sched, prompt, script string) Job {
	t.Helper()
	j, err := e.s.Schedule(target, sched, prompt, script, "")
	if err != nil {
		t.Fatalf("Schedule(%q): %v", sched, err)
	}
	return j
}

// runNow runs one firing of the job id synchronously, as the loop would.
func (e *env) runNow(t *testing.T, id string) {
	t.Helper()
	s := e.s
	s.mu.Lock()
	en, ok := s.jobs[id]
	if !ok {
		s.mu.Unlock()
		t.Fatalf("no job %q", id)
	}
	job := en.job
	ctx, cancel := context.WithCancel(t.Context())
	s.runs[id] = cancel
	s.wg.Add(1)
	s.mu.Unlock()
	s.run(ctx, job, s.cfg.now(), false)
}

// job returns the stored job id.
func (e *env) job(t *testing.T, id string) Job {
	t.Helper()
	for _, j := range e.s.All() {
		if j.ID == id {
			return j
		}
	}
	t.Fatalf("no job %q", id)
	return Job{}
}

// readFileIn reads name in dir.
func readFileIn(dir, name string) ([]byte, error) {
	return os.ReadFile(filepath.Join(dir, name))
}
