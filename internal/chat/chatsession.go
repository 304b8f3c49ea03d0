package chat

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
)

// sessionID returns target's current session id.
func (h *Host) sessionID(t target) string {
	if id := h.settings.get(t.String()).Session; id != "" {
		return id
	}
	return t.sessionBase()
}

// sessionLabel is the session as /status shows it: when it was started
// (its id ends in the start time), in the chat's zone.
func (h *Host) sessionLabel(t target) string {
	id := h.sessionID(t)
	_, suffix, ok := strings.Cut(id, ".")
	if !ok {
		return "the chat's first"
	}
	n, err := strconv.ParseInt(suffix, 36, 64)
	if err != nil {
		return id
	}
	return "started " + formatWhen(time.Unix(0, n).In(h.location(t.String())), time.Now())
}

// formatWhen formats when for the chat: the weekday, the day, the month,
// the year when it is not now's, the time and the zone.
func formatWhen(when, now time.Time) string {
	if when.Year() != now.In(when.Location()).Year() {
		return when.Format("Mon 2 Jan 2006 15:04 MST")
	}
	return when.Format("Mon 2 Jan 15:04 MST")
}

// session opens (or returns) target's current session, with the chat's
// model (see /model) applied.
func (h *Host) session(ctx context.Context, t target) (*agent.Session, error) {
	scope := t.String()
	model := h.chatModel(scope)
	s, err := h.cfg.Agent.Session(ctx, agent.SessionOptions{
		ID:       h.sessionID(t),
		Scope:    scope,
		TimeZone: h.TimeZone(scope),
		Model:    model,
	})
	if err != nil {
		return nil, err
	}
	if model != "" && s.Model() != model {
		s.SetModel(model)
	}
	return s, nil
}

// newSession points the chat at a fresh session and then closes the old
// one (its transcript stays on disk). The new id is saved first, so a
// /status, /tz or /model in between opens the new session, never the old
// one again (which would then stay open).
func (h *Host) newSession(ctx context.Context, t target) {
	old, oldErr := h.session(ctx, t)
	id := t.sessionBase() + "." + strconv.FormatInt(time.Now().UnixNano(), 36)
	if err := h.settings.update(t.String(), func(c *chatSettings) { c.Session = id }); err != nil {
		h.logger.Error("new session", "err", err)
		h.sendText(ctx, t, "⚠️ Could not start a new session: the chat settings cannot be written.", 0)
		return
	}
	if h.newSessionGap != nil {
		h.newSessionGap()
	}
	if oldErr == nil {
		old.Close()
	}
	h.sendText(ctx, t, "🆕 New session started. The previous conversation is kept on disk.", 0)
}
