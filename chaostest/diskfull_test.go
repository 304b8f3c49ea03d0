package chaostest

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/openaitest"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
	"github.com/volcanic/telegram-agent/internal/tmpfstest"
)

// diskFullSize is the tmpfs the agent dir lives on in TestDiskFull: room
// for the run's transcripts, journal and usage log, filled up by the
// ballast in the full phase.
const diskFullSize = 4 << 20

// healthcheck runs the binary's healthcheck, as a container's HEALTHCHECK
// would, and returns whether it said healthy, and its line.
func healthcheck(bin string, env []string) (bool, string, error) {
	cmd := exec.Command(bin, "healthcheck")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	line := strings.TrimSpace(string(out))
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		return false, "", fmt.Errorf("healthcheck: %w", err)
	}
	return err == nil && line == "healthy", line, nil
}

// awaitHealth runs the healthcheck until it says healthy (or, with
// healthy false, unhealthy) and returns its last line, or an error after
// limit. Any goroutine may call it.
func awaitHealth(bin string, env []string, healthy bool, limit time.Duration) (string, error) {
	deadline := time.Now().Add(limit)
	for {
		ok, line, err := healthcheck(bin, env)
		if err != nil {
			return "", err
		}
		if ok == healthy {
			return line, nil
		}
		if time.Now().After(deadline) {
			return line, fmt.Errorf("the healthcheck did not turn healthy=%v within %v; it says %q", healthy, limit, line)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitHealth is awaitHealth for the test's goroutine: it fails the test
// after limit.
func waitHealth(t *testing.T, bin string, env []string, healthy bool, limit time.Duration) string {
	t.Helper()
	line, err := awaitHealth(bin, env, healthy, limit)
	if err != nil {
		t.Fatal(err)
	}
	return line
}

// diskFullPhase fills the agent dir d for hold while the bot runs (the
// binary bin, with env), and frees it again. It checks that the
// healthcheck turns unhealthy while the disk is full (after send, which
// must make the bot write: messages to journal; a no-op when a load keeps
// sending) and healthy again once it is freed, and that the files parse
// while it is full. The disk is topped up every 100 ms while it is meant
// to be full: a bot under load frees blocks as it replaces its files.
//
// The chaos run calls it from its own goroutine, so it returns what went
// wrong (checkFiles reports with t.Errorf, which any goroutine may call).
// The accounting of the messages stays the caller's: each is answered or
// told its turn could not be saved.
func diskFullPhase(t *testing.T, d *tmpfstest.Disk, bin string, env []string, hold time.Duration, send func()) error {
	// A bot just restarted (or held up by Telegram's faults) may not have
	// written its heartbeat yet.
	if _, err := awaitHealth(bin, env, true, time.Minute); err != nil {
		return fmt.Errorf("before the disk filled: %w", err)
	}
	if err := d.Top(); err != nil {
		return err
	}
	stop, stopped := make(chan struct{}), make(chan error, 1)
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				stopped <- nil
				return
			case <-tick.C:
			}
			if err := d.Top(); err != nil {
				stopped <- err
				return
			}
		}
	}()
	full := func() error {
		send()
		line, err := awaitHealth(bin, env, false, time.Minute)
		if err != nil {
			return fmt.Errorf("on the full disk: %w", err)
		}
		if !strings.Contains(line, "cannot write AGENT_DIR") {
			return fmt.Errorf("on a full disk the healthcheck says %q, want it to name the unwritable AGENT_DIR", line)
		}
		time.Sleep(hold)
		checkFiles(t, d.Dir)
		return nil
	}
	err := full()
	close(stop)
	if terr := <-stopped; terr != nil && err == nil {
		err = terr
	}
	d.Drain()
	if err != nil {
		return err
	}
	if _, err := awaitHealth(bin, env, true, time.Minute); err != nil {
		return fmt.Errorf("after the disk was freed: %w", err)
	}
	return nil
}

