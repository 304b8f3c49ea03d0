package chat

import (
	"context"
	"fmt"
	"strings"
)

// The tool status modes (TOOL_STATUS, and a chat's /verbose).
const (
	// ToolStatusAll shows every tool call of a turn, and the status stays
	// as it ended once the answer is delivered.
	ToolStatusAll = "all"
	// ToolStatusLast shows the running call while the turn runs, and folds
	// the status into one line once the answer is delivered: the default.
	ToolStatusLast = "last"
	// ToolStatusOff shows no status message (/status and /stop still
	// work).
	ToolStatusOff = "off"
)

// ValidToolStatus reports whether mode is a tool status mode.
func ValidToolStatus(mode string) bool {
	switch mode {
	case ToolStatusAll, ToolStatusLast, ToolStatusOff:
		return true
	}
	return false
}

// defaultToolStatus is the operator's mode (Config.ToolStatus), last when
// unset.
func (h *Host) defaultToolStatus() string {
	if ValidToolStatus(h.cfg.ToolStatus) {
		return h.cfg.ToolStatus
	}
	return ToolStatusLast
}

// toolStatusMode is the mode of scope's turns: its /verbose choice, else
// the operator's.
func (h *Host) toolStatusMode(scope string) string {
	if m := h.settings.get(scope).ToolStatus; ValidToolStatus(m) {
		return m
	}
	return h.defaultToolStatus()
}

// verboseCommand handles /verbose: it turns the chat's tool status to
// every call (all) and back to the operator's mode; where that is all
// already, back to last.
func (h *Host) verboseCommand(_ context.Context, in *inbound, reply func(string)) {
	scope := in.target.String()
	next, def := ToolStatusAll, h.defaultToolStatus()
	if h.toolStatusMode(scope) == ToolStatusAll {
		next = def
		if def == ToolStatusAll {
			next = ToolStatusLast
		}
	}
	stored := next
	if next == def {
		stored = ""
	}
	if err := h.settings.update(scope, func(c *chatSettings) { c.ToolStatus = stored }); err != nil {
		h.logger.Warn("saving /verbose failed", "scope", scope, "err", err)
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

// allDone reports whether every call ended well: only then does a
// finished turn's status fold (a failure or a stop stays call by call, so
// that the chat sees which and why).
func allDone(calls []*toolLine) bool {
	for _, l := range calls {
		if l.state != toolDone {
			return false
		}
	}
	return true
}

// foldedStatus is the one line a finished turn's status folds into in the
// last mode when every call ended well: how many calls, and the tools by
// name.
func foldedStatus(calls []*toolLine) string {
	var names []string
	count := map[string]int{}
	for _, l := range calls {
		if count[l.name] == 0 {
			names = append(names, l.name)
		}
		count[l.name]++
	}
	for i, n := range names {
		if count[n] > 1 {
			names[i] = fmt.Sprintf("%s ×%d", n, count[n])
		}
	}
	return fmt.Sprintf("✅ %s: %s", counted(len(calls), "tool call", "tool calls"), strings.Join(names, ", "))
}
