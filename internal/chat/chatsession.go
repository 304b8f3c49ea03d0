package chat

import (
	"context"
	"strconv"
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
