package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/chat/botapi"
	"github.com/volcanic/telegram-agent/internal/chat/ledger"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// The crash-point tests stop the bot, as a SIGKILL would, at every write of
// the inbound journal in turn (just before it and just after it), restart
// it from what the file held at that moment, and check what the user was
// told about each message once the restarted bot is done: answered exactly
// once, or told that its answer may have been cut short, or refused by a
// full queue, or failed with an error the user sees; a message reported as
// interrupted is retried by the user (/retry) until it has one of those.
// Nothing may be answered twice, and no answered message may be reported
// as interrupted afterwards.
//
// The stop is simulated in-process: at the chosen write the journal file
// is copied (the disk a SIGKILL would leave) into the next generation's
// agent dir, and the host is cut off from Telegram at once: no request it
// makes afterwards reaches the fake, and no answer to one it made before
// reaches it (the server applied the request, the dead process never read
// the answer). Whatever it still does is invisible, as after a kill.

// errKilled is what a host cut off by a simulated kill gets for every Bot
// API request.
var errKilled = errors.New("crash test: the process was killed")

// killSwitch is the HTTP transport of a host that can be killed: once
// dead, nothing it sends or receives crosses it. answered, when set, runs
// once a request was applied by the server, before its answer is read: a
// kill there leaves the request done and its answer unread.
type killSwitch struct {
	dead     atomic.Bool
	next     http.RoundTripper
	answered func()
}

func (k *killSwitch) RoundTrip(r *http.Request) (*http.Response, error) {
	if k.dead.Load() {
		return nil, errKilled
	}
	resp, err := k.next.RoundTrip(r)
	if err == nil && k.answered != nil {
		k.answered()
	}
	if k.dead.Load() {
		if resp != nil {
			resp.Body.Close()
		}
		return nil, errKilled
	}
	return resp, err
}

// crashUser is the user of a crash-point run: the messages they sent, and
// how many times they said /retry.
type crashUser struct {
	tg   *telegramtest.Server
	sent []models.Message
	// words are what each sent message says (a voice note's transcript).
	words   []string
	later   []string // sent once the chat shows a first answer
	retries int
	// help reports that the user sent /help, which must be answered (at
	// least once: a kill after it ran, before it was marked done, runs it
	// again).
	help bool
	// job, when set, is a scheduled prompt the first generation's
	// scheduler fires while the first message runs, so that it waits
	// behind the messages queued, then runs; jobs are the ones the bot
	// took (Prompt returned nil, the journal on the disk holding it), each
	// of which must have an outcome as a message must.
	job *crashJob
	// mu guards jobs: fire runs on a turn's goroutine.
	mu   sync.Mutex
	jobs []crashJob
}

// takenJobs returns the jobs the bot took.
func (u *crashUser) takenJobs() []crashJob {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.jobs)
}

// crashJob is a scheduled prompt of a crash run: its label and its text.
type crashJob struct{ label, text string }

// answer is the chat's answer to the job: labelled.
func (j crashJob) answer() string { return j.label + "\n\nran: " + j.text }

// outcome of one message, as the chat shows it.
type crashOutcome struct {
	answers, reports     int
	firstAnswer          int // message id of the first answer
	lastReport           int // message id of the latest report
	cut, refused, failed bool
}

func (o crashOutcome) final() bool { return o.answers > 0 || o.cut || o.refused || o.failed }

// name is what item i (a message, then a job) is called in a failure
// message.
func (u *crashUser) name(i int) string {
	if i < len(u.words) {
		return u.words[i]
	}
	return u.takenJobs()[i-len(u.words)].label
}

func (o crashOutcome) String() string {
	return fmt.Sprintf("answers=%d reports=%d cut=%v refused=%v failed=%v", o.answers, o.reports, o.cut, o.refused, o.failed)
}

