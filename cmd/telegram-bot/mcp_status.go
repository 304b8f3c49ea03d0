package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/volcanic/telegram-agent/internal/atomicfile"
	"github.com/volcanic/telegram-agent/internal/mcp"
)

// mcpStatusFile is the file in the agent dir where the running bot records
// each MCP server's state whenever one changes, for the health check and
// the doctor, which run as processes of their own.
const mcpStatusFile = "mcp-status.json"

// mcpStatusRecord is mcpStatusFile's content. Errors are redacted by the
// extension before they get here.
type mcpStatusRecord struct {
	At      time.Time         `json:"at"`
	Servers []mcpServerRecord `json:"servers"`
}

// mcpServerRecord is one server in mcpStatusFile.
type mcpServerRecord struct {
	Name     string          `json:"name"`
	Disabled bool            `json:"disabled,omitempty"`
	State    mcp.ServerState `json:"state,omitempty"`
	Tools    int             `json:"tools,omitempty"`
	Attempts int             `json:"attempts,omitempty"`
	RetryAt  time.Time       `json:"retry_at,omitzero"`
	Error    string          `json:"error,omitempty"`
}

// mcpStatusWriter returns the extension's status hook: it writes every
// server's status to mcpStatusFile in agentDir. A write that fails is
// logged; the bot runs on.
func mcpStatusWriter(agentDir string, logger *slog.Logger) func([]mcp.ServerStatus) {
	path := filepath.Join(agentDir, mcpStatusFile)
	return func(statuses []mcp.ServerStatus) {
		rec := mcpStatusRecord{At: time.Now().UTC(), Servers: make([]mcpServerRecord, 0, len(statuses))}
		for _, s := range statuses {
			r := mcpServerRecord{Name: s.Name, Disabled: s.Disabled, State: s.State, Tools: s.Tools, Attempts: s.Attempts, RetryAt: s.RetryAt}
			if s.Err != nil {
				r.Error = s.Err.Error()
			}
			rec.Servers = append(rec.Servers, r)
		}
		data, err := json.Marshal(rec)
		if err == nil {
			err = atomicfile.WriteFile(path, data, 0o600)
		}
		if err != nil {
			logger.Warn("mcp: the servers' status cannot be recorded for the health check", "path", path, "err", err)
		}
	}
}

// readMCPStatus reads mcpStatusFile in agentDir: the statuses and when they
// were recorded; ok is false when there is no readable file.
func readMCPStatus(agentDir string) (statuses []mcp.ServerStatus, at time.Time, ok bool) {
	data, err := os.ReadFile(filepath.Join(agentDir, mcpStatusFile))
	if err != nil {
		return nil, time.Time{}, false
	}
	var rec mcpStatusRecord
	if json.Unmarshal(data, &rec) != nil {
		return nil, time.Time{}, false
	}
	for _, r := range rec.Servers {
		s := mcp.ServerStatus{Name: r.Name, Disabled: r.Disabled, State: r.State, Tools: r.Tools, Attempts: r.Attempts, RetryAt: r.RetryAt}
		if r.Error != "" {
			s.Err = errors.New(r.Error)
		}
		statuses = append(statuses, s)
	}
	return statuses, rec.At, true
}

// mcpDegraded returns the health check's note on the MCP servers the
// running bot recorded as failed ("" when none did): the bot still
// answers, without their tools.
func mcpDegraded(agentDir string, now time.Time) string {
	statuses, _, ok := readMCPStatus(agentDir)
	if !ok {
		return ""
	}
	var failed []string
	for _, s := range statuses {
		if s.State == mcp.StateFailed {
			failed = append(failed, fmt.Sprintf("MCP server %s %s", s.Name, s.Summary(now)))
		}
	}
	return strings.Join(failed, "; ")
}

// mcpStatusLines returns the lines /status shows of ext's servers, none
// when no server is configured.
func mcpStatusLines(ext *mcp.Extension) func() []string {
	return func() []string {
		var lines []string
		now := time.Now()
		for _, s := range ext.Servers() {
			lines = append(lines, fmt.Sprintf("MCP %s: %s", s.Name, s.Summary(now)))
		}
		return lines
	}
}
