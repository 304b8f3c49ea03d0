//go:build linux

package sandbox

import (
	"context"
	"os/exec"
)

// WithWarmStart hands withWarmStart to the tests.
func WithWarmStart(start func(cmd *exec.Cmd) error) Option { return withWarmStart(start) }

// WithoutProcessFilter hands withoutProcessFilter to the benchmark.
func WithoutProcessFilter() Option { return withoutProcessFilter() }

// WithEgressAtMost hands withEgressAtMost to the tests.
func WithEgressAtMost(tier EgressTier) Option { return withEgressAtMost(tier) }

// WaitWarm hands waitWarm to the tests.
func WaitWarm(ctx context.Context, l *Launcher) error { return l.waitWarm(ctx) }

// WarmPid returns the pid of the launcher started ahead, 0 when there is
// none.
func WarmPid(l *Launcher) int {
	l.pool.mu.Lock()
	defer l.pool.mu.Unlock()
	if l.pool.next == nil {
		return 0
	}
	return l.pool.next.proc.Pid
}
