package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/volcanic/telegram-agent/internal/claudecode"
)

// runClaudeLogin runs `claude auth login` with the provider's environment
// (its home in the agent dir, the allow-list), for a terminal such as
// Coolify's: the login lands where the bot's claude reads it. Run as root
// in a home the bot's user owns, it gives the new files to that user.
func runClaudeLogin(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("claude-login", "log Claude Code in to your Claude plan, for MODEL_PROVIDER=claude-code", stderr)
	if code, done := parseFlags(fs, args); done {
		return code
	}
	cfg, ok := loadConfig(stderr)
	if !ok {
		return 2
	}
	if !cfg.Claude.Enabled {
		fmt.Fprintln(stderr, "telegram-bot: claude-login is for MODEL_PROVIDER=claude-code")
		return 2
	}
	home := claudeHome(cfg)
	if err := os.MkdirAll(claudecode.ConfigDir(home), 0o700); err != nil {
		fmt.Fprintf(stderr, "telegram-bot: the provider home: %v\n", err)
		return 1
	}
	cmd := exec.CommandContext(ctx, "claude", "auth", "login", "--claudeai")
	claudecode.Process(environMap(), home, "", "", home).ApplyTo(cmd)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	runErr := cmd.Run()
	if err := giveToOwner(home); err != nil {
		fmt.Fprintf(stderr, "telegram-bot: the login's files could not be given to the bot's user: %v\n", err)
	}
	if runErr != nil {
		fmt.Fprintf(stderr, "telegram-bot: claude auth login failed: %v\n", runErr)
		return 1
	}
	fmt.Fprintln(stdout, "Logged in. `telegram-bot doctor` shows the login state.")
	return 0
}

// loadConfig reads and checks the configuration from the environment, as
// run does, printing every problem to stderr; ok is false when there were
// any.
func loadConfig(stderr io.Writer) (cfg Config, ok bool) {
	e, err := LoadEnv()
	if err != nil {
		fmt.Fprintf(stderr, "telegram-bot: the configuration cannot be read: %v\n", err)
		return Config{}, false
	}
	cfg, err = e.Parse(environMap())
	if err != nil {
		printConfigProblems(stderr, err)
		return Config{}, false
	}
	return cfg, true
}

// giveToOwner makes everything under home belong to home's owner, when
// this runs as root: a login made from a root terminal must be readable by
// the bot's user.
func giveToOwner(home string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	fi, err := os.Stat(home)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st.Uid == 0 {
		return nil
	}
	return filepath.WalkDir(home, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, int(st.Uid), int(st.Gid))
	})
}
