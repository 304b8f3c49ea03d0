package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agent/tools"
	"github.com/volcanic/telegram-agent/internal/approvals"
	"github.com/volcanic/telegram-agent/internal/chat"
	"github.com/volcanic/telegram-agent/internal/claudecode"
	"github.com/volcanic/telegram-agent/internal/hardening"
	"github.com/volcanic/telegram-agent/internal/mcp"
	"github.com/volcanic/telegram-agent/internal/openai"
	"github.com/volcanic/telegram-agent/internal/prompt"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/sandbox"
	"github.com/volcanic/telegram-agent/internal/scheduler"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
	usagelog "github.com/volcanic/telegram-agent/internal/usage"
)

// runBot starts the bot in this order: options (every problem at
// once), the redacting logger, the policy options validated, host
// hardening, the spawn policy, the agent and its extensions, and only then
// polling. Nothing is spawned and no update is fetched before hardening.
// It returns 0 after a clean shutdown (ctx cancelled by SIGTERM or SIGINT).
func runBot(ctx context.Context, args []string, _, stderr io.Writer) int {
	fs := newFlagSet("run", "start the bot (the default when no sub-command is given)", stderr)
	usage := fs.Usage
	fs.Usage = func() {
		usage()
		fmt.Fprintln(stderr)
		printEnvUsage(stderr)
	}
	if code, done := parseFlags(fs, args); done {
		return code
	}
	cfg, ok := loadConfig(stderr)
	if !ok {
		return 2
	}
	return run(ctx, cfg, stderr, nil)
}

// toolTimeout is the agent's backstop for any one tool call: a minute past
// the longest a bash call or an MCP call may take by itself, so the tools'
// own limits (which report what was printed so far) always fire first, and
// a tool that ignores its context still cannot hold a chat forever.
func toolTimeout(cfg Config) time.Duration {
	return max(cfg.BashTimeoutMax, mcp.DefaultCallTimeout) + time.Minute
}

// exitConfig is the exit code for a configuration Telegram or the host
// rejected after start-up (EX_CONFIG of sysexits.h).
const exitConfig = 78

// printConfigProblems lists every configuration problem, one a line. The
// messages name variables, never their values.
func printConfigProblems(w io.Writer, err error) {
	lines := strings.Split(err.Error(), "\n")
	fmt.Fprintf(w, "telegram-bot: the configuration has %d problem(s):\n", len(lines))
	for _, line := range lines {
		fmt.Fprintf(w, "  - %s\n", line)
	}
	fmt.Fprintln(w, "Run `telegram-bot --help` for the variables, `telegram-bot doctor` for a full check.")
}

// newLogger returns the logger every line goes through: the text or JSON
// handler on w, behind the redactor.
func newLogger(w io.Writer, cfg Config, red *redactor.Redactor) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if cfg.LogFormat == "json" {
		h = slog.NewJSONHandler(w, opts)
	}
	return slog.New(red.Handler(h))
}

