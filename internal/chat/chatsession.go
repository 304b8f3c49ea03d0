package chat

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
)

// sessions finds each chat's current session and what it runs with: the
// session id kept in the chat settings, the model chosen with /model and
// the zone set with /tz, each over the operator's default. The commands,
// the usage reports and the turns ask it, not the host.
type sessions struct {
	agent    *agent.Agent
	settings *settingsStore
	// model is the agent's default model, models the ones a chat may
	// switch to (Config.Model, Config.Models).
	model  string
	models []string
	// zone is the zone of chats without /tz ("" : the host's).
	zone string
	// toolStatus is the operator's tool status mode (Config.ToolStatus).
	toolStatus string
}

// id returns target's current session id.
func (s *sessions) id(t target) string {
	if id := s.settings.get(t.String()).Session; id != "" {
		return id
	}
	return t.sessionBase()
}

// label is the session as /status shows it: when it was started (its id
// ends in the start time), in the chat's zone.
func (s *sessions) label(t target) string {
	id := s.id(t)
	_, suffix, ok := strings.Cut(id, ".")
	if !ok {
		return "the chat's first"
	}
	n, err := strconv.ParseInt(suffix, 36, 64)
	if err != nil {
		return id
	}
	return "started " + formatWhen(time.Unix(0, n).In(s.location(t.String())), time.Now())
}

// formatWhen formats when for the chat: the weekday, the day, the month,
// the year when it is not now's, the time and the zone.
func formatWhen(when, now time.Time) string {
	if when.Year() != now.In(when.Location()).Year() {
		return when.Format("Mon 2 Jan 2006 15:04 MST")
	}
	return when.Format("Mon 2 Jan 15:04 MST")
}

// open opens (or returns) target's current session, with the chat's model
// (see /model) applied.
func (s *sessions) open(ctx context.Context, t target) (*agent.Session, error) {
	scope := t.String()
	model := s.chatModel(scope)
	sess, err := s.agent.Session(ctx, agent.SessionOptions{
		ID:       s.id(t),
		Scope:    scope,
		TimeZone: s.timeZone(scope),
		Model:    model,
	})
	if err != nil {
		return nil, err
	}
	if model != "" && sess.Model() != model {
		sess.SetModel(model)
	}
	return sess, nil
}

// chatModel returns the model scope chose with /model, when it is still
// one of the configured models; "" means the agent's default.
func (s *sessions) chatModel(scope string) string {
	m := s.settings.get(scope).Model
	if m == "" || !slices.Contains(s.models, m) {
		return ""
	}
	return m
}

// currentModel returns the model t's session uses.
func (s *sessions) currentModel(ctx context.Context, t target) string {
	if sess, err := s.open(ctx, t); err == nil {
		return sess.Model()
	}
	if m := s.chatModel(t.String()); m != "" {
		return m
	}
	return s.model
}

// timeZone returns scope's IANA zone: its /tz, else the default zone.
func (s *sessions) timeZone(scope string) string {
	if z := s.settings.get(scope).TimeZone; z != "" {
		return z
	}
	return s.zone
}

// location returns scope's zone as a *time.Location (Local when none).
func (s *sessions) location(scope string) *time.Location {
	if z := s.timeZone(scope); z != "" {
		if loc, err := time.LoadLocation(z); err == nil {
			return loc
		}
	}
	return time.Local
}

// session opens target's current session (see sessions.open); the turns
// call it.
func (h *Host) session(ctx context.Context, t target) (*agent.Session, error) {
	return h.sessions.open(ctx, t)
}

// newSession points the chat at a fresh session and then closes the old
// one (its transcript stays on disk). The new id is saved first, so a
// /status, /tz or /model in between opens the new session, never the old
// one again (which would then stay open).
func (h *Host) newSession(ctx context.Context, t target) {
	old, oldErr := h.sessions.open(ctx, t)
	id := t.sessionBase() + "." + strconv.FormatInt(time.Now().UnixNano(), 36)
	if err := h.settings.update(t.String(), func(c *chatSettings) { c.Session = id }); err != nil {
		h.logger.Error("new session", "err", err)
		h.out.sendText(ctx, t, "⚠️ Could not start a new session: the chat settings cannot be written.", 0)
		return
	}
	if h.newSessionGap != nil {
		h.newSessionGap()
	}
	if oldErr == nil {
		old.Close()
	}
	h.out.sendText(ctx, t, "🆕 New session started. The previous conversation is kept on disk.", 0)
}