// TestDiskFull runs the real binary with its agent dir on a small tmpfs
// that fills up while chats keep sending, is killed and restarted while it
// is full, and then frees: every message is answered exactly once or told
// it could not be saved, none is lost, no file is left half-written, the
// healthcheck is unhealthy while the disk is full and healthy after, and
// the log has one Error for the episode, not one per retry.
func TestDiskFull(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	d := tmpfstest.Mount(t, diskFullSize)
	bin := buildBot(t)
	secret := plantedSecret(t)
	users := []int64{5001, 5002, 5003, 5004}
	tg := telegramtest.New(t)
	oa := openaitest.New(t, openaitest.WithChunkSize(16), openaitest.WithResponder(func(req openaitest.ChatRequest) openaitest.Response {
		if tag := tagPattern.FindString(req.LastMessage().Text()); tag != "" {
			return openaitest.Text("answer " + tag + " direct")
		}
		return openaitest.Text("nothing to do")
	}))
	env := botEnv(tg, tg.URL(), oa.URL(), d.Dir, t.TempDir(), users, secret)
	sup := &supervisor{t: t, bin: bin, env: env, agentDir: d.Dir}
	sup.start()
	t.Cleanup(sup.stopFinal)

	rec := &record{sent: map[string]sentMessage{}}
	n := 0
	// send sends one message from every chat; a long one (over a page)
	// needs new blocks wherever it is written.
	send := func(long bool) {
		for ci, uid := range users {
			tag := fmt.Sprintf("m%d-%d", ci, n)
			text := "please handle " + tag
			if long {
				text += " " + strings.Repeat("padding ", 500)
			}
			m := tg.SendText(uid, uid, text)
			rec.add(tag, sentMessage{chat: uid, id: m.ID, at: time.Now()})
		}
		n++
	}
	settled := func(what string) {
		t.Helper()
		var st *status
		ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
		defer cancel()
		err := tg.WaitUntil(ctx, func() bool {
			st = rec.classify(tg)
			return len(st.lostTags) == 0
		})
		if err != nil {
			t.Fatalf("%s: messages without an outcome: %v", what, st.lostTags)
		}
	}

	send(false)
	settled("before the disk filled")
	waitHealth(t, bin, env, true, 30*time.Second)

	if err := diskFullPhase(t, d, bin, env, 2*time.Second, func() {
		send(true)
		send(false)
	}); err != nil {
		t.Fatal(err)
	}
	settled("after the disk was freed")

	// A crash while the disk is full, and the start that follows on it.
	d.Fill()
	send(true)
	waitHealth(t, bin, env, false, 30*time.Second)
	sup.restart(false)
	// The run started on the full disk sees it too, with an episode of
	// its own.
	waitLogCount(t, sup, "the agent dir cannot be written", 3)
	if line := waitHealth(t, bin, env, false, 30*time.Second); !strings.Contains(line, "cannot write AGENT_DIR") {
		t.Errorf("after a restart on the full disk the healthcheck says %q, want it to name the unwritable AGENT_DIR", line)
	}
	d.Drain()
	waitHealth(t, bin, env, true, 30*time.Second)
	settled("after the restart")

	sup.stopFinal()
	checkFiles(t, d.Dir)
	checkNoSecret(t, secret, tg, oa, sup, d.Dir)
	st := rec.classify(tg)
	for tag, c := range st.answers {
		if c > 1 {
			t.Errorf("%s answered %d times", tag, c)
		}
	}
	episodes, recovered := 0, 0
	for line := range strings.SplitSeq(sup.log(), "\n") {
		switch {
		case strings.Contains(line, "the agent dir cannot be written"):
			episodes++
		case strings.Contains(line, "the agent dir can be written again"):
			recovered++
		case strings.Contains(line, "level=ERROR") && !strings.Contains(line, "usage log cannot be written"):
			t.Errorf("an Error besides the episode's: %s", line)
		}
	}
	// One episode per full phase and one for the run started on the full
	// disk; the run killed in it never saw its end.
	if episodes != 3 || recovered != 2 {
		t.Errorf("the log has %d episode errors and %d recoveries, want 3 and 2", episodes, recovered)
	}
	t.Logf("\n%s", st.tableWith(tableInput{restartTotal: sup.restarts, peakRSS: sup.peakRSS(), peakThreads: sup.peakThreads(), diskPhases: 1}))
}

// waitLogCount waits until the bot's log has n lines containing s.
func waitLogCount(t *testing.T, sup *supervisor, s string, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for strings.Count(sup.log(), s) < n {
		if time.Now().After(deadline) {
			t.Fatalf("the bot's log has %d lines with %q after 30s, want %d", strings.Count(sup.log(), s), s, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
