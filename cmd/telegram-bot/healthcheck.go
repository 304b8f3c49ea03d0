package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/volcanic/telegram-agent/internal/chat"
	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// HeartbeatFile is the file in the agent dir the chat host touches after
// every successful getUpdates, or in webhook mode after every healthy
// check of the webhook; the chat host defines it.
const HeartbeatFile = chat.HeartbeatFile

// heartbeatMaxAge is how old the heartbeat may be before the bot counts as
// unhealthy: a long poll lasts under a minute, and the webhook is checked
// every 30 s, so 90 s leaves room for one slow round trip.
const heartbeatMaxAge = 90 * time.Second

// runHealthcheck exits 0 when the heartbeat file is fresh and 1, with a
// one-line reason, otherwise. It needs only AGENT_DIR, so a container's
// HEALTHCHECK works whatever else is misconfigured.
func runHealthcheck(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("healthcheck", "exit 0 when the heartbeat is fresh (under 90 s; touched by polling, or by the webhook's check), 1 otherwise", stderr)
	if code, done := parseFlags(fs, args); done {
		return code
	}
	return healthcheck(stdout, LoadEnv, time.Now(), sandbox.ABI)
}

// healthcheck is runHealthcheck with its inputs injected: it reads AGENT_DIR
// (and AGENT_SANDBOX) through loadEnv, judges the heartbeat at now, and
// asks abi for the kernel's Landlock ABI. A healthy bot whose agent runs
// unconfined (AGENT_SANDBOX=auto on a kernel without Landlock) is
// "healthy, degraded", exit code 0: it serves, and restarting it changes
// nothing.
func healthcheck(stdout io.Writer, loadEnv func() (Env, error), now time.Time, abi func() int) int {
	e, err := loadEnv()
	if err != nil {
		fmt.Fprintf(stdout, "unhealthy: %v\n", err)
		return 1
	}
	dir, err := absDir("AGENT_DIR", e.AgentDir)
	if err != nil {
		fmt.Fprintf(stdout, "unhealthy: %v\n", err)
		return 1
	}
	if err := checkWritable(filepath.Join(dir, chat.UnwritableFile)); err != nil {
		fmt.Fprintf(stdout, "unhealthy: %v\n", err)
		return 1
	}
	if err := checkHeartbeat(filepath.Join(dir, HeartbeatFile), now, heartbeatMaxAge); err != nil {
		fmt.Fprintf(stdout, "unhealthy: %v\n", err)
		return 1
	}
	// A failed MCP server is a note, not a failure: the bot answers, with
	// fewer tools, and a restart would not bring the server back sooner.
	// Nor would it confine an agent the kernel cannot confine.
	var notes []string
	if mode, err := sandbox.ParseMode(e.AgentSandbox); err == nil && mode == sandbox.Auto && abi() == 0 {
		notes = append(notes, "AGENT_SANDBOX=auto and the kernel offers no Landlock, so agent processes run unconfined (AGENT_SANDBOX=required refuses to start instead)")
	}
	if note := mcpDegraded(dir, now); note != "" {
		notes = append(notes, note)
	}
	if len(notes) > 0 {
		fmt.Fprintf(stdout, "healthy, degraded: %s\n", strings.Join(notes, "; "))
		return 0
	}
	fmt.Fprintln(stdout, "healthy")
	return 0
}

// checkHeartbeat returns nil when the file at path was modified within
// maxAge of now.
func checkHeartbeat(path string, now time.Time, maxAge time.Duration) error {
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no heartbeat at %s: the bot has not polled Telegram or checked its webhook yet, or it cannot write AGENT_DIR (see the log)", path)
	}
	if err != nil {
		return fmt.Errorf("heartbeat: %w", err)
	}
	if !info.ModTime().After(time.Unix(0, 0)) {
		// The chat host sets it to 1970 while its writes fail and it
		// cannot leave its marker either.
		return errors.New("the bot cannot write AGENT_DIR (is the disk full, or were its permissions taken away?): new messages wait at Telegram until it can; see the log")
	}
	age := now.Sub(info.ModTime())
	if age > maxAge {
		return fmt.Errorf("heartbeat is %s old (limit %s): polling is stuck or stopped, or the webhook is unhealthy (see the log)", age.Round(time.Second), maxAge)
	}
	return nil
}

// checkWritable returns an error when the chat host has left the marker
// at path: its writes to the agent dir fail (a full disk), since the
// marker's time.
func checkWritable(path string) error {
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("heartbeat: %w", err)
	}
	return fmt.Errorf("the bot cannot write AGENT_DIR since %s (is the disk full, or were its permissions taken away?): new messages wait at Telegram until it can; see the log", info.ModTime().UTC().Format(time.RFC3339))
}
