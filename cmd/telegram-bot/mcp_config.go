package main

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/volcanic/telegram-agent/internal/mcp"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// mcpServerHome is the MCP servers' home (mcp.WithServerHome): a directory
// in the agent dir, which agent processes cannot write, so that what npm,
// npx and pip keep there to run again is the servers' own; with the
// sandbox off the agent can write it, as it can the rest of the agent dir.
func mcpServerHome(cfg Config) string { return filepath.Join(cfg.AgentDir, "mcp-home") }

// mcpConfigAdvice says where an MCP configuration is accepted.
const mcpConfigAdvice = "put the JSON itself in MCP_CONFIG, or a root-owned file such as /etc/telegram-bot/mcp.json (0644, in root-owned directories) and MCP_CONFIG=/etc/telegram-bot/mcp.json"

// loadMCP loads the MCP configuration as run and the doctor both do, and
// completes its secrets:
//
//   - Without MCP_CONFIG there are no servers: no default path exists,
//     since any place the bot's user owns (the agent dir) holds a file that
//     would be refused. An mcp.json left in the agent dir (the old default)
//     is named in a warning, never read. A file MCP_CONFIG names that the
//     bot's user could modify is refused, and the refusal stops start-up
//     (the doctor counts it a problem).
//   - A ${VAR} naming a variable PROCESS_ENV_ALLOW lets through to agent
//     processes (GH_TOKEN) is expanded to what agent processes get of it
//     (agentLookup), and is no host secret (hostSecrets): passing it to a
//     server hands over nothing the agent's processes lack.
//   - Every value a server's env sets under a name the spawn policy would
//     deny (GITHUB_TOKEN, an API key) counts as a secret, whether it was
//     written in the configuration or expanded from ${VAR}: the agent can
//     read it from that server's /proc entries, so it is redacted everywhere.
func loadMCP(cfg Config, lookup func(string) (string, bool)) (mcp.Config, error) {
	if cfg.MCPConfig == "" {
		var out mcp.Config
		if old := filepath.Join(cfg.AgentDir, mcp.DefaultFile); cfg.AgentDir != "" {
			if _, err := os.Lstat(old); !errors.Is(err, fs.ErrNotExist) {
				out.Warnings = append(out.Warnings, fmt.Sprintf("%s is never read: MCP_CONFIG is not set, and a file the bot's user can modify would be refused; %s", old, mcpConfigAdvice))
			}
		}
		return out, nil
	}
	view, err := agentLookup(cfg, lookup)
	if err != nil {
		return mcp.Config{}, err
	}
	mcpCfg, err := mcp.LoadHostSecrets(cfg.MCPConfig, view, hostSecrets(cfg))
	if err != nil {
		return mcp.Config{}, err
	}
	for _, v := range deniedEnvValues(cfg.Policy, mcpCfg) {
		if !slices.Contains(mcpCfg.Secrets, v) {
			mcpCfg.Secrets = append(mcpCfg.Secrets, v)
		}
	}
	return mcpCfg, nil
}

// deniedEnvValues returns the values of the servers' env entries whose names
// the policy would remove if they were inherited, at least
// MinimumSecretLength long. It asks the policy itself (Explain over the
// entries), so its deny rules are the only definition of "looks secret".
func deniedEnvValues(opts spawnpolicy.Options, cfg mcp.Config) []string {
	opts.HardenHostProcess = false
	opts.Hooks = nil
	var out []string
	for _, s := range cfg.Servers {
		env := s.Env
		p, err := spawnpolicy.New(opts, slog.New(slog.DiscardHandler), func() map[string]string { return env })
		if err != nil {
			continue
		}
		for _, rm := range p.Explain() {
			if v := env[rm.Name]; len(v) >= spawnpolicy.MinimumSecretLength && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return out
}

// agentLookup returns the lookup ${VAR} expansion uses: a variable
// PROCESS_ENV_ALLOW lets through to agent processes (cfg.Passed) has the
// value the spawn policy gives them, asked of the policy itself, so that a
// server is handed what an agent process would be (a stand-in, once one
// replaces the real value); every other variable is the bot's own, which
// the loader checks against the host's secrets.
func agentLookup(cfg Config, lookup func(string) (string, bool)) (func(string) (string, bool), error) {
	if len(cfg.Passed) == 0 {
		return lookup, nil
	}
	env := make(map[string]string, len(cfg.Passed))
	for _, name := range cfg.Passed {
		if v, ok := lookup(name); ok {
			env[name] = v
		}
	}
	opts := cfg.Policy
	opts.HardenHostProcess = false
	opts.Hooks = nil
	p, err := spawnpolicy.New(opts, slog.New(slog.DiscardHandler), func() map[string]string { return env })
	if err != nil {
		return nil, fmt.Errorf("mcp: the agent processes' view of PROCESS_ENV_ALLOW: %w", err)
	}
	pc, err := p.Prepare(spawnpolicy.Request{Purpose: spawnpolicy.MCPServer, Command: "mcp-config", Cwd: string(filepath.Separator)})
	if err != nil {
		return nil, fmt.Errorf("mcp: the agent processes' view of PROCESS_ENV_ALLOW: %w", err)
	}
	return func(name string) (string, bool) {
		if slices.Contains(cfg.Passed, name) {
			v, ok := pc.Env[name]
			return v, ok
		}
		return lookup(name)
	}, nil
}

// hostSecrets returns the secrets a ${VAR} may not hand to a server, each
// with the variables it came from: every secret value but those that came
// only from variables PROCESS_ENV_ALLOW lets through (agent processes get
// those anyway) or from variables a deny rule removes (GITHUB_TOKEN, the
// ordinary token of a server); both stay secrets for the redactor.
func hostSecrets(cfg Config) []mcp.HostSecret {
	out := make([]mcp.HostSecret, 0, len(cfg.Policy.SecretValues))
	for _, v := range cfg.Policy.SecretValues {
		var own []string
		sources := cfg.SecretSources[v]
		for _, name := range sources {
			// A value a deny rule removed (DeniedRedacted) is redacted,
			// but no more the host's own than a passed one.
			if !slices.Contains(cfg.Passed, name) && !slices.Contains(cfg.DeniedRedacted, name) {
				own = append(own, name)
			}
		}
		if len(sources) > 0 && len(own) == 0 {
			continue
		}
		out = append(out, mcp.HostSecret{Value: v, Source: strings.Join(own, ", ")})
	}
	return out
}
