package chat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/volcanic/telegram-agent/internal/agenttest"
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