// outcomes reads the chat for each sent message's outcome.
func (u *crashUser) outcomes() []crashOutcome {
	msgs := u.tg.Messages(userID)
	out := make([]crashOutcome, len(u.sent))
	for i, m := range u.sent {
		o := &out[i]
		for _, b := range msgs {
			if b.Visible == "ran: "+u.words[i] {
				o.answers++
				if o.firstAnswer == 0 {
					o.firstAnswer = b.ID
				}
				continue
			}
			if b.ReplyTo != m.ID {
				continue
			}
			switch {
			case strings.Contains(b.Visible, "interrupted by a restart"):
				o.reports++
				o.lastReport = b.ID
			case strings.Contains(b.Visible, "while the answer to this message was being sent"):
				o.cut = true
			case strings.Contains(b.Visible, "so I did not take this one"):
				o.refused = true
			case strings.HasPrefix(b.Visible, "⚠️"):
				o.failed = true
			}
		}
	}
	for _, j := range u.takenJobs() {
		var o crashOutcome
		for _, b := range msgs {
			switch {
			case b.Visible == j.answer():
				o.answers++
				if o.firstAnswer == 0 {
					o.firstAnswer = b.ID
				}
			case !strings.Contains(b.Visible, "“"+j.label+"”") && !strings.HasPrefix(b.Visible, j.label+"\n\n"):
			case strings.Contains(b.Visible, "was interrupted by a restart"):
				o.reports++
				o.lastReport = b.ID
			case strings.Contains(b.Visible, "was being sent"):
				o.cut = true
			case strings.Contains(b.Visible, "queue is full"):
				o.refused = true
			case strings.Contains(b.Visible, "⚠️") && !strings.Contains(b.Visible, "The bot is restarting"):
				o.failed = true
			}
		}
		out = append(out, o)
	}
	return out
}

// describe lists the outcomes for a failure message.
func (u *crashUser) describe(os []crashOutcome) string {
	var b strings.Builder
	for i, o := range os {
		if i >= len(u.sent) {
			fmt.Fprintf(&b, "\n  %q (scheduled prompt): %v", u.name(i), o)
			continue
		}
		fmt.Fprintf(&b, "\n  %q (message %d): %v", u.words[i], u.sent[i].ID, o)
	}
	fmt.Fprintf(&b, "\n  the chat: %s", describe(u.tg.Messages(userID)))
	return b.String()
}

// act does what the user does on seeing the chat: the later messages once
// a first answer shows, /retry once more reports came than /retry was
// said. It reports whether every message has its outcome.
func (u *crashUser) act() bool {
	os := u.outcomes()
	reports, answered, open := 0, false, false
	for _, o := range os {
		reports += o.reports
		answered = answered || o.answers > 0
		if !o.final() {
			open = true
		}
	}
	if answered && len(u.later) > 0 {
		for _, text := range u.later {
			u.sent, u.words = append(u.sent, u.tg.SendText(userID, userID, text)), append(u.words, text)
		}
		u.later = nil
		return false
	}
	if open && reports > u.retries {
		u.retries = reports
		u.tg.SendText(userID, userID, "/retry")
	}
	return !open && len(u.later) == 0 && (!u.help || countVisible(u.tg.Messages(userID), helpIntro[:30]) > 0)
}

// generation is one run of the bot in the crash test: it starts from
// agentDir (the journal a kill left there), and is killed, its journal
// then copied into next, at call killAt of its journal hook (two calls a
// write: before, after), or once the answer of its Bot API request number
// killAtRequest came back; neither set, it is not killed.
type generation struct {
	agentDir, next        string
	killAt, killAtRequest int
	// failSends is how many of its first sendMessage requests Telegram
	// answers 502.
	failSends int
	// killAfterJob kills it once the user's scheduled prompt was taken.
	killAfterJob bool
}

func (g generation) String() string {
	if g.killAtRequest > 0 {
		return fmt.Sprintf("killed at Bot API request %d", g.killAtRequest)
	}
	return fmt.Sprintf("killed at call %d of the journal hook", g.killAt)
}

