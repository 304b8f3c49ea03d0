package main

import "github.com/volcanic/telegram-agent/internal/spawnpolicy"

// agentHome returns the host hook that makes the workspace the home of
// every agent process whose HOME is the bot's own (inherited) or unset. The
// bot's home is not the agent's: an agent that could write the bot's
// ~/.bashrc or ~/.profile would run its code in the next shell an operator
// opens beside the bot (a container terminal), with every secret in that
// shell's environment; and with the sandbox on, the bot's home is outside
// the agent's view, so tools that keep state in HOME (git, pip, npm) need
// a home they can write. A HOME set on purpose (an MCP server's env entry)
// is kept.
func agentHome(workspace, botHome string) spawnpolicy.Hook {
	return func(c spawnpolicy.Context) (spawnpolicy.Context, error) {
		if home, ok := c.Env["HOME"]; ok && home != botHome {
			return c, nil
		}
		if c.Env == nil {
			c.Env = map[string]string{}
		}
		c.Env["HOME"] = workspace
		return c, nil
	}
}
