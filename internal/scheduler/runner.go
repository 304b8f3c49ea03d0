package scheduler

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"time"

	"github.com/volcanic/telegram-agent/internal/procgroup"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// stderrTailBytes is how much of a script's stderr is kept for an alert.
const stderrTailBytes = 4096

// scriptResult is how a watcher's run ended. Its text is redacted.
type scriptResult struct {
	// failure, when non-empty, says why the run failed: the hook, the
	// start, a non-zero exit or the timeout.
	failure string
	// cancelled reports a run stopped by Stop or by cancelling the job;
	// it is neither a success nor a failure.
	cancelled bool
	// stdout is the redacted output, at most the output limit; cut
	// reports that more was dropped.
	stdout string
	cut    bool
	// stderrTail is the end of the redacted stderr.
	stderrTail string
}

// runScript runs a watcher's script with bash -c in the context the spawn
// policy prepares for it: Purpose
// ScheduledScript, Scope the target chat, Origin the job id, TZ the
// target's zone, cwd the workspace, never an inherited environment. The
// script runs in its own process group with stdin /dev/null; when it
// outlives the timeout, or ctx is done, the group gets SIGTERM and, after
// the grace period, SIGKILL.
func (s *Scheduler) runScript(ctx context.Context, job Job, zone string) scriptResult {
	red := s.redactor()
	procs := s.processes()
	if procs == nil {
		return scriptResult{failure: "process environment hook failed: the scheduler was not activated by the agent"}
	}
	pc, err := procs.Prepare(spawnpolicy.Request{
		Purpose:    spawnpolicy.ScheduledScript,
		Command:    job.Script,
		Cwd:        s.cfg.workspace,
		TimeZoneID: zone,
		Scope:      job.Target,
		Origin:     job.ID,
	})
	if err != nil {
		return scriptResult{failure: red.Redact("process environment hook failed: " + err.Error())}
	}
	args := []string{"-c", pc.Command}
	if len(pc.Args) > 0 {
		args = append(append(args, "bash"), pc.Args...)
	}
	cmd := exec.Command("bash", args...)
	pc.ApplyTo(cmd)
	procgroup.Set(cmd)
	cmd.Stdin = nil // the null device
	cmd.WaitDelay = s.cfg.killGrace
	stdout := &headBuffer{limit: s.cfg.outputLimit}
	stderr := &tailBuffer{limit: stderrTailBytes}
	outW, errW := red.NewWriter(stdout), red.NewWriter(stderr)
	cmd.Stdout, cmd.Stderr = outW, errW
	if err := pc.Start(cmd); err != nil {
		return scriptResult{failure: red.Redact("the script did not start: " + err.Error())}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	timer := time.NewTimer(s.cfg.scriptTimeout)
	defer timer.Stop()
	var waitErr error
	var timedOut, cancelled bool
	select {
	case waitErr = <-done:
	case <-timer.C:
		timedOut = true
		waitErr = s.stopGroup(cmd, done)
	case <-ctx.Done():
		cancelled = true
		waitErr = s.stopGroup(cmd, done)
	}
	// Whatever the script left behind in its group goes with it.
	procgroup.Kill(cmd)
	_ = outW.Close()
	_ = errW.Close()

	res := scriptResult{stderrTail: stderr.String()}
	res.stdout, res.cut = stdout.text()
	var exitErr *exec.ExitError
	switch {
	case cancelled:
		res.cancelled = true
	case timedOut:
		res.failure = fmt.Sprintf("timed out after %s (the script's process group was killed)", s.cfg.scriptTimeout)
	case errors.As(waitErr, &exitErr) && !exitErr.Exited():
		res.failure = "killed by " + exitErr.String()
	case errors.As(waitErr, &exitErr):
		res.failure = fmt.Sprintf("exit status %d", exitErr.ExitCode())
	case errors.Is(waitErr, exec.ErrWaitDelay):
		// The script exited, but a process it left behind held its
		// output open; that process is killed above, the run stands.
	case waitErr != nil:
		res.failure = red.Redact("the script failed: " + waitErr.Error())
	}
	return res
}

// stopGroup sends SIGTERM to the script's process group, then SIGKILL when
// the script has not ended after the grace period, and returns Wait's
// result.
func (s *Scheduler) stopGroup(cmd *exec.Cmd, done <-chan error) error {
	procgroup.Terminate(cmd)
	grace := time.NewTimer(s.cfg.killGrace)
	defer grace.Stop()
	select {
	case err := <-done:
		return err
	case <-grace.C:
		procgroup.Kill(cmd)
		return <-done
	}
}
