package scheduler

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// loop fires the jobs that are due, then sleeps until the next one (at
// most maxWait) or until poked, until ctx is done.
func (s *Scheduler) loop(ctx context.Context) {
	defer s.wg.Done()
	timer := time.NewTimer(maxWait)
	defer timer.Stop()
	for {
		timer.Reset(s.fireDue(ctx))
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-timer.C:
		}
	}
}

// fireDue starts every job whose next run has come and returns how long
// to wait for the next one.
func (s *Scheduler) fireDue(ctx context.Context) time.Duration {
	now := s.cfg.now()
	wait := maxWait
	fired := 0
	zones := make(map[string]*time.Location)
	for _, e := range s.snapshot() {
		loc := s.location(e.job.Target, zones)
		next := e.sched.next(cmpOrTime(e.anchor, now), loc)
		if !next.IsZero() && !next.After(now) {
			if s.fire(ctx, e, now) {
				fired++
			}
			next = e.sched.next(now, loc) // fire moved the anchor to now
		}
		if next.After(now) {
			wait = min(wait, next.Sub(now))
		}
	}
	if s.cfg.onPass != nil {
		s.cfg.onPass(now, fired)
	}
	return wait
}

// fire starts one run of the job seen, unless it changed meanwhile or its
// previous run is still going (that run is then skipped), and reports
// whether it started one. A one-shot job is marked as firing in the file
// before it runs, so that it runs at most once, even across a restart (a
// restart finds it firing and tells the chat instead of running it): when
// that save fails, the job stays as it was, does not run, and the chat is
// told once; a later pass tries again.
func (s *Scheduler) fire(ctx context.Context, seen entry, now time.Time) bool {
	s.mu.Lock()
	e, ok := s.jobs[seen.job.ID]
	if !ok || !e.anchor.Equal(seen.anchor) || ctx.Err() != nil {
		s.mu.Unlock()
		return false
	}
	job := e.job
	if _, firing := s.fired[job.ID]; firing {
		// A one-shot job already being fired by another pass.
		s.mu.Unlock()
		return false
	}
	if _, running := s.runs[job.ID]; running {
		e.anchor = now
		s.mu.Unlock()
		s.log().Info("scheduler: job still running, this run skipped", "job", job.ID, "target", job.Target)
		return false
	}
	late := job.OneShot() && (job.At.Before(s.startedAt) || now.Sub(job.At) > lateAfter)
	if job.OneShot() {
		// Marked as fired (so save writes it as firing) but kept in the
		// list until the file holds it so: List never sees the job vanish
		// and come back when the save fails.
		settled := make(chan struct{})
		shot := job
		shot.Fired = now
		s.fired[job.ID] = firedShot{target: job.Target, running: true, settled: settled, job: shot, inFile: true}
		s.mu.Unlock()
		if err := s.save(); err != nil {
			s.keepUnfired(ctx, e, err)
			close(settled)
			return false
		}
		s.mu.Lock()
		delete(s.jobs, job.ID)
		close(settled)
	} else {
		e.anchor = now
	}
	runCtx, cancel := context.WithCancel(ctx)
	s.runs[job.ID] = cancel
	s.wg.Add(1)
	s.mu.Unlock()
	go s.run(runCtx, job, now, late)
	return true
}

// keepUnfired keeps a one-shot job whose firing state the file could not
// take (err) scheduled, so that it does not run now and would not run
// twice after a restart, and tells its chat once.
func (s *Scheduler) keepUnfired(ctx context.Context, e *entry, err error) {
	job := e.job
	s.mu.Lock()
	delete(s.fired, job.ID)
	alert := !e.alerted
	e.alerted = true
	s.mu.Unlock()
	s.saveEpisode().Failed(err, "job", job.ID, "target", job.Target, "not_run", "a due one-shot job, until the file can be written")
	if !alert {
		return
	}
	text := s.redactor().Redact(unfiredAlert(job, err))
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.chats.Notify(ctx, job.Target, text); err != nil {
			s.log().Warn("scheduler: sending the unsaved one-shot alert", "job", job.ID, "target", job.Target, "err", err)
		}
	}()
}

// outcome is how a run ended, for the job's record and the alerts.
type outcome struct {
	text string
	// failed and succeeded are both false for a cancelled run or a prompt
	// job, which do not count for the watcher's failure streak.
	failed, succeeded bool
	// prompt reports watcher output that goes to the chat as a turn.
	prompt bool
}

