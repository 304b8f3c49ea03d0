package scheduler

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/volcanic/telegram-agent/internal/redactor"
)

// The pauses between the rounds of tries of the start-up reports of the
// one-shot jobs a restart cut short: the first, which doubles up to the
// last.
const (
	defaultReportPause = 5 * time.Second
	reportPauseMax     = 10 * time.Minute
)

// reportInterrupted tells each chat, in one notice, of its one-shot jobs
// found firing at start-up: a crash or a restart came after they fired
// and before the chat took their prompts, so they did not run. They are
// not run again, late, as a job whose time passed while the bot was down
// is: the job may be what stopped the bot (a watcher that exhausts the
// host), and a run again would be a second run of one whose prompt the
// chat took just before the crash (its journal then reports it too, and
// /retry runs it once): a report is never a second run. A job leaves the
// file once its chat's notice went out; a notice that fails is tried again
// for as long as the scheduler runs (a restart, which would report the
// jobs anew, may never come), and after the next start-up.
//
// The jobs file is state the agent can write, so the jobs are untrusted:
// a chat gets one notice per start-up however many it has (at most
// maxJobs listed), each name shortened to one line, and the whole notice
// redacted.
func (s *Scheduler) reportInterrupted(ctx context.Context) {
	defer s.wg.Done()
	s.mu.Lock()
	byTarget := make(map[string][]Job)
	for _, j := range s.interrupted {
		byTarget[j.Target] = append(byTarget[j.Target], j)
	}
	s.mu.Unlock()
	targets := make([]string, 0, len(byTarget))
	for t := range byTarget {
		targets = append(targets, t)
	}
	slices.Sort(targets)
	zones := make(map[string]*time.Location)
	texts := make(map[string]string, len(targets))
	for _, target := range targets {
		jobs := byTarget[target]
		slices.SortFunc(jobs, func(a, b Job) int { return cmp.Or(a.At.Compare(b.At), strings.Compare(a.ID, b.ID)) })
		for _, j := range jobs {
			s.log().Info("scheduler: a restart cut a one-shot job short before its prompt reached the chat; it does not run again, the chat is told",
				"job", j.ID, "name", j.Name, "target", target, "due", j.At, "fired", j.Fired)
		}
		red := s.redactor()
		texts[target] = red.Redact(interruptedNotice(jobs, s.location(target, zones), s.cfg.maxJobs, red))
	}
	// Each round tries every chat not told yet, so that one that cannot
	// be reached holds up none of the others.
	pending, pause := targets, s.cfg.reportPause
	for round := 1; ; round++ {
		var failed []string
		for _, target := range pending {
			if err := s.chats.Notify(ctx, target, texts[target]); err != nil {
				if ctx.Err() != nil {
					return // stopped: the file keeps the rest for the next start-up
				}
				level := slog.LevelDebug
				if round == 1 {
					level = slog.LevelWarn
				}
				s.log().Log(ctx, level, "scheduler: telling the chat of its interrupted one-shot jobs failed; it is tried again",
					"target", target, "tries", round, "next_try_in", pause, "err", err)
				failed = append(failed, target)
				continue
			}
			s.reported(byTarget[target])
		}
		if len(failed) == 0 {
			return
		}
		pending = failed
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, reportPauseMax)
	}
}

// reported removes jobs, whose chat was told they were cut short, from
// the file.
func (s *Scheduler) reported(jobs []Job) {
	s.mu.Lock()
	for _, j := range jobs {
		delete(s.interrupted, j.ID)
	}
	s.mu.Unlock()
	if err := s.save(); err != nil {
		// The file keeps them until a later save: a restart before that
		// tells the chat again.
		s.saveEpisode().Failed(err, "job", jobs[0].ID, "not_recorded", "that the chat was told of its interrupted one-shot jobs")
	}
}

// interruptedNotice is a chat's notice of its one-shot jobs a restart cut
// short (jobs, in order), their times shown in loc, at most limit listed.
// Each name and id is redacted by red whole before it is cut, never cut
// first: the file is the agent's to write, and a cut inside the encoded
// form of a secret leaves a part the redactor no longer recognises. The
// caller still redacts the whole notice.
func interruptedNotice(jobs []Job, loc *time.Location, limit int, red *redactor.Redactor) string {
	const advice = "It is not run again by itself: the chat never had its prompt. Schedule it again if it still matters."
	if len(jobs) == 1 {
		j := jobs[0]
		return fmt.Sprintf("⚠️ The one-shot job “%s” (%s) was due at %s and was interrupted by a restart of the bot before it could run. %s",
			oneLine(red.Redact(j.Name), maxNameLen), oneLine(red.Redact(j.ID), 16), formatTime(j.At, loc), advice)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "⚠️ %d one-shot jobs were interrupted by a restart of the bot before they could run. "+
		"They are not run again by themselves: the chat never had their prompts. Schedule again those that still matter:", len(jobs))
	for i, j := range jobs {
		if i == limit {
			fmt.Fprintf(&b, "\n- and %d more", len(jobs)-limit)
			break
		}
		fmt.Fprintf(&b, "\n- “%s” (%s), due at %s", oneLine(red.Redact(j.Name), maxNameLen), oneLine(red.Redact(j.ID), 16), formatTime(j.At, loc))
	}
	return b.String()
}
