package chat

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/go-telegram/bot/models"
	"github.com/volcanic/telegram-agent/internal/chat/turnview"
)

// callbackModel is the kind of a model button of /model:
// "model:<model hash>" (see ruleHash: a model's name may be longer than
// callback data may be).
const callbackModel = "model"

// modelSwitch is /model and its buttons: a chat's choice among the
// configured models, kept in its settings and applied to its session.
type modelSwitch struct {
	sessions *sessions
	logger   *slog.Logger
	out      outlet
	menu     menu
}

// lookup returns the configured model named name (case-insensitively).
func (m *modelSwitch) lookup(name string) (string, bool) {
	for _, model := range m.sessions.models {
		if strings.EqualFold(model, name) {
			return model, true
		}
	}
	return "", false
}

// list lists the configured models, the current one marked.
func (m *modelSwitch) list(current string) string {
	var b strings.Builder
	for _, model := range m.sessions.models {
		mark := "•"
		if model == current {
			mark = "✅"
		}
		fmt.Fprintf(&b, "%s %s\n", mark, model)
	}
	return strings.TrimRight(b.String(), "\n")
}

// set handles /model: without an argument it shows the current model and
// the ones to switch to; with one it switches this chat (stored in
// chat-settings.json and applied to the session from its next request).
func (m *modelSwitch) set(ctx context.Context, t target, arg string) string {
	arg = strings.TrimSpace(arg)
	current := m.sessions.currentModel(ctx, t)
	if len(m.sessions.models) == 0 {
		return "Model: " + current + "\nSwitching models is not configured (OPENAI_MODELS lists the models a chat may use)."
	}
	if arg == "" {
		return modelMenuText(current)
	}
	name, ok := m.lookup(arg)
	if !ok {
		return fmt.Sprintf("%q is not one of the models this bot may use. Choose one of:\n%s", m.out.shortened(arg, 60), m.list(current))
	}
	scope := t.String()
	if err := m.sessions.settings.update(scope, func(c *chatSettings) { c.Model = name }); err != nil {
		m.logger.Error("model", "err", err)
		return "⚠️ The model could not be saved; nothing changed."
	}
	if s, err := m.sessions.open(ctx, t); err == nil {
		s.SetModel(name)
	}
	return "🧠 This chat now uses " + name + "."
}

// modelMenuText heads /model's buttons.
func modelMenuText(current string) string {
	return "Model: " + current + "\n\nTap a model to switch this chat to it, or send /model <name>."
}

// buttons are /model's buttons: one row per model, the current one
// marked.
func (m *modelSwitch) buttons(current string) *models.InlineKeyboardMarkup {
	var rows [][]models.InlineKeyboardButton
	for _, model := range m.sessions.models {
		label := model
		if model == current {
			label = "✅ " + model
		}
		rows = append(rows, []models.InlineKeyboardButton{{Text: m.out.shortened(label, 60), CallbackData: callbackModel + ":" + ruleHash(model)}})
	}
	return &models.InlineKeyboardMarkup{InlineKeyboard: rows}
}

// command handles /model: with a name it switches at once; without one it
// shows the models as buttons (or says switching is not configured).
func (m *modelSwitch) command(ctx context.Context, in *inbound, reply func(string)) {
	if strings.TrimSpace(in.args) != "" || len(m.sessions.models) == 0 {
		reply(m.set(ctx, in.target, in.args))
		return
	}
	t := in.target
	m.out.post(t, func(ctx context.Context, n turnview.Noticer) {
		current := m.sessions.currentModel(ctx, t)
		m.menu.send(ctx, n, t, "model", modelMenuText(current), m.buttons(current), in.msg.ID)
	})
}

// press handles a model button of /model: the chat switches, the toast
// says so, and the buttons are re-rendered in place. A model no longer
// configured says so.
func (m *modelSwitch) press(p press) {
	t := p.target
	m.out.post(t, func(ctx context.Context, n turnview.Noticer) {
		name := ""
		for _, model := range m.sessions.models {
			if ruleHash(model) == p.arg {
				name = model
			}
		}
		if name == "" {
			p.answer(ctx, n, "That model is no longer one this bot may use: send /model again.")
			return
		}
		p.answer(ctx, n, m.set(ctx, t, name))
		current := m.sessions.currentModel(ctx, t)
		m.menu.edit(ctx, n, t, "model edit", p.msgID, modelMenuText(current), m.buttons(current))
	})
}