// run runs one firing of job: a prompt job prompts the chat; a watcher runs
// its script and prompts the chat with the output, if any.
//
// A one-shot job leaves the file (settles) once the chat took its prompt,
// which the chat's journal holds from then on, or once its run ended
// without one and the chat was told what it needed to be (no output, a
// failure alert, an unprompted alert). A run that the shutdown cut short
// before the chat took its prompt leaves the job firing in the file: the
// restarted scheduler tells the chat (see reportInterrupted), one
// mechanism for a shutdown and a crash alike, rather than a notice raced
// against the exit.
func (s *Scheduler) run(ctx context.Context, job Job, firedAt time.Time, late bool) {
	defer s.wg.Done()
	settled := false
	defer func() {
		s.mu.Lock()
		if stop, ok := s.runs[job.ID]; ok {
			stop()
			delete(s.runs, job.ID)
		}
		f, ok := s.fired[job.ID]
		settle := ok && settled && f.inFile
		if ok {
			f.running = false
			f.inFile = f.inFile && !settled
			s.fired[job.ID] = f
		}
		s.mu.Unlock()
		if settle {
			if err := s.save(); err != nil {
				// The file keeps the job as firing until a later save
				// succeeds: a restart before that reports it.
				s.saveEpisode().Failed(err, "job", job.ID, "target", job.Target, "not_recorded", "that a one-shot job ran")
			}
		}
	}()
	// The log names the job, never its prompt or its script's output.
	log := s.log().With("job", job.ID, "name", job.Name, "target", job.Target, "kind", job.Kind())
	log.Info("scheduler: job fired", "late", late)
	zone := s.timeZone(job.Target)
	loc, ok := loadZone(zone)
	if !ok {
		zone = ""
	}
	var lateNote string
	if late {
		lateNote = fmt.Sprintf("(This job was due at %s; it runs late because the bot was not running then.)\n\n", formatTime(job.At, loc))
		log.Info("scheduler: one-shot job runs late", "due", job.At)
	}

	if !job.Watcher() {
		o := outcome{text: "prompted the chat"}
		if err := s.chats.Prompt(ctx, job.Target, job.label(late), lateNote+job.Prompt); err != nil {
			o.text = s.redactor().Redact("prompting the chat failed: " + err.Error())
			log.Warn("scheduler: job ran", "outcome", o.text)
			settled = s.tellUnprompted(ctx, job, err)
		} else {
			settled = true
			log.Info("scheduler: job ran", "outcome", o.text)
		}
		s.record(job, firedAt, o)
		return
	}

	res := s.runScript(ctx, job, zone)
	output := strings.TrimSpace(res.stdout)
	var o outcome
	switch {
	case res.cancelled:
		o = outcome{text: "cancelled"}
	case res.failure != "":
		o = outcome{text: "failed: " + res.failure, failed: true}
	case output == "":
		o = outcome{text: "no output", succeeded: true}
	case output == silentWord:
		o = outcome{text: "silent", succeeded: true}
	default:
		o = outcome{text: "output sent to the chat", succeeded: true, prompt: true}
	}
	level := slog.LevelInfo
	if o.failed {
		level = slog.LevelWarn
	}
	log.Log(ctx, level, "scheduler: job ran", "outcome", o.text, "output_bytes", len(res.stdout), "cut", res.cut)
	log.Debug("scheduler: watcher output (redacted)", "stdout", res.stdout, "stderr_tail", res.stderrTail)

	failures := s.record(job, firedAt, o)
	// A cancelled run (the shutdown: a fired one-shot job cannot be
	// cancelled) stays firing; one with nothing to say settles.
	settled = !o.prompt && !res.cancelled
	switch {
	case o.failed && failures == 1:
		// The reason may quote a hook's error or panic: the whole alert
		// is redacted, whatever its parts already were.
		alert := s.redactor().Redact(failureAlert(job, res.failure, res.stderrTail))
		if err := s.chats.Notify(ctx, job.Target, alert); err != nil {
			log.Warn("scheduler: sending the failure alert", "err", err)
			settled = ctx.Err() == nil
		}
	case o.succeeded && failures < 0:
		// Redacted whole like every text sent to the chat: the name and
		// the id come from a file the agent can write.
		if err := s.chats.Notify(ctx, job.Target, s.redactor().Redact(recoveryNotice(job, -failures))); err != nil {
			log.Warn("scheduler: sending the recovery notice", "err", err)
		}
	}
	if !o.prompt {
		return
	}
	prompt := watcherPrompt(job, res.stdout, res.cut, s.cfg.outputLimit, lateNote)
	if err := s.chats.Prompt(ctx, job.Target, job.label(late), prompt); err != nil {
		log.Warn("scheduler: prompting the chat", "err", err)
		settled = s.tellUnprompted(ctx, job, err)
		return
	}
	settled = true
}

// tellUnprompted tells the chat of a one-shot job whose prompt the chat
// did not take (err: its queue was full, or its journal could not be
// written): the job fired and never runs again, so without a word it
// would be lost silently. A recurring job is not told each time: its next
// run comes, and its outcome records the failure.
//
// It reports whether the one-shot job may leave the file: not when the
// shutdown refused the prompt (ctx is done), which the restarted
// scheduler reports instead; else once the chat was told, or the telling
// failed for another reason than the shutdown (logged: a restart reporting
// the job as cut short would say what did not happen).
func (s *Scheduler) tellUnprompted(ctx context.Context, job Job, err error) bool {
	if !job.OneShot() {
		return true
	}
	if ctx.Err() != nil {
		return false
	}
	red := s.redactor()
	if nerr := s.chats.Notify(ctx, job.Target, red.Redact(unpromptedAlert(job, err, red))); nerr != nil {
		s.log().Warn("scheduler: sending the unprompted one-shot alert", "job", job.ID, "target", job.Target, "err", nerr)
		return ctx.Err() == nil
	}
	return true
}

// record keeps a run's time and outcome with its job (when the job is
// still there) and saves the file. It returns the watcher's failure streak
// after a failure (1 for the first), or minus the streak a success ended
// (0 when there was none).
func (s *Scheduler) record(job Job, firedAt time.Time, o outcome) int {
	s.mu.Lock()
	prev := job.Failures
	e, kept := s.jobs[job.ID]
	if kept {
		prev = e.job.Failures
	}
	streak := 0
	switch {
	case o.failed:
		streak = prev + 1
	case o.succeeded:
		streak = -prev
	}
	if kept {
		e.job.LastRun = firedAt
		e.job.LastOutcome = o.text
		switch {
		case o.failed:
			e.job.Failures = streak
		case o.succeeded:
			e.job.Failures = 0
		}
	}
	s.mu.Unlock()
	if kept {
		if err := s.save(); err != nil {
			s.saveEpisode().Failed(err, "job", job.ID, "not_recorded", "the run's time and outcome")
		}
	}
	return streak
}
