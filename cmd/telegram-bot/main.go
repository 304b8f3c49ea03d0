// Command telegram-bot is a Telegram-hosted AI agent that keeps the host's
// secrets away from the agent: the processes it starts, the model provider
// and the chat never see the bot token, the API keys or any other secret the
// deployment holds.
//
// Usage:
//
//	telegram-bot [run]       start the bot (the default)
//	telegram-bot doctor      check the configuration and the host, print what agent processes will see
//	telegram-bot healthcheck exit 0 when the polling loop is alive (for HEALTHCHECK)
//	telegram-bot version     print the version
//	telegram-bot claude-login log Claude Code in (MODEL_PROVIDER=claude-code)
//
// The configuration is read from environment variables; `telegram-bot
// --help` lists them.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/volcanic/telegram-agent/internal/claudecode"
	"github.com/volcanic/telegram-agent/internal/sandbox"
)

func main() {
	// The sandbox launcher mode comes first: it is this binary started for
	// an agent process, and does nothing of the bot's own start.
	if sandbox.IsLaunch(os.Args) {
		os.Exit(sandbox.Launch(os.Args, os.Stderr))
	}
	hardenAtStart(os.Getenv, startName(os.Args[1:]), os.Stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := dispatch(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// command is one sub-command: its name, a line of help, and what it runs.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"run", "start the bot (the default when no sub-command is given)", runBot},
		{"doctor", "check the configuration and the host; print what agent processes will and will not see", runDoctor},
		{"healthcheck", "exit 0 when the polling loop's heartbeat is fresh, 1 otherwise", runHealthcheck},
		{"version", "print the version", runVersion},
		{"claude-login", "log Claude Code in to your Claude plan (MODEL_PROVIDER=claude-code), with the bot's provider environment", runClaudeLogin},
	}
}

// dispatch runs the sub-command args names and returns the exit code.
func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch {
		case isHelp(args[0]):
			usage(stdout)
			return 0
		case isVersion(args[0]):
			return runVersion(ctx, nil, stdout, stderr)
		}
	}
	name := subcommandOf(args)
	if len(args) > 0 && args[0] == name {
		args = args[1:]
	}
	if name == hardenProbeCommand {
		return runHardenProbe(ctx, args, stdout, stderr)
	}
	// The bridge is this binary started by claude as its MCP server: stdin
	// and stdout are the MCP stream, hardened like every run (main).
	if name == claudecode.BridgeCommand {
		return claudecode.RunBridge(ctx, args, os.Stdin, os.Stdout, stderr)
	}
	for _, c := range commands() {
		if c.name == name {
			return c.run(ctx, args, stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "telegram-bot: unknown command %q\n\n", name)
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "telegram-bot: a Telegram-hosted AI agent that keeps the host's secrets away from the agent.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: telegram-bot [command] [--help]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	printEnvUsage(w)
}

// isHelp reports whether a is a way of asking for the usage.
func isHelp(a string) bool {
	switch a {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}

// isVersion reports whether a is a way of asking for the version.
func isVersion(a string) bool {
	switch a {
	case "-v", "-version", "--version":
		return true
	}
	return false
}
