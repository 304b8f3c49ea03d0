package main

import (
	"io"
	"log/slog"
	"strings"

	"github.com/volcanic/telegram-agent/internal/hardening"
)

// hardenAtStart hardens the process before anything else happens, for
// every sub-command: any run of this binary (the bot, the doctor, the
// healthcheck a container starts every 30 s) holds the deployment's
// secrets in its environment, and a process the agent left running could
// otherwise read them from /proc/<pid>/environ while it lives. Only
// PROCESS_ENV_HARDEN_HOST_PROCESS=false (read directly, before the rest of
// the configuration is checked) turns it off. The first call to
// hardening.Apply wins, so the later calls of run and the spawn policy are
// no-ops.
//
// Its log lines carry no secret (fixed texts and errno values), so they go
// to w without the redactor, which needs the checked configuration. The bot
// logs at LOG_LEVEL, the doctor reports warnings, and the other
// sub-commands only errors, so a healthcheck or --version stays quiet.
func hardenAtStart(getenv func(string) string, subcommand string, w io.Writer) {
	p := startHardening(getenv, subcommand)
	opts := &slog.HandlerOptions{Level: p.level}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if p.json {
		h = slog.NewJSONHandler(w, opts)
	}
	hardening.Apply(p.enabled, slog.New(h))
}

// startPlan is what hardenAtStart does: whether it hardens, and how it logs.
type startPlan struct {
	enabled bool
	level   slog.Level
	json    bool
}

// startHardening decides the start-up hardening from the environment. Only
// an explicit false turns it off; anything else (unset, true, a typo the
// configuration check reports later) hardens, failing closed.
func startHardening(getenv func(string) string, subcommand string) startPlan {
	p := startPlan{enabled: true, level: slog.LevelError}
	if on, ok := parseSwitch(getenv("PROCESS_ENV_HARDEN_HOST_PROCESS")); ok && !on {
		p.enabled = false
	}
	switch subcommand { // anything else (help, version, healthcheck) logs errors only
	case "doctor":
		p.level = slog.LevelWarn
	case "run":
		if err := p.level.UnmarshalText([]byte(strings.TrimSpace(getenv("LOG_LEVEL")))); err != nil {
			p.level = slog.LevelInfo
		}
	}
	p.json = strings.EqualFold(strings.TrimSpace(getenv("LOG_FORMAT")), "json")
	return p
}

// subcommandOf returns the sub-command args select ("run" by default).
func subcommandOf(args []string) string {
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		return args[0]
	}
	return "run"
}

// startName names the run for hardenAtStart: the sub-command, or the help
// or version flag when that is what was asked for (args[0] or a run flag).
func startName(args []string) string {
	for _, a := range args {
		if isHelp(a) || isVersion(a) {
			return a
		}
	}
	return subcommandOf(args)
}
