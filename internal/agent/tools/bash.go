package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/procgroup"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// hookFailedPrefix starts the error result of a spawn that PrepareProcess
// refused.
const hookFailedPrefix = "process environment hook failed: "

// readChunk is the size of one read from the output pipe.
const readChunk = 64 * 1024

// outputCutWait is how long the output may take to end once the group is
// gone, before the pipe is cut off.
const outputCutWait = 50 * time.Millisecond

// tempDirName is the workspace folder the full outputs are saved in.
const tempDirName = ".tmp"

// bashTool runs a command line with bash -c, through the session's
// PrepareProcess.
type bashTool struct {
	cfg bashConfig
	// bashPath finds bash once, on first use.
	bashPath func() (string, error)
}

// NewBash returns the bash tool {command, timeout?}. Each call asks the
// session's PrepareProcess for the child's context (Purpose BashTool, Cwd
// the workspace) and runs the returned command with bash -c in the returned
// working directory, with exactly the returned environment, standard input
// from /dev/null and stdout and stderr interleaved on one pipe. The command
// runs in a process group of its own: a timeout or a cancelled call sends
// SIGTERM to the whole group, then SIGKILL after the kill grace. The result
// keeps the tail of the output and saves the whole of it (up to the spill
// limit) to <workspace>/.tmp/bash-*.log when the tail is not all of it; the
// oldest of those files are removed (see DefaultSpillMaxAge). The output is
// redacted as it streams, with the session's redactor
// ([agent.ToolContext.Redactor]), before it reaches the tail, the progress
// snapshots or that file, so a cut never leaves a part of a secret; the
// sizes in the result measure the redacted output. A progress snapshot may
// lag the output by up to the redactor's longest pattern.
func NewBash(opts ...BashOption) agent.Tool {
	b := newBashTool(opts...)
	return agent.NewTool(bashSpec(b.cfg), b.execute)
}

// newBashTool returns the bash tool configured by opts.
func newBashTool(opts ...BashOption) *bashTool {
	cfg := defaultBashConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.maxTimeout > 0 && cfg.defaultTimeout > cfg.maxTimeout {
		cfg.defaultTimeout = cfg.maxTimeout
	}
	return &bashTool{
		cfg:      cfg,
		bashPath: sync.OnceValues(func() (string, error) { return exec.LookPath("bash") }),
	}
}

// bashArgs are the bash tool's arguments.
type bashArgs struct {
	Command string   `json:"command" jsonschema:"The bash command line to run."`
	Timeout *float64 `json:"timeout,omitempty" jsonschema:"Timeout in seconds."`
}

// endReason says why a command stopped.
type endReason int

const (
	endExited endReason = iota
	endTimedOut
	endCancelled
)

// execute runs one bash call.
func (b *bashTool) execute(ctx context.Context, call *agent.Call, args bashArgs) (agent.Result, error) {
	if strings.TrimSpace(args.Command) == "" {
		return agent.ErrorResult("command must not be empty"), nil
	}
	timeout, capped, err := b.timeout(args.Timeout)
	if err != nil {
		return agent.ErrorResult(err.Error()), nil
	}
	if call.Context == nil {
		return agent.ErrorResult(hookFailedPrefix + "the call has no session context"), nil
	}
	if err := ctx.Err(); err != nil {
		return agent.ErrorResult("Command not started: the call was cancelled"), nil
	}
	pc, err := call.Context.PrepareProcess(ctx, spawnpolicy.Request{
		Purpose: spawnpolicy.BashTool,
		Command: args.Command,
		Cwd:     call.Context.Workspace,
	})
	if errors.Is(err, agent.ErrSpawnRefused) {
		return agent.ErrorResult(hookFailedPrefix + err.Error()), nil
	}
	if err != nil {
		return agent.ErrorResult(fmt.Sprintf("Command not started: %v", err)), nil
	}
	return b.run(ctx, call, pc, timeout, capped), nil
}

// timeout returns the call's timeout: the requested one (in seconds) or the
// default, capped by the maximum.
func (b *bashTool) timeout(requested *float64) (d time.Duration, capped bool, err error) {
	d = b.cfg.defaultTimeout
	if requested != nil {
		if *requested <= 0 {
			return 0, false, fmt.Errorf("timeout must be a positive number of seconds, not %v", *requested)
		}
		secs := min(*requested, float64(1<<62)/float64(time.Second))
		d = time.Duration(secs * float64(time.Second))
	}
	if b.cfg.maxTimeout > 0 && d > b.cfg.maxTimeout {
		return b.cfg.maxTimeout, true, nil
	}
	return d, false, nil
}

