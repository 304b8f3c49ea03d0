package scheduler

import (
	"errors"
	"fmt"
)

// The errors of Cancel.
var (
	// ErrNotFound reports a job id that the target chat does not have.
	ErrNotFound = errors.New("scheduler: no such job")
	// ErrAlreadyRunning reports a one-shot job that fired and is running
	// now: it is no longer scheduled, so there is nothing to cancel.
	ErrAlreadyRunning = errors.New("scheduler: the one-shot job already fired and is running now")
	// ErrAlreadyFinished reports a one-shot job that fired and whose run
	// is over.
	ErrAlreadyFinished = errors.New("scheduler: the one-shot job already ran")
)

// firedShot is a one-shot job that fired: it left the jobs, and Cancel
// answers for it with ErrAlreadyRunning or ErrAlreadyFinished instead of
// ErrNotFound.
type firedShot struct {
	target  string
	running bool
	// settled is closed once the save that marks the job as firing in
	// the file has ended, whatever came of it.
	settled chan struct{}
	// job is the job as the file keeps it while inFile: with Fired set.
	job Job
	// inFile reports that the file keeps the job as firing: its run has
	// not handed its prompt to the chat, nor ended without one.
	inFile bool
}

// Cancel removes the target chat's job id, stopping its run if one is
// going. A job of another chat is not found, like one that does not exist.
// A one-shot job that already fired is no longer scheduled: Cancel then
// returns an error matching ErrAlreadyRunning while its run goes on, and
// ErrAlreadyFinished after it. A one-shot job a restart cut short, whose
// chat is not told yet, leaves the file untold.
func (s *Scheduler) Cancel(target, id string) error {
	s.mu.Lock()
	if j, ok := s.interrupted[id]; ok && j.Target == target {
		delete(s.interrupted, id)
		s.mu.Unlock()
		if err := s.save(); err != nil {
			s.mu.Lock()
			s.interrupted[id] = j
			s.mu.Unlock()
			return err
		}
		return nil
	}
	e, ok := s.jobs[id]
	f, fired := s.fired[id]
	if ok && fired {
		// A one-shot job being fired: its firing state is being saved. Wait for that save to end, then answer from what came of
		// it (the job runs, or it stays scheduled and can be cancelled).
		s.mu.Unlock()
		<-f.settled
		s.mu.Lock()
		e, ok = s.jobs[id]
		f, fired = s.fired[id]
	}
	if !ok || e.job.Target != target || fired {
		s.mu.Unlock()
		switch {
		case fired && f.target == target && f.running:
			return fmt.Errorf("%w: %q", ErrAlreadyRunning, id)
		case fired && f.target == target:
			return fmt.Errorf("%w: %q", ErrAlreadyFinished, id)
		}
		return fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	delete(s.jobs, id)
	if stop, running := s.runs[id]; running {
		stop()
	}
	s.mu.Unlock()
	if err := s.save(); err != nil {
		s.mu.Lock()
		s.jobs[id] = e
		s.mu.Unlock()
		return err
	}
	s.poke()
	return nil
}
