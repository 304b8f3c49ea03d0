package chat

import (
	"context"

	"github.com/volcanic/telegram-agent/internal/chat/turnview"
)

// The tool status modes (TOOL_STATUS, and a chat's /verbose): see
// turnview's.
const (
	ToolStatusAll  = turnview.ToolStatusAll
	ToolStatusLast = turnview.ToolStatusLast
	ToolStatusOff  = turnview.ToolStatusOff
)

// ValidToolStatus reports whether mode is a tool status mode.
func ValidToolStatus(mode string) bool { return turnview.ValidToolStatus(mode) }

// defaultToolStatus is the operator's mode (Config.ToolStatus), last when
// unset.
func (s *sessions) defaultToolStatus() string {
	if ValidToolStatus(s.toolStatus) {
		return s.toolStatus
	}
	return ToolStatusLast
}

// toolStatusMode is the mode of scope's turns: its /verbose choice, else
// the operator's.
func (s *sessions) toolStatusMode(scope string) string {
	if m := s.settings.get(scope).ToolStatus; ValidToolStatus(m) {
		return m
	}
	return s.defaultToolStatus()
}

// verboseCommand handles /verbose: it turns the chat's tool status to
// every call (all) and back to the operator's mode; where that is all
// already, back to last.
func (c *commander) verboseCommand(_ context.Context, in *inbound, reply func(string)) {
	scope := in.target.String()
	next, def := ToolStatusAll, c.sessions.defaultToolStatus()
	if c.sessions.toolStatusMode(scope) == ToolStatusAll {
		next = def
		if def == ToolStatusAll {
			next = ToolStatusLast
		}
	}
	stored := next
	if next == def {
		stored = ""
	}
	if err := c.sessions.settings.update(scope, func(cs *chatSettings) { cs.ToolStatus = stored }); err != nil {
		c.logger.Warn("saving /verbose failed", "scope", scope, "err", err)
		reply("⚠️ The setting could not be saved; nothing changed.")
		return
	}
	reply(verboseText(next))
}

// verboseText says what a chat's tool status mode shows.
func verboseText(mode string) string {
	switch mode {
	case ToolStatusAll:
		return "🔎 Verbose: every tool call is listed, and the list stays under the answer. /verbose again to fold it."
	case ToolStatusOff:
		return "🔕 Tool status off: no status message (/status shows what runs, /stop stops it). /verbose to list every call."
	}
	return "📎 Compact: the running tool call is shown, folded into one line once the answer is there. /verbose to list every call."
}
