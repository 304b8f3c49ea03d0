package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"time"

	"github.com/volcanic/telegram-agent/internal/procgroup"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// execWaitDelay bounds how long Exec waits for a killed process's output
// pipes to close (a grandchild may hold them open).
const execWaitDelay = 2 * time.Second

// ExecOptions configures [ToolContext.Exec].
type ExecOptions struct {
	// Env is applied on top of the filtered environment and is never
	// filtered: a non-nil value sets the variable, a nil value removes it.
	Env map[string]*string
	// Cwd is the working directory; the session's workspace when empty.
	Cwd string
	// Timeout, when positive, kills the process group after it.
	Timeout time.Duration
	// Stdin, when non-nil, is the process's standard input.
	Stdin io.Reader
}

// ExecResult is what a finished process left behind. Its output is not
// redacted: an extension's tool result is, by the loop.
type ExecResult struct {
	Stdout   string
	Stderr   string
	ExitCode int
}

// errExecTimeout is the cause of an Exec context that ran out of time.
var errExecTimeout = errors.New("timed out")

// Exec runs command with args for an extension, through PrepareProcess
// (Purpose ExtensionExec, Origin the context's extension), so the child gets
// the filtered environment and never the inherited one. A bare command name
// is looked up on the PATH of that environment (the host's PATH only when
// it has none), so the child runs what its own PATH finds. The process runs in
// its own process group, which is killed when ctx is done or the timeout
// passes; Exec then returns an error. A process that exits with a non-zero
// status is not an error: ExitCode says how it ended.
func (c *ToolContext) Exec(ctx context.Context, command string, args []string, opts ExecOptions) (ExecResult, error) {
	pc, err := c.PrepareProcess(ctx, spawnpolicy.Request{
		Purpose: spawnpolicy.ExtensionExec,
		Command: command,
		Args:    args,
		Cwd:     opts.Cwd,
		Env:     opts.Env,
		Origin:  c.origin,
	})
	if err != nil {
		return ExecResult{}, err
	}
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, opts.Timeout, errExecTimeout)
		defer cancel()
	}
	bin, err := childLookPath(pc.Command, pc.Env)
	if err != nil {
		return ExecResult{ExitCode: -1}, fmt.Errorf("agent: exec %s: %w", command, err)
	}
	cmd := exec.CommandContext(ctx, bin, pc.Args...)
	cmd.Args[0] = pc.Command
	pc.ApplyTo(cmd)
	procgroup.Set(cmd)
	cmd.WaitDelay = execWaitDelay
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr, cmd.Stdin = &stdout, &stderr, opts.Stdin
	runErr := pc.Start(cmd)
	if runErr == nil {
		runErr = cmd.Wait()
	}
	res := ExecResult{Stdout: stdout.String(), Stderr: stderr.String(), ExitCode: -1}
	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	if ctx.Err() != nil {
		return res, fmt.Errorf("agent: exec %s: %w", command, context.Cause(ctx))
	}
	var exitErr *exec.ExitError
	if runErr != nil && !errors.As(runErr, &exitErr) {
		return res, fmt.Errorf("agent: exec %s: %w", command, runErr)
	}
	return res, nil
}
