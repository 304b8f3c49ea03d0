package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/volcanic/telegram-agent/internal/storagefail"
)

// ErrNothingToCompact is returned by [Session.Compact] when the session holds
// no more than the turns compaction keeps.
var ErrNothingToCompact = errors.New("agent: nothing to compact yet")

// summaryHeader starts the message that stands for the compacted
// conversation in the working context.
const summaryHeader = "[Summary of the earlier conversation: it was compacted to fit the context window. The messages after this one continue it word for word.]\n\n"

// summarySystemPrompt is the system prompt of a summary request.
const summarySystemPrompt = `You write the memory of an AI agent that talks to a person on Telegram. The conversation so far is too long to keep, so it is replaced by your summary: from now on the agent sees only your summary and the latest messages.

Write a concise summary in the language of the conversation, in Markdown, under these headings (leave out the empty ones):
- Facts about the user: name, preferences, time zone, what they asked the agent to remember.
- Decisions: what was agreed or decided.
- Open tasks: what the agent promised or started, and what the user is waiting for.
- Files and commands: files created, edited or read (with their paths), important commands and their outcomes, scheduled jobs.
- Other context needed to continue.

Keep names, paths, numbers, ids and URLs exact. [REDACTED] marks a secret the host hid: keep the marker, never guess the value. Write only the summary, without a preamble.`

// summaryRequestShare is the share of the compaction threshold (in tokens)
// the conversation text of a summary request may fill.
const summaryRequestShare = 0.75

// compactionState is what the last compaction left: the summary of the
// conversation before the session's messages.
type compactionState struct {
	summary string
	at      time.Time
	// usersBefore counts the transcript's user messages before the
	// session's first message.
	usersBefore int
}

// summaryMessage is the message that stands for the compacted conversation.
func summaryMessage(c compactionState) Message {
	return Message{Role: RoleUser, Content: []Content{Text(summaryHeader + c.summary)}, Time: c.at}
}

// Compact summarises the session's conversation now, keeping the latest
// turns word for word (see [WithCompactionKeepTurns]). It waits for a
// running turn to end. It returns [ErrNothingToCompact] when there is
// nothing before those turns; when the summary request fails, the session
// stays as it was and the (redacted) error says why.
func (s *Session) Compact(ctx context.Context) error {
	ctx, release, err := s.acquire(ctx, nil)
	if err != nil {
		return err
	}
	defer release()
	if err := s.compact(ctx, s.agent.cfg.keepTurns); err != nil {
		return s.agent.red.RedactError(err)
	}
	return nil
}

// compact replaces the session's messages before its latest keep user turns
// with a summary the model writes, and records it in the transcript. The
// caller holds the turn. On any error the session is unchanged.
func (s *Session) compact(ctx context.Context, keep int) error {
	s.mu.Lock()
	cut := cutIndex(s.messages, keep)
	old := cloneMessages(s.messages[:cut])
	prev, model, loc, tokens := s.compaction, s.model, s.loc, s.contextTokensLocked()
	s.mu.Unlock()
	if cut == 0 {
		return ErrNothingToCompact
	}
	_, threshold := s.agent.cfg.contextLimits()
	budget := int(float64(threshold*charsPerToken) * summaryRequestShare)
	req := Request{
		Model:  model,
		System: summarySystemPrompt,
		Messages: []Message{{
			Role:    RoleUser,
			Content: []Content{Text(s.agent.red.Redact(summaryPrompt(prev.summary, old, loc, budget)))},
			Time:    time.Now(),
		}},
	}
	resp, err := s.out.complete(ctx, req, func(string) {})
	if err != nil {
		return fmt.Errorf("agent: compacting the conversation: the summary request failed: %w", err)
	}
	s.reportUsage(ctx, model, resp)
	summary := strings.TrimSpace(s.agent.red.Redact(resp.Text))
	if summary == "" {
		return errors.New("agent: compacting the conversation: the model wrote an empty summary")
	}
	state := compactionState{summary: summary, at: time.Now(), usersBefore: prev.usersBefore + countUsers(old)}
	if s.tr != nil {
		if err := s.wroteTranscript(s.tr.appendCompaction(state, tokens)); err != nil {
			return err
		}
	}
	s.mu.Lock()
	s.messages = slices.Clone(s.messages[cut:])
	s.compaction = state
	s.resetMeterLocked()
	after := s.contextTokensLocked()
	s.mu.Unlock()
	s.agent.logger.Info("agent: compacted a session", "session", s.id, "summarised_messages", cut,
		"tokens_before", tokens, "tokens_after", after)
	s.emit(Event{Kind: EventCompaction, Text: summary})
	return nil
}

