//go:build unix

package mcp

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
)

// gone reports whether no process pid exists any more (it has exited and
// been reaped), waiting up to d.
func gone(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestLifecycle(t *testing.T) {
	tests := []struct {
		name string
		opts []Option
		// end ends the server's life; wait is how long it may take.
		end  func(h *harness, s *agent.Session)
		wait time.Duration
		// after is the error the next call gives ("" for a restart).
		after string
	}{
		{
			name: "session close (/new)",
			end:  func(_ *harness, s *agent.Session) { s.Close() },
		},
		{
			name:  "shutdown",
			end:   func(h *harness, _ *agent.Session) { _ = h.ext.Close() },
			after: "shut down",
		},
		{
			name: "idle timeout",
			opts: []Option{WithIdleTimeout(200 * time.Millisecond)},
			end:  func(*harness, *agent.Session) {},
			wait: 10 * time.Second,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, Config{Servers: []ServerConfig{fakeServer(t, "fake")}}, tt.opts...)
			s := h.session(t, "life")
			other := h.session(t, "other")
			pid := pidOf(t, h, s)
			otherPid := pidOf(t, h, other)
			if pid == otherPid {
				t.Fatal("two sessions share a server process")
			}
			tt.end(h, s)
			if !gone(pid, tt.wait) {
				t.Fatalf("the server process %d is still running", pid)
			}
			if tt.wait == 0 && gone(otherPid, 0) && tt.after == "" {
				t.Error("the other session's server was stopped too")
			}
			s = h.session(t, "life")
			if tt.after != "" {
				msg := h.call(t, s, "mcp__fake__pid", `{}`)
				if text := agent.TextOf(msg.Content); !msg.IsError || !strings.Contains(text, tt.after) {
					t.Errorf("after the end, a call gave %v: %s", msg.IsError, text)
				}
				return
			}
			if again := pidOf(t, h, s); again == pid {
				t.Error("the server was not started again")
			}
		})
	}
}
