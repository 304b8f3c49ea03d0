package chat

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/go-telegram/bot/models"

	"github.com/volcanic/telegram-agent/internal/chat/botapi"
)

// callbackModel is the kind of a model button of /model:
// "model:<model hash>" (see ruleHash: a model's name may be longer than
// callback data may be).
const callbackModel = "model"

// chatModel returns the model scope chose with /model, when it is still
// one of the configured models; "" means the agent's default.
func (h *Host) chatModel(scope string) string {
	m := h.settings.get(scope).Model
	if m == "" || !slices.Contains(h.cfg.Models, m) {
		return ""
	}
	return m
}

// currentModel returns the model t's session uses.
func (h *Host) currentModel(ctx context.Context, t target) string {
	if s, err := h.session(ctx, t); err == nil {
		return s.Model()
	}
	if m := h.chatModel(t.String()); m != "" {
		return m
	}
	return h.cfg.Model
}

// lookupModel returns the configured model named name (case-insensitively).
func (h *Host) lookupModel(name string) (string, bool) {
	for _, m := range h.cfg.Models {
		if strings.EqualFold(m, name) {
			return m, true
		}
	}
	return "", false
}

// modelList lists the configured models, the current one marked.
func (h *Host) modelList(current string) string {
	var b strings.Builder
	for _, m := range h.cfg.Models {
		mark := "•"
		if m == current {
			mark = "✅"
		}
		fmt.Fprintf(&b, "%s %s\n", mark, m)
	}
	return strings.TrimRight(b.String(), "\n")
}

// setModel handles /model: without an argument it shows the current model
// and the ones to switch to; with one it switches this chat (stored in
// chat-settings.json and applied to the session from its next request).
func (h *Host) setModel(ctx context.Context, t target, arg string) string {
	arg = strings.TrimSpace(arg)
	current := h.currentModel(ctx, t)
	if len(h.cfg.Models) == 0 {
		return "Model: " + current + "\nSwitching models is not configured (OPENAI_MODELS lists the models a chat may use)."
	}
	if arg == "" {
		return modelMenuText(current)
	}
	name, ok := h.lookupModel(arg)
	if !ok {
		return fmt.Sprintf("%q is not one of the models this bot may use. Choose one of:\n%s", h.shortened(arg, 60), h.modelList(current))
	}
	scope := t.String()
	if err := h.settings.update(scope, func(c *chatSettings) { c.Model = name }); err != nil {
		h.logger.Error("model", "err", err)
		return "⚠️ The model could not be saved; nothing changed."
	}
	if s, err := h.session(ctx, t); err == nil {
		s.SetModel(name)
	}
	return "🧠 This chat now uses " + name + "."
}

// modelMenuText heads /model's buttons.
func modelMenuText(current string) string {
	return "Model: " + current + "\n\nTap a model to switch this chat to it, or send /model <name>."
}

// modelButtons are /model's buttons: one row per model, the current one
// marked.
func (h *Host) modelButtons(current string) *models.InlineKeyboardMarkup {
	var rows [][]models.InlineKeyboardButton
	for _, m := range h.cfg.Models {
		label := m
		if m == current {
			label = "✅ " + m
		}
		rows = append(rows, []models.InlineKeyboardButton{{Text: h.shortened(label, 60), CallbackData: callbackModel + ":" + ruleHash(m)}})
	}
	return &models.InlineKeyboardMarkup{InlineKeyboard: rows}
}

// modelCommand handles /model: with a name it switches at once; without
// one it shows the models as buttons (or says switching is not
// configured).
func (h *Host) modelCommand(ctx context.Context, in *inbound, reply func(string)) {
	if strings.TrimSpace(in.args) != "" || len(h.cfg.Models) == 0 {
		reply(h.setModel(ctx, in.target, in.args))
		return
	}
	t := in.target
	h.post(t, func(ctx context.Context) {
		current := h.currentModel(ctx, t)
		p := h.messageParams(t, modelMenuText(current), "", in.msg.ID)
		p.Buttons = h.modelButtons(current)
		if _, err := h.quick.SendMessage(ctx, p); err != nil {
			h.logSendError("model", t, err)
		}
	})
}

// pressModel handles a model button of /model: the chat switches, the
// toast says so, and the buttons are re-rendered in place. A model no
// longer configured says so.
func (h *Host) pressModel(p press) {
	t := p.target
	h.post(t, func(ctx context.Context) {
		name := ""
		for _, m := range h.cfg.Models {
			if ruleHash(m) == p.arg {
				name = m
			}
		}
		if name == "" {
			p.answer(ctx, "That model is no longer one this bot may use: send /model again.")
			return
		}
		p.answer(ctx, h.setModel(ctx, t, name))
		current := h.currentModel(ctx, t)
		if _, err := h.quick.EditMessageText(ctx, botapi.Edit{ChatID: t.chatID, MessageID: p.msgID, Text: modelMenuText(current), Buttons: h.modelButtons(current)}); err != nil {
			h.logSendError("model edit", t, err)
		}
	})
}
