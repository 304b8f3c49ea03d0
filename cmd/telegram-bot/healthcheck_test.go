package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/chat"
)

func TestCheckHeartbeat(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	tests := []struct {
		name    string
		age     time.Duration // negative: no file
		wantErr string
	}{
		{name: "fresh", age: 5 * time.Second},
		{name: "just under the limit", age: 89 * time.Second},
		{name: "stale", age: 3 * time.Minute, wantErr: "heartbeat is 3m0s old"},
		{name: "missing", age: -1, wantErr: "no heartbeat"},
		{name: "set to 1970 by a host that cannot write", age: time.Since(time.Unix(0, 0)), wantErr: "cannot write AGENT_DIR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-"))
			if tt.age >= 0 {
				if err := os.WriteFile(path, nil, 0o600); err != nil {
					t.Fatal(err)
				}
				mtime := now.Add(-tt.age)
				if err := os.Chtimes(path, mtime, mtime); err != nil {
					t.Fatal(err)
				}
			}
			err := checkHeartbeat(path, now, heartbeatMaxAge)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("checkHeartbeat = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("checkHeartbeat = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestHealthcheckCommand(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	beat := filepath.Join(dir, HeartbeatFile)
	load := func() (Env, error) { return Env{AgentDir: dir}, nil }
	tests := []struct {
		name string
		age  time.Duration // negative: no heartbeat file
		// unwritable leaves the chat host's marker of a failing agent dir.
		unwritable bool
		wantCode   int
		wantOut    string
	}{
		{name: "missing", age: -1, wantCode: 1, wantOut: "unhealthy: no heartbeat"},
		{name: "fresh", age: time.Second, wantCode: 0, wantOut: "healthy"},
		{name: "stale", age: 10 * time.Minute, wantCode: 1, wantOut: "unhealthy: heartbeat is 10m0s old"},
		{name: "agent dir unwritable", age: -1, unwritable: true, wantCode: 1, wantOut: "unhealthy: the bot cannot write AGENT_DIR since"},
		{name: "unwritable with a fresh heartbeat left", age: time.Second, unwritable: true, wantCode: 1, wantOut: "unhealthy: the bot cannot write AGENT_DIR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(beat)
			os.Remove(filepath.Join(dir, chat.UnwritableFile))
			if tt.unwritable {
				if err := os.WriteFile(filepath.Join(dir, chat.UnwritableFile), nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if tt.age >= 0 {
				if err := os.WriteFile(beat, nil, 0o600); err != nil {
					t.Fatal(err)
				}
				mtime := now.Add(-tt.age)
				if err := os.Chtimes(beat, mtime, mtime); err != nil {
					t.Fatal(err)
				}
			}
			var out strings.Builder
			code := healthcheck(&out, load, now, func() int { return 7 })
			if code != tt.wantCode || !strings.HasPrefix(out.String(), tt.wantOut) {
				t.Errorf("healthcheck = %d, %q; want %d, %q...", code, out.String(), tt.wantCode, tt.wantOut)
			}
			if strings.Count(strings.TrimSpace(out.String()), "\n") != 0 {
				t.Errorf("healthcheck printed more than one line: %q", out.String())
			}
		})
	}
}

// TestHealthcheckDegraded: a fresh heartbeat with the agent unconfined
// (auto on a kernel without Landlock) is "healthy, degraded", exit code 0; with
// Landlock, or the sandbox off on purpose, it is healthy.
func TestHealthcheckDegraded(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, HeartbeatFile), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		mode    string
		abi     int
		wantOut string
	}{
		{"", 0, "healthy, degraded: AGENT_SANDBOX=auto and the kernel offers no Landlock"},
		{"auto", 0, "healthy, degraded: "},
		{"auto", 4, "healthy"},
		{"off", 0, "healthy"},
	}
	for _, tt := range tests {
		t.Run(tt.mode+"/"+strconv.Itoa(tt.abi), func(t *testing.T) {
			load := func() (Env, error) { return Env{AgentDir: dir, AgentSandbox: tt.mode}, nil }
			var out strings.Builder
			code := healthcheck(&out, load, time.Now(), func() int { return tt.abi })
			if code != 0 || !strings.HasPrefix(out.String(), tt.wantOut) {
				t.Errorf("healthcheck = %d, %q; want 0, %q...", code, out.String(), tt.wantOut)
			}
		})
	}
}