// crashRun runs generations of the bot in turn against one fake Telegram
// and one user, and reports whether each kill came (a kill point past the
// writes a generation makes never comes).
func crashRun(t *testing.T, u *crashUser, gens []generation) (killed []bool) {
	t.Helper()
	for gi, g := range gens {
		ks := &killSwitch{next: &http.Transport{}}
		dead := make(chan struct{})
		var calls, requests int
		var mu sync.Mutex
		// kill keeps what the disk holds now, as a SIGKILL would leave it
		// (an append being written may leave a torn last line), and cuts
		// the host off.
		kill := func() {
			data, err := os.ReadFile(filepath.Join(g.agentDir, ledger.File))
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Errorf("reading the journal at the kill: %v", err)
			}
			if err == nil {
				if err := os.WriteFile(filepath.Join(g.next, ledger.File), data, 0o600); err != nil {
					t.Errorf("keeping the journal at the kill: %v", err)
				}
			}
			ks.dead.Store(true)
			close(dead)
		}
		hook := func(bool) {
			mu.Lock()
			defer mu.Unlock()
			if calls++; calls == g.killAt {
				kill()
			}
		}
		ks.answered = func() {
			mu.Lock()
			defer mu.Unlock()
			if requests++; requests == g.killAtRequest {
				kill()
			}
		}
		if g.failSends > 0 {
			u.tg.FailNext("sendMessage", g.failSends, 502, "Bad Gateway", 0)
		}
		faux := agenttest.NewFauxProvider()
		var host atomic.Pointer[Host]
		job := u.job
		if gi > 0 {
			job = nil // the scheduler fired it once, into the first generation
		}
		faux.Handle(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
			if job != nil && lastUserText(req) == "crash m1" {
				// The harness holds the host a moment after it starts (a
				// turn's goroutine: no t.Fatal here).
				for deadline := time.Now().Add(15 * time.Second); host.Load() == nil && time.Now().Before(deadline); {
					time.Sleep(time.Millisecond)
				}
				u.fire(t, host.Load(), *job, g.next, dead)
				job = nil
				if g.killAfterJob {
					mu.Lock()
					if !isClosed(dead) {
						kill()
					}
					mu.Unlock()
				}
			}
			return ranUserText(ctx, req, onText)
		})
		h := newHarness(t, harnessConfig{provider: faux, tg: u.tg, agentDir: g.agentDir, opts: []Option{
			withReportPause(5 * time.Millisecond),
			withHTTPClient(&http.Client{Transport: ks}),
			withRetryPolicy(botapi.RetryPolicy{Attempts: 3, BaseDelay: 5 * time.Millisecond, MaxDelay: 50 * time.Millisecond}),
			withJournal(ledger.WithHook(hook), ledger.CompactAfter(2)),
			WithTranscriber(wordsTranscriber{}),
		}})
		host.Store(h.host)
		// A new start is where a user who was told of an interrupted
		// message, and whose /retry a kill may have eaten, says it again.
		u.retries = 0
		for !isClosed(dead) {
			// What the chat shows is taken before the user looks at it,
			// so that a change in between wakes the wait below.
			seen := chatState(u.tg)
			if u.act() {
				break
			}
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			go func() {
				select {
				case <-dead:
					cancel()
				case <-ctx.Done():
				}
			}()
			err := u.tg.WaitUntil(ctx, func() bool { return chatState(u.tg) != seen })
			cancel()
			if err != nil && !isClosed(dead) {
				t.Fatalf("generation %d (to be %v): nothing happens, and messages are left without an outcome:%s", gi+1, g, u.describe(u.outcomes()))
			}
		}
		// Every message has its outcome, or the kill came. A kill point
		// not reached yet may still come in what the host writes while it
		// shuts down.
		h.stop()
		wasKilled := isClosed(dead)
		killed = append(killed, wasKilled)
		if !wasKilled {
			break
		}
	}
	checkCrashOutcomes(t, u)
	t.Logf("generations killed %v; outcomes:%s", killed, u.describe(u.outcomes()))
	return killed
}