// run starts the prepared command and waits for it, its output and its
// process group.
func (b *bashTool) run(ctx context.Context, call *agent.Call, pc spawnpolicy.Context, timeout time.Duration, capped bool) agent.Result {
	start := time.Now()
	bashPath, err := b.bashPath()
	if err != nil {
		return agent.ErrorResult(fmt.Sprintf("Command not started: %v", err))
	}
	cmd := exec.Command(bashPath, "-c", pc.Command)
	if len(pc.Args) > 0 {
		cmd.Args = append(append(cmd.Args, "bash"), pc.Args...)
	}
	pc.ApplyTo(cmd)
	procgroup.Set(cmd)
	stdin, err := os.Open(os.DevNull)
	if err != nil {
		return agent.ErrorResult(fmt.Sprintf("Command not started: %v", err))
	}
	defer stdin.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		return agent.ErrorResult(fmt.Sprintf("Command not started: %v", err))
	}
	defer pr.Close()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, pw, pw
	mark := noticeMark(pc.Notices)
	if err := pc.Start(cmd); err != nil {
		pw.Close()
		return agent.ErrorResult(fmt.Sprintf("Command not started: %v", err))
	}
	pw.Close()

	workspace := call.Context.Workspace
	if workspace == "" {
		workspace = pc.Cwd
	}
	sink := newTailBuffer(b.cfg.maxLines, b.cfg.maxBytes, b.cfg.spillMaxBytes, func() (*os.File, error) {
		return b.openSpill(filepath.Join(workspace, tempDirName), time.Now())
	})
	// One redacting writer feeds both the tail and the spill file, so
	// neither ever holds a secret, nor a part of one cut off by the tail
	// limit.
	out, redacting := redactStream(call.Context.Redactor(), sink)
	readDone := make(chan error, 1)
	go func() { readDone <- copyOutput(out, pr) }()
	stopProgress := b.startProgress(call.Progress, sink)

	reason, waitErr := b.wait(ctx, cmd, timeout)
	outputDone := b.drain(ctx, cmd, reason, pr, readDone)
	stopProgress()
	if !outputDone {
		// Only a process outside the group (setsid) can still hold the pipe.
		<-readDone
	}
	if redacting != nil {
		// The output has ended: what the redactor held back is final. The
		// sink never fails, so neither does the flush.
		_ = redacting.Close()
	}
	view := sink.snapshot()
	spill := sink.finish(view.Truncated)
	return withNotices(b.result(view, spill, cmd, waitErr, reason, timeout, capped, time.Since(start)), pc.Notices, mark)
}

// copyOutput reads the pipe into sink until EOF or until the read is
// interrupted (a deadline or a close). A deadline cuts the wait, not the
// output: what the pipe already holds is still read, so a reader that the
// scheduler left behind on a loaded machine loses nothing the command wrote
// before the cut.
func copyOutput(sink io.Writer, r *os.File) error {
	buf := make([]byte, readChunk)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			sink.Write(buf[:n])
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			if errors.Is(err, os.ErrDeadlineExceeded) {
				readBuffered(sink, r, buf)
			}
			return err
		}
	}
}

// wait waits for the shell to exit. A timeout or the end of ctx ends its
// whole process group first (SIGTERM, then SIGKILL after the kill grace),
// and wait returns once that is done. It returns why the command ended and
// the shell's wait error. The shell is waited for on the calling goroutine,
// as a bare exec.Cmd.Run does, so a quick command costs no extra wake-up.
func (b *bashTool) wait(ctx context.Context, cmd *exec.Cmd, timeout time.Duration) (endReason, error) {
	var mu sync.Mutex
	reason, exited := endExited, false
	killed := make(chan struct{})
	kill := func(r endReason) {
		mu.Lock()
		if exited || reason != endExited {
			mu.Unlock()
			return
		}
		reason = r
		mu.Unlock()
		procgroup.Stop(cmd, b.cfg.killGrace)
		close(killed)
	}
	timer := time.AfterFunc(timeout, func() { kill(endTimedOut) })
	stopCancel := context.AfterFunc(ctx, func() { kill(endCancelled) })
	waitErr := cmd.Wait()
	timer.Stop()
	stopCancel()
	mu.Lock()
	exited = true
	r := reason
	mu.Unlock()
	if r != endExited {
		// The group may outlive the shell: wait for the kill to finish.
		<-killed
	}
	return r, waitErr
}

// drain waits for the output to end once the shell is gone, and reports
// whether it ended by itself. After a normal exit, what the shell left in
// the background gets the pipe grace to release the pipe; then the whole
// group is ended, and the pipe is cut off.
func (b *bashTool) drain(ctx context.Context, cmd *exec.Cmd, reason endReason, pr *os.File, readDone <-chan error) bool {
	if reason == endExited {
		select {
		case <-readDone:
			return true
		default:
		}
		grace := time.NewTimer(b.cfg.pipeGrace)
		defer grace.Stop()
		select {
		case <-readDone:
			return true
		case <-grace.C:
		case <-ctx.Done():
		}
		procgroup.Stop(cmd, b.cfg.killGrace)
	}
	return cutOutput(pr, readDone, outputCutWait)
}

// cutOutput waits up to d for the reader to reach the pipe's end, then
// makes its pending read fail, so nothing outside the group can keep the
// call alive. It reports whether the output ended by itself.
func cutOutput(pr *os.File, readDone <-chan error, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-readDone:
		return true
	case <-t.C:
	}
	_ = pr.SetReadDeadline(time.Now())
	return false
}

// startProgress reports a snapshot of the output's tail whenever it changed,
// at most once per progress interval, until the returned function is
// called (which waits for the reporter to stop).
func (b *bashTool) startProgress(progress func(agent.Result), sink *tailBuffer) (stop func()) {
	if progress == nil || b.cfg.progressInterval <= 0 {
		return func() {}
	}
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		ticks, stopTicker := b.cfg.newTicker(b.cfg.progressInterval)
		defer stopTicker()
		var reported int64
		for {
			select {
			case <-quit:
				return
			case <-ticks:
			}
			view := sink.snapshot()
			if view.TotalBytes == reported {
				continue
			}
			reported = view.TotalBytes
			progress(agent.Result{
				Content: []agent.Content{agent.Text(view.Text)},
				Details: map[string]any{"total_bytes": view.TotalBytes, "total_lines": view.TotalLines, "truncated": view.Truncated},
			})
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}
