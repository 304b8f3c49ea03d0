package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"slices"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/mcp"
	"github.com/volcanic/telegram-agent/internal/openai"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/scheduler"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// doctorMCPTimeout bounds MCP discovery in the doctor, per server.
const doctorMCPTimeout = 30 * time.Second

// doctorMCP loads the MCP configuration exactly as run does and discovers
// every enabled server (a stdio one through the same spawn policy, a
// Streamable HTTP one with its headers), so the operator sees which servers
// answer and how many tools each brings. A server whose command or script
// lies in agentWritable, where the agent's processes write, is a warning,
// as it is in the running bot's log.
func doctorMCP(ctx context.Context, r *report, cfg Config, lookup func(string) (string, bool), policy *spawnpolicy.Policy, agentWritable []string) {
	r.line("\nMCP servers")
	mcpCfg, err := loadMCP(cfg, lookup)
	if err != nil {
		r.problem("%v", err)
		return
	}
	for _, w := range mcpCfg.Warnings {
		r.warn("%s", w)
	}
	if len(mcpCfg.Servers) == 0 {
		switch {
		case mcpCfg.Inline:
			r.line("  none configured (MCP_CONFIG holds no servers)")
		case cfg.MCPConfig == "":
			r.line("  none configured (MCP_CONFIG is not set)")
		default:
			r.line("  none configured (%s)", cfg.MCPConfig)
		}
		return
	}
	if mcpCfg.Inline {
		r.line("  from MCP_CONFIG (inline JSON)")
	} else {
		r.line("  from %s", mcpCfg.Path)
	}
	if len(mcpCfg.Secrets) > 0 {
		r.line("  %d value(s) passed to servers on purpose: redacted in all tool output", len(mcpCfg.Secrets))
	}
	red := redactor.New(append(slices.Clone(cfg.Policy.SecretValues), mcpCfg.Secrets...))
	ext := mcp.New(mcpCfg, mcp.WithLogger(slog.New(slog.DiscardHandler)), mcp.WithDiscoveryTimeout(max(cfg.MCPTimeout, doctorMCPTimeout)),
		mcp.WithServerHome(mcpServerHome(cfg)), mcp.WithAgentWritable(agentWritable...))
	defer ext.Close()
	// Discovery runs when the extension is activated; the provider is never
	// called, since the doctor opens no session.
	ag, err := agent.New(openai.NewProvider(openai.Config{BaseURL: cfg.OpenAIBaseURL}), policy, red,
		agent.WithWorkspace(cfg.WorkspaceDir),
		agent.WithLogger(slog.New(slog.DiscardHandler)),
		agent.WithExtensions(ext))
	if err != nil {
		r.problem("MCP: %v", err)
		return
	}
	defer ag.Close()
	if err := ag.Start(ctx); err != nil {
		r.problem("MCP discovery: %v", err)
		return
	}
	// Discovery runs in the background, as in the bot; the doctor waits
	// for every server's first try.
	if err := ext.FirstRound(ctx); err != nil {
		r.problem("MCP discovery: %v", err)
		return
	}
	where := make(map[string]string, len(mcpCfg.Servers))
	for _, sc := range mcpCfg.Servers {
		if sc.Remote() {
			where[sc.Name] = " over Streamable HTTP at " + red.Redact(mcpOrigin(sc.URL))
		}
	}
	for _, s := range ext.Servers() {
		if s.Plantable != "" && !s.Disabled {
			r.warn("MCP server %s: %s (%s)", s.Name, mcp.PlantableWarning, s.Plantable)
		}
		switch {
		case s.Disabled:
			r.line("  %s: disabled", s.Name)
		case s.Err != nil:
			r.problem("MCP server %s%s does not work: %v", s.Name, where[s.Name], s.Err)
		default:
			r.line("  %s: ok, %d tool(s)%s", s.Name, s.Tools, where[s.Name])
		}
	}
	doctorRunningMCP(r, cfg.AgentDir, time.Now())
}

// doctorRunningMCP shows the MCP servers as the running bot last recorded
// them (mcpStatusFile), when it did: a server can fail in the bot (a cold
// npx download, a registry error) and answer the doctor, or the reverse.
func doctorRunningMCP(r *report, agentDir string, now time.Time) {
	statuses, at, ok := readMCPStatus(agentDir)
	if !ok || len(statuses) == 0 {
		return
	}
	r.line("  in the running bot (recorded %s ago):", max(now.Sub(at), 0).Round(time.Second))
	for _, s := range statuses {
		r.line("    %s: %s", s.Name, s.Summary(now))
	}
}

// mcpOrigin returns the scheme and host of a Streamable HTTP server's url:
// its path and query may hold a token.
func mcpOrigin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(an invalid url)"
	}
	return u.Scheme + "://" + u.Host
}

// doctorJobs lists the scheduled jobs in jobs.json, then the one-shot
// jobs a restart cut short that the next start tells their chat of; a
// file that does not parse is a problem, since it stops start-up. The
// file is the agent's to write: each name is redacted whole before it is
// cut, and each line whole (an id, a target, an outcome).
func doctorJobs(r *report, cfg Config) {
	r.line("\nScheduled jobs")
	path := filepath.Join(cfg.AgentDir, "jobs.json")
	sched, err := scheduler.New(path, scheduler.WithWorkspace(cfg.WorkspaceDir))
	if err != nil {
		r.problem("%v", err)
		return
	}
	var jobs, cut []scheduler.Job
	for _, j := range sched.All() {
		if j.CutShort() {
			cut = append(cut, j)
		} else {
			jobs = append(jobs, j)
		}
	}
	if len(jobs) == 0 && len(cut) == 0 {
		r.line("  none (%s)", path)
		return
	}
	red := redactor.New(cfg.Policy.SecretValues)
	name := func(j scheduler.Job) string {
		if j.Name == "" {
			return truncate(red.Redact(j.ID), 40)
		}
		return truncate(red.Redact(j.Name), 40)
	}
	r.line("  %d job(s) in %s:", len(jobs), path)
	for _, j := range jobs {
		outcome := j.LastOutcome
		if outcome == "" {
			outcome = "not run yet"
		}
		r.line("%s", red.Redact(fmt.Sprintf("    %s  %-8s chat %s  %q  (%s)", j.ID, j.Kind(), j.Target, name(j), outcome)))
	}
	if len(cut) > 0 {
		r.line("  %d one-shot job(s) a restart cut short, to be told to their chat at the next start:", len(cut))
		for _, j := range cut {
			r.line("%s", red.Redact(fmt.Sprintf("    %s  %-8s chat %s  %q  (due %s)", j.ID, j.Kind(), j.Target, name(j), j.At.UTC().Format(time.RFC3339))))
		}
	}
}

// truncate shortens s to at most n runes, marking the cut.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return fmt.Sprintf("%s…", string(r[:n-1]))
}