// run starts the bot from a checked configuration and runs it until ctx is
// done. environ is what agent processes inherit from (nil: the real
// environment).
func run(ctx context.Context, cfg Config, stderr io.Writer, environ func() map[string]string) int {
	// The bot's own uid, and the agent's, come first: from here on the bot
	// runs unprivileged, and reads nothing before (agent_user.go).
	user, err := becomeBotUser(cfg, cfg.Policy.HardenHostProcess)
	if err != nil {
		fmt.Fprintf(stderr, "telegram-bot: %v\n", err)
		return 2
	}
	defer user.close()
	cfg.Sandbox.Spawner = user.spawner
	// The MCP configuration comes first: the values it hands to servers on
	// purpose are secrets too, for the policy and the redactor alike. Its
	// errors name sources, servers and variables, never values.
	drawStandIns(&cfg)
	lookup := os.LookupEnv
	if environ != nil {
		env := environ()
		lookup = func(name string) (string, bool) { v, ok := env[name]; return v, ok }
	}
	mcpCfg, err := loadMCP(cfg, lookup)
	if err != nil {
		printConfigProblems(stderr, err)
		return 2
	}
	addSecrets(&cfg, mcpCfg.Secrets)

	red := redactor.New(cfg.Policy.SecretValues)
	logger := newLogger(stderr, cfg, red)
	logger.Info("telegram-bot starting", "version", buildVersion(), "secrets", strings.Join(cfg.SecretNames, ", "))
	for _, w := range append(cfg.Warnings, mcpCfg.Warnings...) {
		logger.Warn(w)
	}
	for _, l := range user.info {
		logger.Info(l)
	}
	for _, w := range user.warn {
		logger.Warn(w)
	}
	if w := exposingParent("/proc", os.Getppid(), cfg.Policy.SecretValues); w != "" {
		logger.Warn(w)
	}

	if err := cfg.Policy.Validate(); err != nil {
		logger.Error("the process environment options are invalid", "err", err)
		return 2
	}
	hardening.Apply(cfg.Policy.HardenHostProcess, logger)
	// The credential proxy comes before the sandbox, which must let
	// agent processes read its CA bundle; it fails closed (a bound
	// variable is withheld when it cannot start).
	creds := startCredentialProxy(cfg, agentEnviron(environ), red, logger, caBundleDir())
	defer creds.Close()
	if text, warn := creds.line(); warn {
		logger.Error(text)
	} else {
		logger.Info(text)
	}
	creds.apply(&cfg.Policy, &cfg.Sandbox)
	// One launcher is kept started ahead, so a bash call does not wait
	// for the launcher's own start (docs/performance.md).
	enf, running := creds.Enforcement()
	box, egressLine, egressWarn, err := setupConfinedSandbox(cfg, agentEnviron(environ), enf, running, sandbox.WithWarm())
	if err != nil {
		logger.Error("agent sandbox", "err", err)
		return 2
	}
	switch {
	case egressWarn:
		logger.Warn(egressLine)
	case egressLine != "":
		logger.Info(egressLine)
	}
	if box.launcher != nil {
		defer box.launcher.Close()
		// A launcher killed from outside leaves its command's tree to
		// the bot, which ends it.
		if err := sandbox.ReapLeftovers(ctx); err != nil {
			logger.Warn("agent sandbox: a launcher killed from outside leaves its processes running", "err", err)
		}
	}
	if box.warn {
		logger.Warn(box.line)
	} else {
		logger.Info(box.line)
	}
	if w := socketsWarning(findReachableSockets(ctx, hostSocketPlaces(os.Getuid(), agentEnviron(environ)))); w != "" {
		logger.Warn(w)
	}
	cfg.Policy.Sandbox = box.launcher
	policy, err := spawnpolicy.New(cfg.Policy, logger, environ)
	if err != nil {
		logger.Error("spawn policy", "err", err)
		return 1
	}
	logger.Info(policy.Summary())
	logger.Info("Approvals: " + cfg.Approvals.summary())
	for _, name := range cfg.Passed {
		if slices.Contains(cfg.Credentials.names(), name) {
			continue // the credential proxy's line says what they get
		}
		logger.Info("passed to agent processes; its value is redacted", "variable", name)
	}

	for _, dir := range []string{cfg.AgentDir, cfg.WorkspaceDir} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			logger.Error("cannot create a directory", "dir", dir, "err", err)
			return 1
		}
	}
	restoreStateModes(cfg, logger)

	var claudeProvider *claudecode.Provider
	var provider agent.Provider = openai.NewProvider(openai.Config{APIKey: cfg.OpenAIKey, BaseURL: cfg.OpenAIBaseURL, Logger: logger,
		FallbackModels: cfg.FallbackModels})
	if cfg.Claude.Enabled {
		cp, err := newClaudeProvider(cfg, environ, logger)
		if err != nil {
			logger.Error("claude-code provider", "err", err)
			return 1
		}
		defer cp.Close()
		provider, claudeProvider = cp, cp
		if box.launcher == nil {
			logger.Warn(claudeUnsandboxedWarning)
		}
	}
	usageStore, err := usagelog.Open(filepath.Join(cfg.AgentDir, usagelog.FileName), usagelog.WithLogger(logger))
	if err != nil {
		logger.Error("usage log", "err", err)
		return 1
	}
	defer usageStore.Close()
	// Extensions, in load order: the scheduler, then MCP. The scheduler
	// fires through the chat host, which needs the agent: it is handed the
	// host when it starts, below, before polling starts.
	sched, err := scheduler.New(filepath.Join(cfg.AgentDir, "jobs.json"),
		scheduler.WithLogger(logger), scheduler.WithWorkspace(cfg.WorkspaceDir))
	if err != nil {
		logger.Error("scheduler", "err", err)
		return 1
	}
	// MCP servers keep their HOME, npm's cache and pip's user base in the
	// agent dir, which agent processes cannot write, not in the workspace.
	mcpOpts := []mcp.Option{mcp.WithLogger(logger), mcp.WithServerHome(mcpServerHome(cfg)),
		mcp.WithAgentWritable(box.agentWritable(cfg)...), mcp.WithDiscoveryTimeout(cfg.MCPTimeout),
		mcp.WithStatusHook(mcpStatusWriter(cfg.AgentDir, logger))}
	if box.view != nil && cfg.Sandbox.Spawner != nil {
		// Discovery's working directories in the agent's own temporary
		// directory, where a server of the agent's uid can enter them.
		mcpOpts = append(mcpOpts, mcp.WithTempDir(box.view.Temp))
	}
	mcpExt := mcp.New(mcpCfg, mcpOpts...)
	defer mcpExt.Close()
	// Approvals come last, so that they see every call's arguments after
	// the other extensions' handlers; they ask through the chat host,
	// which hands itself to each turn (as send_file finds it).
	approver := approvals.New(append(cfg.Approvals.options(), approvals.WithWritable(box.writable(cfg)...))...)
	extensions := []agent.Extension{sched, mcpExt, approver}
	// The system prompt is built per turn: the template, then the
	// operator's SYSTEM.md (agent dir) and AGENTS.md (workspace root),
	// which the agent may write, so it is opened through the view.
	pb := prompt.NewBuilder(cfg.AgentDir, cfg.WorkspaceDir, logger, prompt.WithView(box.view))

	ag, err := agent.New(provider, policy, red,
		agent.WithLogger(logger),
		agent.WithModel(cfg.Model),
		agent.WithSessionDir(filepath.Join(cfg.AgentDir, "sessions")),
		agent.WithWorkspace(cfg.WorkspaceDir),
		agent.WithDefaultTimeZone(cfg.DefaultTimeZone),
		agent.WithTools(append(tools.All(tools.WithMaxTimeout(cfg.BashTimeoutMax), tools.WithView(box.view)), tools.NewSendFile(tools.WithView(box.view)))...),
		agent.WithToolTimeout(toolTimeout(cfg)),
		agent.WithSystemPrompt(pb.Prompt),
		// The time goes with each message, so the system prompt stays the
		// same bytes and the provider's prompt cache can keep it.
		agent.WithMessageTimes(),
		agent.WithContextWindow(cfg.ContextWindow),
		agent.WithExtensions(extensions...),
		agent.WithUsageRecorder(chat.UsageRecorder(usageStore, logger)),
	)
	if err != nil {
		logger.Error("agent", "err", err)
		return 1
	}
	defer ag.Close()
	if err := ag.Start(ctx); err != nil {
		logger.Error("extensions", "err", err)
		return 1
	}

	opts := []chat.Option{chat.WithLogger(logger), chat.WithJobBoard(jobBoard{sched}),
		chat.WithUsage(usageStore, cfg.Prices, cfg.DailyLimit), chat.WithStatusLines(joinLines(mcpStatusLines(mcpExt), creds.statusLines(egressLine)))}
	if claudeProvider != nil {
		opts = append(opts, chat.WithPlanWindows(planWindows(claudeProvider, usageStore.Windows)))
	}
	if cfg.SpeechKey != "" {
		opts = append(opts, chat.WithTranscriber(openai.NewTranscriber(openai.TranscriberConfig{APIKey: cfg.SpeechKey, BaseURL: cfg.SpeechBaseURL, Model: cfg.SpeechModel})))
	}
	if cfg.WebhookURL != "" {
		opts = append(opts, chat.WithWebhook(chat.Webhook{URL: cfg.WebhookURL, Listen: cfg.WebhookListen, Secret: cfg.WebhookSecret}))
	}
	host, err := chat.New(chat.Config{
		Token:             cfg.BotToken,
		APIURL:            cfg.APIURL,
		AllowedUserIDs:    cfg.AllowedUserIDs,
		Agent:             ag,
		Redactor:          red,
		AgentDir:          cfg.AgentDir,
		WorkspaceDir:      cfg.WorkspaceDir,
		View:              box.view,
		DefaultTimeZone:   cfg.DefaultTimeZone,
		Model:             cfg.Model,
		Models:            cfg.switchableModels(),
		SilentToStrangers: !cfg.StrangerReply,
		ToolStatus:        cfg.ToolStatus,
	}, opts...)
	if err != nil {
		logger.Error("chat host", "err", err)
		return 1
	}
	if err := sched.Start(ctx, host); err != nil {
		logger.Error("scheduler", "err", err)
		return 1
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		if err := sched.Stop(stopCtx); err != nil {
			logger.Warn("scheduler stop", "err", err)
		}
	}()
	statsCtx, stopStats := context.WithCancel(ctx)
	statsDone := make(chan struct{})
	go func() { defer close(statsDone); logRuntimeStats(statsCtx, logger, runtimeStatsEvery) }()
	trimDone := make(chan struct{})
	go func() { defer close(trimDone); trimWhenIdle(statsCtx, idleTrimEvery) }()
	defer func() { stopStats(); <-statsDone; <-trimDone }()
	if err := host.Run(ctx); err != nil {
		logger.Error("chat host stopped", "err", err)
		if errors.Is(err, chat.ErrUnauthorized) || errors.Is(err, chat.ErrWebhookRejected) {
			// A rejected token or webhook does not heal by restarting:
			// EX_CONFIG tells a supervisor this is a configuration error.
			return exitConfig
		}
		return 1
	}
	logger.Info("telegram-bot stopped")
	return 0
}

// agentEnviron returns the environment agent processes inherit from:
// environ's, or the process's own when environ is nil.
func agentEnviron(environ func() map[string]string) map[string]string {
	if environ != nil {
		return environ()
	}
	return environMap()
}

// jobBoard shows the scheduler's jobs to /jobs.
type jobBoard struct{ s *scheduler.Scheduler }

func (b jobBoard) ListJobs(target string) []chat.JobView {
	var out []chat.JobView
	for _, j := range b.s.List(target) {
		name := j.Name
		if j.CutShort() {
			name += " (a restart cut it short: it does not run again)"
		}
		out = append(out, chat.JobView{ID: j.ID, Name: name, Schedule: j.Schedule, Next: b.s.Next(j)})
	}
	return out
}

func (b jobBoard) CancelJob(target, id string) error { return b.s.Cancel(target, id) }
