package turnview

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/chat/markup"
)

// failureSummary returns a failed call's reason in short ("exit 3", or
// empty when the output says it) and one line of its output: the last
// line the command printed, or the error's first line.
func failureSummary(res *agent.Result) (why, line string) {
	text := agent.TextOf(res.Content)
	if code, ok := agent.ExitCode(res.Details); ok {
		if code > 0 {
			why = "exit " + strconv.Itoa(code)
		}
		// The last line of the output, without the tool's own [notes].
		lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
		for i := len(lines) - 1; i >= 0; i-- {
			l := strings.TrimSpace(lines[i])
			if l == "" || l == "(no output)" || (strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]")) {
				continue
			}
			return why, markup.Shorten(l, 100)
		}
		return why, ""
	}
	first, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	return "", markup.Shorten(first, 100)
}

// render returns the status text; stopped marks the calls still running as
// stopped, and is the final form. In the last mode the final form of a turn
// whose calls all ended well is one folded line (a failure or a stop stays
// call by call), and while the turn runs only the latest call is shown,
// after a count of the ones before it.
func (s *toolStatus) render(stopped bool) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	calls := s.calls
	var b strings.Builder
	if s.mode == ToolStatusLast && len(calls) > 0 {
		if stopped && allDone(calls) {
			return preview(foldedStatus(calls))
		}
		if n := len(calls) - 1; !stopped && n > 0 {
			fmt.Fprintf(&b, "(%s before)\n", Counted(n, "tool call", "tool calls"))
			calls = calls[n:]
		}
	}
	for _, l := range calls {
		icon, note := "⏳", ""
		switch {
		case l.state == toolFailed:
			icon = "❌"
		case l.state == toolDone:
			icon = "✅"
		case l.state == toolStopped, stopped:
			icon, note = "⏹", " (stopped)"
		}
		b.WriteString(icon + " " + l.name)
		if l.why != "" {
			b.WriteString(" (" + l.why + ")")
		}
		if l.arg != "" {
			b.WriteString(": " + l.arg)
		}
		b.WriteString(note)
		b.WriteByte('\n')
		if (l.state == toolRunning || l.state == toolFailed) && l.tail != "" {
			b.WriteString(indent(l.tail))
		}
	}
	return preview(strings.TrimRight(b.String(), "\n"))
}

// SummarizeArgs returns a tool call's command or main argument in short:
// the arguments come redacted (from the agent), so the cut leaves no part
// of a secret.
func SummarizeArgs(args json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(args, &m) != nil {
		return ""
	}
	for _, key := range []string{"command", "path", "schedule", "id", "url", "query"} {
		if v, ok := m[key].(string); ok && v != "" {
			return markup.Shorten(v, 80)
		}
	}
	for _, v := range m {
		if s, ok := v.(string); ok && s != "" {
			return markup.Shorten(s, 80)
		}
	}
	return ""
}

// tail returns the last lines of s, at most n runes.
func tail(s string, lines, n int) string {
	s = strings.TrimRight(s, "\n")
	parts := strings.Split(s, "\n")
	if len(parts) > lines {
		parts = parts[len(parts)-lines:]
	}
	out := strings.Join(parts, "\n")
	if r := []rune(out); len(r) > n {
		out = "…" + string(r[len(r)-n+1:])
	}
	return out
}

func indent(s string) string {
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		b.WriteString("   " + line + "\n")
	}
	return b.String()
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
	return fmt.Sprintf("✅ %s: %s", Counted(len(calls), "tool call", "tool calls"), strings.Join(names, ", "))
}

// Counted returns n with the noun in its singular or plural form: "1
// queued message", "2 queued messages".
func Counted(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
