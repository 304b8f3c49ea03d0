//go:build linux

package sandbox

import (
	"context"
	"os"
	"sync"
	"time"
)

// agents are a launcher's agent-side launchers: the spawner that starts
// them, and, for a launcher that keeps one started ahead ([WithWarm]), the
// socket to one started ahead too.
type agents struct {
	spawner *Spawner
	mu      sync.Mutex
	next    *os.File
	// starting is set while the next one is being asked for.
	starting bool
	closed   bool
	starts   sync.WaitGroup
}

// WithSpawner makes the launcher run every command as the spawner's agent
// ids: the launcher the bot starts relays the command to a launcher the
// spawner starts as those ids, which confines and starts it. A command
// whose agent-side launcher cannot be had fails to start; it never starts
// as the bot's uid instead.
func WithSpawner(s *Spawner) Option { return func(l *Launcher) { l.agents.spawner = s } }

// agentSocket returns the socket to an agent-side launcher for one
// command: the one started ahead, or a new one. With WithWarm another is
// asked for at once, off the command's path.
func (l *Launcher) agentSocket() (*os.File, error) {
	a := &l.agents
	a.mu.Lock()
	f := a.next
	a.next = nil
	a.mu.Unlock()
	if f == nil {
		var err error
		if f, err = a.spawner.agentLauncher(); err != nil {
			return nil, err
		}
	}
	l.refillAgent()
	return f, nil
}

// refillAgent asks the spawner for the next agent-side launcher in the
// background, for a launcher that keeps one started ahead.
func (l *Launcher) refillAgent() {
	a := &l.agents
	a.mu.Lock()
	defer a.mu.Unlock()
	if !l.warm || a.spawner == nil || a.closed || a.next != nil || a.starting {
		return
	}
	a.starting = true
	a.starts.Add(1)
	go func() {
		defer a.starts.Done()
		f, err := a.spawner.agentLauncher()
		a.mu.Lock()
		a.starting = false
		if err == nil && !a.closed {
			a.next, f = f, nil
		}
		a.mu.Unlock()
		if f != nil {
			f.Close()
		}
	}()
}

// closeAgents closes the socket to the agent-side launcher started ahead
// (which then exits) and asks for no other.
func (l *Launcher) closeAgents() {
	a := &l.agents
	a.mu.Lock()
	a.closed = true
	f := a.next
	a.next = nil
	a.mu.Unlock()
	if f != nil {
		f.Close()
	}
	a.starts.Wait()
}

// waitAgent waits until the agent-side launcher started ahead is there,
// with a spawner: what waitWarm waits for besides the warm launcher.
func (l *Launcher) waitAgent(ctx context.Context) error {
	a := &l.agents
	for a.spawner != nil {
		l.refillAgent()
		a.mu.Lock()
		ready := a.next != nil || a.closed
		a.mu.Unlock()
		if ready {
			return nil
		}
		select {
		case <-time.After(time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
