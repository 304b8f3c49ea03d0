package spawnpolicy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/volcanic/telegram-agent/internal/hardening"
	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// Policy prepares the context of every process started on the agent's
// behalf. It is immutable once built and safe for concurrent use.
type Policy struct {
	rules   rules
	hooks   []Hook
	logger  *slog.Logger
	environ func() map[string]string
	// denyCount and allow are for the start-up line and the doctor.
	denyCount int
	allow     []string
	// launcher starts every process in the sandbox; nil when it is off.
	launcher *sandbox.Launcher
	// standIns and extra are Options.StandIns and Options.Extra.
	standIns, extra map[string]string
	// notices is Options.Notices, which every prepared context gets.
	notices Notices
}

// New builds a policy from opts, which must be valid (see
// [Options.Validate]). It hardens the host process first, through
// hardening.Apply(opts.HardenHostProcess, logger), whose first call wins.
// logger nil discards. environ returns the environment children inherit
// from, and is called on every Prepare; nil means the real process
// environment. New compiles Deny and Allow once, so Prepare does no parsing.
func New(opts Options, logger *slog.Logger, environ func() map[string]string) (*Policy, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("spawnpolicy: invalid process environment options: %w", err)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	hardening.Apply(opts.HardenHostProcess, logger)
	if environ == nil {
		environ = processEnviron
	}
	return &Policy{
		rules:     compileRules(opts),
		hooks:     slices.Clone(opts.Hooks),
		logger:    logger,
		environ:   environ,
		denyCount: len(opts.Deny),
		allow:     slices.Clone(opts.Allow),
		launcher:  opts.Sandbox,
		standIns:  maps.Clone(opts.StandIns),
		extra:     maps.Clone(opts.Extra),
		notices:   opts.Notices,
	}, nil
}

// Sandbox returns the launcher every prepared process starts through, nil
// when the sandbox is off.
func (p *Policy) Sandbox() *sandbox.Launcher { return p.launcher }

// Prepare turns req into the complete context of a child process:
//
//  1. snapshot the environment;
//  2. remove the inherited variables the rules reject (see the package
//     documentation for the precedence), and number again the git
//     configuration pairs (GIT_CONFIG_COUNT) left whole when that removed
//     a part of one, which git would refuse to run with; then give the
//     kept variables that have one their stand-ins (Options.StandIns),
//     and set Options.Extra;
//  3. apply req.Env, setting non-nil values and removing nil ones, unfiltered;
//  4. set TZ to req.TimeZoneID unless req.Env names TZ (not on Windows);
//  5. run the hooks in order;
//  6. log at Debug the purpose, origin, scope and the removed names (never a
//     value).
//
// It fails closed: a request without a command or a working directory, a
// variable the OS cannot carry (before or after the hooks), or a hook that
// fails, panics or returns an unusable context is an error, and the zero
// Context comes back.
func (p *Policy) Prepare(req Request) (Context, error) {
	if strings.TrimSpace(req.Command) == "" {
		return Context{}, errors.New("spawnpolicy: the request has no command")
	}
	if req.Cwd == "" {
		return Context{}, errors.New("spawnpolicy: the request has no working directory")
	}
	if err := checkExplicit(req.Env, foldNames); err != nil {
		return Context{}, fmt.Errorf("spawnpolicy: the request's environment: %w", err)
	}

	debug := p.logger.Enabled(context.Background(), slog.LevelDebug)
	inherited := p.environ()
	env := make(map[string]string, len(inherited)+len(req.Env)+1)
	var removed []string
	for name, value := range inherited {
		if _, gone := p.rules.removedBy(name, value); gone {
			if debug {
				removed = append(removed, name)
			}
			continue
		}
		env[name] = value
	}
	gitConfigAfterFilter(env, inherited)
	substitute(env, p.standIns, p.extra)
	for name, value := range req.Env {
		if value == nil {
			unsetVar(env, name, foldNames)
		} else {
			setVar(env, name, *value, foldNames)
		}
	}
	if setsTZ && req.TimeZoneID != "" && !mentions(req.Env, "TZ", foldNames) {
		setVar(env, "TZ", req.TimeZoneID, foldNames)
	}

	c := Context{
		Purpose:   req.Purpose,
		Command:   req.Command,
		Args:      slices.Clone(req.Args),
		Cwd:       req.Cwd,
		Env:       env,
		Scope:     req.Scope,
		SessionID: req.SessionID,
		Origin:    req.Origin,
		Sandbox:   p.launcher,
		Notices:   p.notices,
		SandboxPaths: sandbox.Paths{
			Read:  slices.Clone(req.SandboxPaths.Read),
			Write: slices.Clone(req.SandboxPaths.Write),
		},
	}
	if err := checkContext(c, foldNames); err != nil {
		return Context{}, fmt.Errorf("spawnpolicy: the prepared context: %w", err)
	}
	c, err := runHooks(p.hooks, c)
	if err != nil {
		return Context{}, err
	}

	if debug {
		slices.Sort(removed)
		p.logger.Debug("process environment prepared",
			slog.String("purpose", c.Purpose.String()),
			slog.String("origin", c.Origin),
			slog.String("scope", c.Scope),
			slog.Any("removed", removed))
	}
	return c, nil
}
