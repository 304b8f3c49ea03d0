package chat

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/chat/turnview"
	"github.com/volcanic/telegram-agent/internal/storagefail"
)

// compactedNote is shown when the session was compacted during a turn (by
// the turn's view).
const compactedNote = turnview.CompactedNote

// compactSession handles /compact on the chat's queue: it summarises the
// older messages now. A failed summary leaves the session as it was.
func (h *Host) compactSession(ctx context.Context, t target) {
	s, err := h.session(ctx, t)
	if err != nil {
		h.tellSessionError(ctx, t, err, 0)
		return
	}
	before := s.ContextUsage()
	err = s.Compact(ctx)
	switch {
	case errors.Is(err, agent.ErrNothingToCompact):
		h.out.sendText(ctx, t, "Nothing to compact yet: the conversation is no longer than what compaction keeps.", 0)
	case err != nil && ctx.Err() != nil:
		// Stopped or shutting down: nothing was changed, nothing to say.
	case err != nil && storagefail.Is(err):
		h.storage.failed("transcript", err)
		h.out.sendText(ctx, t, "⚠️ The summary could not be saved: the bot's disk is full or cannot be written, so nothing changed. Try again once the operator has freed space.", 0)
	case err != nil:
		h.logger.Warn("compaction failed", "scope", t.String(), "err", err)
		h.out.sendText(ctx, t, "⚠️ The summary failed, so nothing changed: "+err.Error(), 0)
	default:
		h.out.sendText(ctx, t, compactedReport(before, s.ContextUsage()), 0)
	}
}

// compactedReport says what a /compact did to the context, honestly: a
// summary that is no smaller than what it replaced is reported as such.
func compactedReport(before, after agent.ContextUsage) string {
	if after.Tokens < before.Tokens {
		return fmt.Sprintf("🗜 Compacted older messages: the context went from %s to %s tokens (%d%% of the window).",
			groupDigits(before.Tokens), groupDigits(after.Tokens), after.Percent)
	}
	return fmt.Sprintf("🗜 Compacted older messages, but the summary is no smaller than what it replaced: the context went from %s to %s tokens (%d%% of the window). Compacting pays off on a longer conversation.",
		groupDigits(before.Tokens), groupDigits(after.Tokens), after.Percent)
}

// contextLines describes a session's context use for /status: tokens and
// percent of the window, and when it was last compacted (in loc).
func contextLines(u agent.ContextUsage, loc *time.Location) string {
	last := "never"
	if !u.LastCompaction.IsZero() {
		last = u.LastCompaction.In(loc).Format("Mon 2 Jan 15:04 MST")
	}
	return fmt.Sprintf("Context: %s of %s tokens (%d%%)\nLast compaction: %s",
		groupDigits(u.Tokens), groupDigits(u.Window), u.Percent, last)
}

// groupDigits writes n with thousands separators: 128000 → "128,000".
func groupDigits(n int) string {
	s := strconv.Itoa(n)
	sign := ""
	if n < 0 {
		sign, s = "-", s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return sign + s
}
