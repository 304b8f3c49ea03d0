package main

import (
	"log/slog"

	"github.com/volcanic/telegram-agent/internal/atomicfile"
)

// restoreStateModes gives the bot's user its access to AGENT_DIR back
// before anything reads it: an agent process of the same user may have
// run chmod 0 on it (or on a transcript) in an earlier run, which would
// make every turn fail and this start exit. The workspace, if it lies
// inside, is the agent's and left as it is.
func restoreStateModes(cfg Config, logger *slog.Logger) {
	changed, err := atomicfile.RestoreModes(cfg.AgentDir, cfg.WorkspaceDir)
	if len(changed) > 0 {
		logger.Warn("AGENT_DIR's permissions had been taken from the bot's user (by an agent process of the same user, or by hand): the bot gave its own access back", "dir", cfg.AgentDir, "paths", len(changed), "first", changed[0])
	}
	if err != nil {
		logger.Warn("AGENT_DIR's permissions cannot all be restored: writes to it may fail", "dir", cfg.AgentDir, "err", err)
	}
}