// fire fires the scheduled prompt j into the host h (nil: the harness
// never held it), as its scheduler would, and keeps it
// among the jobs to check when the bot took it: Prompt returned nil, and
// a kill that came meanwhile (dead) left it in the journal copied to next.
// One that a kill cut off before it was journaled was never taken: the
// dead process never told its scheduler it was.
func (u *crashUser) fire(t *testing.T, h *Host, j crashJob, next string, dead chan struct{}) {
	if h == nil {
		t.Errorf("the harness never held its host")
		return
	}
	if err := h.Prompt(context.Background(), target{chatID: userID}.String(), j.label, j.text); err != nil {
		if !isClosed(dead) {
			t.Errorf("Prompt: %v", err)
		}
		return
	}
	if isClosed(dead) {
		data, err := os.ReadFile(filepath.Join(next, ledger.File))
		if err != nil || !strings.Contains(string(data), j.text) {
			return
		}
	}
	u.mu.Lock()
	u.jobs = append(u.jobs, j)
	u.mu.Unlock()
}

// chatState is what the user's chat shows, every message whole.
func chatState(tg *telegramtest.Server) string {
	var b strings.Builder
	for _, m := range tg.Messages(userID) {
		fmt.Fprintf(&b, "%d %d %q\n", m.ID, m.ReplyTo, m.Visible)
	}
	return b.String()
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// checkCrashOutcomes fails the test for a message answered twice, left
// without an outcome, or reported as interrupted after it was answered.
func checkCrashOutcomes(t *testing.T, u *crashUser) {
	t.Helper()
	os := u.outcomes()
	for i, o := range os {
		w := u.name(i)
		switch {
		case o.answers > 1:
			t.Errorf("%q was answered %d times:%s", w, o.answers, u.describe(os))
		case !o.final():
			t.Errorf("%q has no outcome:%s", w, u.describe(os))
		case o.answers > 0 && o.lastReport > o.firstAnswer:
			t.Errorf("%q was reported as interrupted after its answer:%s", w, u.describe(os))
		}
	}
	if u.help && countVisible(u.tg.Messages(userID), helpIntro[:30]) == 0 {
		t.Errorf("/help was not answered:%s", u.describe(os))
	}
}

// newCrashUser returns the user of a crash run: three messages sent at
// once (one runs, two wait behind it, the last a voice note) with /help
// among them, a scheduled prompt fired while the first one runs (it
// waits behind them), and a fourth message once an answer shows.
func newCrashUser(t *testing.T) *crashUser {
	tg := telegramtest.New(t)
	u := &crashUser{tg: tg, later: []string{"crash m4"}, job: &crashJob{label: "⏰ Job crash", text: "crash p1"}}
	for _, text := range []string{"crash m1", "/help", "crash m2"} {
		m := tg.SendText(userID, userID, text)
		if text == "/help" {
			u.help = true
			continue
		}
		u.sent, u.words = append(u.sent, m), append(u.words, text)
	}
	u.sent, u.words = append(u.sent, tg.SendVoice(userID, userID, []byte(voicePrefix+"crash m3"))), append(u.words, voiceText("crash m3", ""))
	return u
}

// voicePrefix opens the audio of a crash test's voice note; the words
// follow.
const voicePrefix = "OggS "

// wordsTranscriber transcribes a crash test's voice note: its words.
type wordsTranscriber struct{}

func (wordsTranscriber) Transcribe(_ context.Context, _ string, audio []byte) (string, string, error) {
	words, ok := strings.CutPrefix(string(audio), voicePrefix)
	if !ok {
		return "", "", errors.New("not a crash test's voice note")
	}
	return words, "", nil
}

// maxKillPoints bounds the kill points a crash test tries: a run that
// still writes past it is a loop.
const maxKillPoints = 100

// TestCrashAtEveryJournalWrite kills the bot at each journal write of a
// run in turn, before it and after it, and restarts it once; with
// Telegram up, and with Telegram failing the first sends of the run (its
// answers among them) and of the restart.
func TestCrashAtEveryJournalWrite(t *testing.T) {
	atEveryKillPoint(t, "kill at call %d", "writes", func(g *generation, n int) { g.killAt = n })
}

// atEveryKillPoint runs the crash user's messages through two generations
// of the bot for each kill point n in turn, the first killed at n (set by
// kill), until a first generation is no longer killed: n is then past
// what (its writes, its requests) the run makes. It does so with Telegram
// up, and with Telegram failing the first sends of each generation.
func atEveryKillPoint(t *testing.T, name, what string, kill func(g *generation, n int)) {
	for _, fail := range []int{0, 8} {
		t.Run(fmt.Sprintf("%d sends fail", fail), func(t *testing.T) {
			for n := 1; n <= maxKillPoints; n++ {
				last := false
				t.Run(fmt.Sprintf(name, n), func(t *testing.T) {
					u := newCrashUser(t)
					first, second := t.TempDir(), t.TempDir()
					g := generation{agentDir: first, next: second, failSends: fail}
					kill(&g, n)
					killed := crashRun(t, u, []generation{g, {agentDir: second, failSends: fail / 2}})
					last = !killed[0]
				})
				if last {
					t.Logf("%d kill points, the last one past the run's %s", n, what)
					return
				}
			}
			t.Errorf("the run still goes on (%s) after %d kill points", what, maxKillPoints)
		})
	}
}

// TestCrashAtEveryJournalWriteAfterAPromptWasCut kills the bot once the
// scheduled prompt was taken, behind the queued messages (so the next
// start reports the messages and the job, and the user retries them all),
// then kills the restarted bot at each of its journal writes in turn, and
// starts it once more: the job, as each message, is answered once, or
// reported and answered once.
func TestCrashAtEveryJournalWriteAfterAPromptWasCut(t *testing.T) {
	atEveryKillPointAfter(t, generation{killAfterJob: true}, 0, "after it took the job",
		func(u *crashUser) bool { return len(u.takenJobs()) == 1 })
}

// TestCrashAtEveryJournalWriteAfterACrash kills the bot once its first
// batch is journaled (so the next start reports three messages and the
// user retries them), then kills the restarted bot at each of its journal
// writes in turn, and restarts it once more.
func TestCrashAtEveryJournalWriteAfterACrash(t *testing.T) {
	atEveryKillPointAfterACrash(t, 0)
}

// atEveryKillPointAfterACrash kills the bot once its first batch is
// journaled, then kills the restarted bot (whose first failSends sends
// Telegram fails) at each of its journal writes in turn, and starts it
// once more.
func atEveryKillPointAfterACrash(t *testing.T, failSends int) {
	// Calls 1 and 2 are the start-up's compaction, 3 and 4 the batch.
	const afterTheBatch = 4
	atEveryKillPointAfter(t, generation{killAt: afterTheBatch}, failSends, "after its batch",
		func(*crashUser) bool { return true })
}

// atEveryKillPointAfter starts the bot as first says (its directories
// filled in), which must kill it (what says where, and killedRight checks
// it), then kills the restarted bot (whose first failSends sends Telegram
// fails) at each of its journal writes in turn, and starts it once more.
func atEveryKillPointAfter(t *testing.T, first generation, failSends int, what string, killedRight func(*crashUser) bool) {
	for n := 1; n <= maxKillPoints; n++ {
		last := false
		t.Run(fmt.Sprintf("kill at call %d", n), func(t *testing.T) {
			u := newCrashUser(t)
			g := first
			second, third := t.TempDir(), t.TempDir()
			g.agentDir, g.next = t.TempDir(), second
			killed := crashRun(t, u, []generation{
				g,
				{agentDir: second, next: third, killAt: n, failSends: failSends},
				{agentDir: third},
			})
			if !killed[0] || !killedRight(u) {
				t.Fatalf("the first start was not killed %s", what)
			}
			last = !killed[1]
		})
		if last {
			t.Logf("%d kill points, the last one past the run's writes", n)
			return
		}
	}
	t.Errorf("the run still writes its journal after %d hook calls", maxKillPoints)
}

// TestCrashAtEveryTelegramRequest kills the bot once the server applied
// each of its Bot API requests in turn (a getUpdates whose offset
// confirmed a batch, an answer or a report sent) before it read the
// answer, and restarts it once; with Telegram up, and failing the first
// sends.
func TestCrashAtEveryTelegramRequest(t *testing.T) {
	atEveryKillPoint(t, "kill after request %d", "requests", func(g *generation, n int) { g.killAtRequest = n })
}

// TestCommandBeforeAJournaledMessageSurvivesAKill kills the bot right
// after it journaled a batch that holds a command and, after it, a
// message: the command had not run yet, and Telegram still holds the
// batch (it was not confirmed), so the restarted bot must get the command
// again and answer it, not poll from after the message.
func TestCommandBeforeAJournaledMessageSurvivesAKill(t *testing.T) {
	tg := telegramtest.New(t)
	tg.SendText(userID, userID, "/help")
	u := &crashUser{tg: tg}
	u.sent, u.words = []models.Message{tg.SendText(userID, userID, "crash after the command")}, []string{"crash after the command"}
	first, second := t.TempDir(), t.TempDir()
	// Calls 1 and 2 are the start-up's compaction, 3 and 4 the batch.
	killed := crashRun(t, u, []generation{{agentDir: first, next: second, killAt: 4}, {agentDir: second}})
	if !killed[0] {
		t.Fatal("the first start was not killed after its batch")
	}
	if n := countVisible(tg.Messages(userID), helpIntro[:30]); n != 1 {
		t.Errorf("the /help sent before the kill was answered %d times, want once: %s", n, describe(tg.Messages(userID)))
	}
	// Handled: a later start does not ask for it again.
	j, err := ledger.Open(second, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if got, want := j.ResumeOffset(time.Now()), highestUpdate(t, second)+1; got != want {
		t.Errorf("the next start polls from %d, want %d (after the last update)", got, want)
	}
}

// highestUpdate returns the highest update id in dir's journal.
func highestUpdate(t *testing.T, dir string) int64 {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, ledger.File))
	if err != nil {
		t.Fatal(err)
	}
	var top int64
	for line := range bytes.Lines(data) {
		var e ledger.Entry
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("journal line %q: %v", line, err)
		}
		top = max(top, e.Origin.UpdateID())
	}
	return top
}

// A /new queued behind a running turn, told it runs after that turn, runs
// after a restart that cut the turn: it waited in memory only, and the
// restart forgot it after the chat was told it would come.
func TestQueuedNewRunsAfterARestart(t *testing.T) {
	tg := telegramtest.New(t)
	agentDir, ws := t.TempDir(), t.TempDir()
	h1 := heldChat(t, harnessConfig{tg: tg, agentDir: agentDir, workspace: ws})
	tg.SendText(userID, userID, "/new")
	h1.waitText(userID, "A new session will start after the current turn")
	h1.stop()

	faux := agenttest.NewFauxProvider()
	faux.Handle(ranUserText)
	h2 := newHarness(t, harnessConfig{provider: faux, tg: tg, agentDir: agentDir, workspace: ws})
	h2.waitText(userID, "New session started")
}

// TestCrashAtEveryJournalWriteWhileTelegramFails is the restart after a
// crash of TestCrashAtEveryJournalWriteAfterACrash with Telegram failing
// the restarted bot's first sends (its reports among them), killed at
// each of its journal writes in turn, then started again.
func TestCrashAtEveryJournalWriteWhileTelegramFails(t *testing.T) {
	atEveryKillPointAfterACrash(t, 5)
}