// autoCompact compacts before a request that would pass the threshold. A
// failure is logged, and the request goes ahead as it is. While transcript
// writes fail (the agent's episode), it does not try: the summary is a
// model request over the whole context, paid for at every step, whose
// result could not be recorded.
func (s *Session) autoCompact(ctx context.Context) {
	if !s.overThreshold() || s.agent.transcripts.Active() {
		return
	}
	err := s.compact(ctx, s.agent.cfg.keepTurns)
	switch {
	case err != nil && storagefail.Is(err):
		s.transcriptFailed(err, "compaction", "not recorded; the request goes as it is")
	case err != nil && !errors.Is(err, ErrNothingToCompact) && ctx.Err() == nil:
		s.agent.logger.Warn("agent: compaction failed; sending the conversation as it is", "session", s.id,
			"err", s.agent.red.Redact(err.Error()))
	}
}

// countUsers counts the user messages of msgs.
func countUsers(msgs []Message) int {
	n := 0
	for _, m := range msgs {
		if m.Role == RoleUser {
			n++
		}
	}
	return n
}

// summaryPrompt is the user message of a summary request: the previous
// summary, then msgs as text, older tool results shortened. When the text
// is longer than budget bytes, its oldest part is cut.
func summaryPrompt(previous string, msgs []Message, loc *time.Location, budget int) string {
	var conv strings.Builder
	for _, m := range msgs {
		writeForSummary(&conv, m, loc)
	}
	text := conv.String()
	if len(text) > budget {
		text = text[len(text)-budget:]
		if i := strings.Index(text, "\n### "); i >= 0 {
			text = text[i+1:]
		}
		text = "[... the oldest part of this conversation is cut: it is too long to summarise at once ...]\n\n" + text
	}
	var b strings.Builder
	b.WriteString("Summarise the conversation below for the agent's memory.")
	if previous != "" {
		b.WriteString(" It continues an earlier conversation whose summary comes first: fold that summary into yours.\n\n<earlier-summary>\n")
		b.WriteString(previous)
		b.WriteString("\n</earlier-summary>")
	}
	b.WriteString("\n\n<conversation>\n")
	b.WriteString(strings.ToValidUTF8(text, "\uFFFD"))
	b.WriteString("</conversation>")
	return b.String()
}

// writeForSummary writes m as text for a summary request.
func writeForSummary(b *strings.Builder, m Message, loc *time.Location) {
	switch m.Role {
	case RoleUser:
		fmt.Fprintf(b, "### User (%s)\n", m.Time.In(loc).Format("Mon 2006-01-02 15:04"))
	case RoleAssistant:
		b.WriteString("### Assistant\n")
	case RoleTool:
		status := ""
		if m.IsError {
			status = ", failed"
		}
		fmt.Fprintf(b, "### Result of %s (%s%s)\n", m.ToolName, m.ToolCallID, status)
	}
	for _, c := range m.Content {
		switch c.Type {
		case TextContent:
			if m.Role == RoleTool {
				b.WriteString(shortenText(c.Text, "tool result"))
			} else {
				b.WriteString(c.Text)
			}
		case ImageContent:
			b.WriteString("[an image]")
		}
		b.WriteString("\n")
	}
	for _, c := range m.ToolCalls {
		fmt.Fprintf(b, "[called %s (%s) with %s]\n", c.Name, c.ID, shortenText(c.Arguments, "argument list"))
	}
	b.WriteString("\n")
}
