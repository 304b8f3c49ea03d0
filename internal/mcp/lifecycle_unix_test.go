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

// TestCallTimeout checks that a server that never answers a call is killed
// when the call timeout passes, the call gets an error result saying so,
// and the next call starts the server again.
func TestCallTimeout(t *testing.T) {
	h := newHarness(t, Config{Servers: []ServerConfig{fakeServer(t, "fake")}}, WithCallTimeout(2*time.Second))
	s := h.session(t, "stall")
	pid := pidOf(t, h, s)
	msg := h.call(t, s, "mcp__fake__stall", `{}`)
	text := agent.TextOf(msg.Content)
	if !msg.IsError {
		t.Fatalf("a call the server never answered is not an error result: %s", text)
	}
	for _, want := range []string{`MCP server "fake"`, "did not answer within 2s"} {
		if !strings.Contains(text, want) {
			t.Errorf("the error lacks %q: %s", want, text)
		}
	}
	if !gone(pid, 0) {
		t.Errorf("the server process %d that did not answer is still running", pid)
	}
	if again := pidOf(t, h, s); again == pid {
		t.Error("the server was not started again")
	}
}
