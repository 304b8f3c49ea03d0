package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/volcanic/telegram-agent/internal/procgroup"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// clientName and clientVersion identify the agent to MCP servers.
const (
	clientName    = "telegram-agent"
	clientVersion = "1.0.0"
)

// serverProcess is one running MCP server and the client session over its
// stdio.
type serverProcess struct {
	name   string
	cs     *mcp.ClientSession
	stderr *stderrLog
	// cmd is the server's process; its group is killed when it stops.
	cmd *exec.Cmd
	// cancel ends the process's context: cmd.Cancel then kills its group.
	cancel context.CancelFunc
	// done is closed once the connection has ended (the server exited or
	// was stopped); exitErr then says how.
	done    chan struct{}
	exitErr error

	stopOnce sync.Once
}

// processDeps is what starting a server needs besides its context.
type processDeps struct {
	logger *slog.Logger
	red    *redactor.Redactor
	// grace is how long a stopped server may take to exit after its stdin
	// is closed, before it is signalled.
	grace time.Duration
}

// startServer runs the process pc describes, in its own process group with
// a kill-the-group cancel, and connects an MCP client to it over stdio.
// ctx bounds the start and the handshake only: the process lives until
// stop. A server that fails to start or to answer is killed, and the error
// carries the tail of its stderr (redacted).
func startServer(ctx context.Context, pc spawnpolicy.Context, name string, deps processDeps) (*serverProcess, error) {
	procCtx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(procCtx, pc.Command, pc.Args...)
	pc.ApplyTo(cmd)
	procgroup.Set(cmd)
	cmd.WaitDelay = deps.grace
	stderr := newStderrLog(deps.logger, deps.red, name)
	cmd.Stderr = stderr

	// A start that runs out of time kills the process at once, which ends
	// a handshake the server never answers.
	stopKill := context.AfterFunc(ctx, cancel)
	client := mcp.NewClient(&mcp.Implementation{Name: clientName, Version: clientVersion},
		&mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: deps.grace}, nil)
	stopKill()
	if err != nil {
		cancel()
		procgroup.Kill(cmd)
		stderr.finish()
		if ctxErr := ctx.Err(); ctxErr != nil {
			err = fmt.Errorf("%w (%w)", ctxErr, err)
		}
		return nil, withStderr(fmt.Errorf("starting %s: %w", pc.Command, err), stderr)
	}
	p := &serverProcess{
		name:   name,
		cs:     cs,
		stderr: stderr,
		cmd:    cmd,
		cancel: cancel,
		done:   make(chan struct{}),
	}
	go func() {
		p.exitErr = cs.Wait()
		close(p.done)
	}()
	return p, nil
}

var _ link = (*serverProcess)(nil)

// client returns the client session over the server's stdio.
func (p *serverProcess) client() *mcp.ClientSession { return p.cs }

// broken reports, after a call failed, whether the server exited under it
// (waiting up to exitWait to learn it), and how.
func (p *serverProcess) broken(error) error {
	if p.exited(exitWait) {
		return p.exitError()
	}
	return nil
}

// alive reports whether the connection to the server is still open.
func (p *serverProcess) alive() bool {
	return !isDone(p.done)
}

// exited waits up to d for the connection to end, and reports whether it
// did.
func (p *serverProcess) exited(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-t.C:
		return false
	}
}

// exitError describes how a server that is no longer alive ended, with the
// tail of its stderr. Call it only once alive reports false.
func (p *serverProcess) exitError() error {
	<-p.done
	p.stop()
	err := errors.New("the server exited")
	if p.exitErr != nil {
		err = fmt.Errorf("the server exited: %w", p.exitErr)
	}
	return withStderr(err, p.stderr)
}

// stop closes the connection (the server's stdin, then SIGTERM and SIGKILL
// after the grace period), kills whatever is left of its process group and
// drains its stderr. It is idempotent and safe for concurrent use.
func (p *serverProcess) stop() {
	p.stopOnce.Do(func() {
		_ = p.cs.Close()
		<-p.done
		procgroup.Kill(p.cmd)
		p.cancel()
		p.stderr.finish()
	})
}

// kill kills the server's process group at once, then stops it as stop
// does.
func (p *serverProcess) kill() {
	procgroup.Kill(p.cmd)
	p.stop()
}

// withStderr appends the tail of a server's stderr to err, when there is
// one.
func withStderr(err error, stderr *stderrLog) error {
	if tail := stderr.tail(); tail != "" {
		return fmt.Errorf("%w; stderr: %s", err, tail)
	}
	return err
}
