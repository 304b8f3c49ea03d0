package scheduler

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/volcanic/telegram-agent/internal/backoff"
	"github.com/volcanic/telegram-agent/internal/redactor"
)

// The pauses between the rounds of tries of the start-up notices of the
// one-shot jobs a restart cut short: the first, which doubles up to the
// last.
const (
	defaultReportPause = 5 * time.Second
	reportPauseMax     = 10 * time.Minute
)

// reportInterrupted tells the chat of each one-shot job found firing at
// start-up: a crash or a restart came after it fired and before its run
// settled, so it may not have run (or not to its end), or its answer may
// not have reached the chat. It is not run again, late, as a job whose
// time passed while the bot was down is: the job may be what stopped the
// bot (a watcher that exhausts the host), and a run again would be a
// second run of one whose prompt the chat took just before the crash (its
// journal then reports it too, and /retry runs it once): a notice is never
// a second run.
//
// Each job gets its own notice, one Telegram message (a name and an id
// are short), so a notice tried again never repeats one that was
// delivered. A job leaves the file once its notice went out, or once the
// chat refused it for good (the user blocked the bot, the target is no
// chat: see [Chats]); a notice that fails for a passing reason is tried
// again for as long as the scheduler runs (a restart, which would report
// the job anew, may never come), and after the next start-up. A job
// cancelled before its notice is tried is not told (one cancelled while
// its notice is on its way may still be).
//
// The jobs file is state the agent can write, so the jobs are untrusted:
// at most cfg.maxReported are told per start-up (the rest leave the file,
// logged by count), each field is redacted before it is cut, and each
// notice is redacted whole.
func (s *Scheduler) reportInterrupted(ctx context.Context) {
	defer s.wg.Done()
	jobs := s.cutShort()
	sort.Slice(jobs, func(i, j int) bool {
		return cmp.Or(jobs[i].At.Compare(jobs[j].At), strings.Compare(jobs[i].ID, jobs[j].ID)) < 0
	})
	if over := len(jobs) - s.cfg.maxReported; over > 0 {
		s.log().Warn("scheduler: more one-shot jobs were found cut short by a restart than one start-up tells; the rest leave the file untold",
			"found", len(jobs), "told", s.cfg.maxReported, "removed", over)
		s.forget(jobs[s.cfg.maxReported:]...)
		jobs = jobs[:s.cfg.maxReported]
	}
	sort.SliceStable(jobs, func(i, j int) bool { return jobs[i].Target < jobs[j].Target })
	zones := make(map[string]*time.Location)
	red := s.redactor()
	texts := make(map[string]string, len(jobs))
	for _, j := range jobs {
		s.log().Info("scheduler: a one-shot job was found firing: a restart came as it fired; it does not run again, the chat is told",
			"job", j.ID, "name", j.Name, "target", j.Target, "due", j.At, "fired", j.Fired)
		texts[j.ID] = red.Redact(interruptedNotice(j, s.location(j.Target, zones), red))
	}
	// Each round tries every job not told yet, so that a chat that cannot
	// be reached holds up none of the others.
	pending, pauses := jobs, backoff.Policy{Base: s.cfg.reportPause, Max: max(reportPauseMax, s.cfg.reportPause)}
	for round := 1; ; round++ {
		pause := pauses.Delay(round - 1)
		var failed []Job
		for _, j := range pending {
			if !s.awaitsNotice(j.ID) {
				continue // cancelled
			}
			err := s.chats.Notify(ctx, j.Target, texts[j.ID])
			switch {
			case err == nil:
				s.forget(j)
			case ctx.Err() != nil:
				return // stopped: the file keeps the rest for the next start-up
			case s.chats.Refused(err):
				// The error names no text: the notice is not logged.
				s.log().Warn("scheduler: the chat refused for good the notice of a one-shot job a restart cut short; the job leaves the file untold",
					"job", j.ID, "target", j.Target, "err", err)
				s.forget(j)
			default:
				level := slog.LevelDebug
				if round == 1 {
					level = slog.LevelWarn
				}
				s.log().Log(ctx, level, "scheduler: telling the chat of a one-shot job a restart cut short failed; it is tried again",
					"job", j.ID, "target", j.Target, "tries", round, "next_try_in", pause, "err", err)
				failed = append(failed, j)
			}
		}
		if len(failed) == 0 {
			return
		}
		pending = failed
		if !backoff.Sleep(ctx, pause) {
			return
		}
	}
}

// awaitsNotice reports whether id is a one-shot job a restart cut short
// whose chat was not told yet (nor did it cancel the job).
func (s *Scheduler) awaitsNotice(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.interrupted[id]
	return ok
}

// forget removes jobs, one-shot jobs a restart cut short that need no
// notice any more, from the file.
func (s *Scheduler) forget(jobs ...Job) {
	s.mu.Lock()
	for _, j := range jobs {
		delete(s.interrupted, j.ID)
	}
	s.mu.Unlock()
	if err := s.save(); err != nil {
		// The file keeps them until a later save: a restart before that
		// tells the chat again.
		s.saveEpisode().Failed(err, "job", jobs[0].ID, "not_recorded", "that one-shot jobs a restart cut short need no notice any more")
	}
}

// interruptedNotice is the chat's notice of its one-shot job a restart cut
// short, its time shown in loc. What is known is only that the restart
// came between the firing and the end of the run: the chat may have had
// the prompt and its answer (a save that failed until the restart kept the
// job firing), or a watcher may have run some of its script. The name and
// the id are redacted by red whole before they are cut, never cut first:
// the file is the agent's to write, and a cut inside the encoded form of a
// secret leaves a part the redactor no longer recognises. The caller still
// redacts the whole notice.
func interruptedNotice(j Job, loc *time.Location, red *redactor.Redactor) string {
	return fmt.Sprintf("⚠️ The one-shot job “%s” (%s) was due at %s, and a restart of the bot came as it fired: "+
		"it may not have run, or not to its end, or its answer may not have reached you. "+
		"It does not run again; schedule it again if it still matters.",
		oneLine(red.Redact(j.Name), maxNameLen), oneLine(red.Redact(j.ID), 16), formatTime(j.At, loc))
}
