package chat

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

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
		return "Model: " + current + "\n\nAvailable:\n" + h.modelList(current) + "\n\nSwitch with /model <name>."
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
