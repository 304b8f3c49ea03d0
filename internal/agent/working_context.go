package agent

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// How older tool results are shortened in the working context: a text
// longer than oldResultMaxBytes keeps its first and last oldResultLines
// lines (at most oldResultPartBytes each way) around a note of what was cut.
const (
	oldResultMaxBytes  = 2000
	oldResultLines     = 10
	oldResultPartBytes = 800
)

// oldImageText replaces an image of an older tool result.
const oldImageText = "[image cut from this older tool result to save context]"

// workingContextLocked returns the messages the next request sends: the
// summary of the compacted conversation (when there is one), then the
// session's messages, with the tool results before the latest kept turns
// shortened. n is how many of the session's messages it holds. s.mu is
// held.
func (s *Session) workingContextLocked() (msgs []Message, n int) {
	msgs = make([]Message, 0, len(s.messages)+1)
	if s.compaction.summary != "" {
		msgs = append(msgs, summaryMessage(s.compaction))
	}
	recent := cutIndex(s.messages, s.agent.cfg.keepTurns)
	for i, m := range s.messages {
		m = cloneMessage(m)
		if i < recent && m.Role == RoleTool {
			m.Content = shortenContent(m.Content)
		}
		msgs = append(msgs, m)
	}
	return msgs, len(s.messages)
}

// cutIndex returns the index of the first message of the latest keep user
// turns: the messages before it may be compacted. It is 0 when msgs holds
// fewer user turns than keep. A cut before a user message never separates a
// tool call from its result.
func cutIndex(msgs []Message, keep int) int {
	keep = max(keep, 1)
	seen := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != RoleUser {
			continue
		}
		if seen++; seen == keep {
			return i
		}
	}
	return 0
}

// shortenContent returns content with long texts shortened and images
// replaced by a note.
func shortenContent(content []Content) []Content {
	out := make([]Content, 0, len(content))
	for _, c := range content {
		switch c.Type {
		case TextContent:
			c.Text = shortenText(c.Text, "older tool result")
		case ImageContent:
			c = Text(oldImageText)
		}
		out = append(out, c)
	}
	return out
}

// shortenText returns s when it is short, else its first and last lines
// around a note saying how much of what was cut.
func shortenText(s, what string) string {
	if len(s) <= oldResultMaxBytes {
		return s
	}
	head := min(nthIndex(s, oldResultLines), oldResultPartBytes)
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	tail := max(len(strings.TrimRight(s, "\n"))-oldResultPartBytes, 0)
	if i := nthLastLineStart(s, oldResultLines); i > tail {
		tail = i
	}
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	if tail <= head {
		return s
	}
	cut := strings.Trim(s[head:tail], "\n")
	return fmt.Sprintf("%s\n[... %d lines (%d bytes) of this %s cut to save context ...]\n%s",
		strings.TrimRight(s[:head], "\n"), strings.Count(cut, "\n")+1, len(cut), what, strings.TrimLeft(s[tail:], "\n"))
}

// nthIndex returns the index of the n-th newline of s, or len(s).
func nthIndex(s string, n int) int {
	at := -1
	for range n {
		i := strings.IndexByte(s[at+1:], '\n')
		if i < 0 {
			return len(s)
		}
		at += i + 1
	}
	return at
}

// nthLastLineStart returns where the last n lines of s start (a trailing
// newline ends the last line), or 0.
func nthLastLineStart(s string, n int) int {
	end := len(strings.TrimRight(s, "\n"))
	for range n {
		i := strings.LastIndexByte(s[:end], '\n')
		if i < 0 {
			return 0
		}
		end = i
	}
	return end + 1
}
