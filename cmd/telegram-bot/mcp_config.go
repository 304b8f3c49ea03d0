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

// loadMCP loads the MCP configuration as run and the doctor both do, and
// completes its secrets:
//
//   - A default file (MCP_CONFIG unset, mcp.json in the agent dir) that the
//     bot's user could modify is ignored with a warning instead of stopping
//     start-up: the agent can write there, and must not be able to keep the
//     bot from starting by doing so. When there is no such file there is
//     nothing to refuse and no warning, even though the agent dir (or a
//     directory above it) belongs to the bot's user, as it does in a local
//     run. A file MCP_CONFIG names explicitly is the operator's choice, and
//     its refusal stops start-up.
//   - Every value a server's env sets under a name the spawn policy would
//     deny (GITHUB_TOKEN, an API key) counts as a secret, whether it was
//     written in the configuration or expanded from ${VAR}: the agent can
//     read it from that server's /proc entries, so it is redacted everywhere.
func loadMCP(cfg Config, lookup func(string) (string, bool)) (mcp.Config, error) {
	if cfg.MCPConfigDefault && !strings.HasPrefix(strings.TrimSpace(cfg.MCPConfig), "{") {
		if _, err := os.Lstat(cfg.MCPConfig); errors.Is(err, fs.ErrNotExist) {
			return mcp.Config{}, nil
		}
	}
	hostSecrets := slices.DeleteFunc(slices.Clone(cfg.Policy.SecretValues), func(v string) bool { return slices.Contains(cfg.DeniedValues, v) })
	mcpCfg, err := mcp.Load(cfg.MCPConfig, lookup, hostSecrets)
	if errors.Is(err, mcp.ErrUntrusted) && cfg.MCPConfigDefault {
		return mcp.Config{Warnings: []string{fmt.Sprintf("ignoring the MCP servers in %s: %v", cfg.MCPConfig, err)}}, nil
	}
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
