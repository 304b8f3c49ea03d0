package mcp

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Bounds of a status summary, which a chat message and a health check's
// line carry.
const (
	summaryCauseLen   = 240
	summaryLines      = 3
	summaryLineLen    = 160
	stderrSeparator   = "; stderr: "
	summaryEllipsis   = "…"
	summaryRetryRound = time.Second
)

// Summary words the status in one line for people (the chat's /status,
// doctor, the health check): "ready, 12 tools", "starting", "disabled",
// or "failed after 3 tries: <cause>; stderr: <its last lines>; tried again
// in 40s". The text is what Err holds, redacted already.
func (s ServerStatus) Summary(now time.Time) string {
	switch {
	case s.Disabled:
		return "disabled"
	case s.State == StateReady:
		return fmt.Sprintf("ready, %d tool(s)", s.Tools)
	case s.State != StateFailed:
		return "starting"
	}
	tries := "1 try"
	if s.Attempts != 1 {
		tries = fmt.Sprintf("%d tries", s.Attempts)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "failed after %s", tries)
	if s.Err != nil {
		cause, stderr, _ := strings.Cut(s.Err.Error(), stderrSeparator)
		b.WriteString(": " + shorten(cause, summaryCauseLen))
		if lines := tailLines(stderr, summaryLines); len(lines) > 0 {
			for i, l := range lines {
				lines[i] = shorten(l, summaryLineLen)
			}
			b.WriteString(stderrSeparator + strings.Join(lines, " | "))
		}
	}
	if !s.RetryAt.IsZero() {
		fmt.Fprintf(&b, "; tried again in %s", max(s.RetryAt.Sub(now), 0).Round(summaryRetryRound))
	}
	return b.String()
}

// tailLines returns the last n non-blank lines of s, trimmed.
func tailLines(s string, n int) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out[max(len(out)-n, 0):]
}

// shorten cuts s to at most n bytes, at a rune boundary, marking the cut.
func shorten(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + summaryEllipsis
}
