package chat

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/storagefail"
)

// logTurn writes a turn's one Info line: the chat, the model that
// answered, how long it took, its tokens, its tool calls and how it ended;
// at Debug also its model requests and the parts of its prompt. Never the
// prompt, the answer or a tool's output.
func (w *chatWorker) logTurn(it *workItem, sess *agent.Session, model string, content []agent.Content, res agent.TurnResult, err error, took time.Duration) {
	t := w.target
	kind := "message"
	if it.kind == itemPrompt {
		kind = "scheduled"
	}
	w.h.logger.Info("turn",
		"scope", t.String(), "session", sess.ID(), "kind", kind, "model", model,
		"duration", took.Round(time.Millisecond),
		"prompt_tokens", res.Total.PromptTokens, "cached_tokens", res.Total.CachedTokens,
		"completion_tokens", res.Total.CompletionTokens,
		"tool_calls", res.ToolCalls, "outcome", turnOutcome(res, err))
	w.h.logger.Debug("turn details", "scope", t.String(), "turn", it.turnID, "requests", res.Steps,
		"last_prompt_tokens", res.Usage.PromptTokens, "content_parts", len(content), "answer_bytes", len(res.Text))
}

// turnOutcome names how a turn ended, by kind: ok, step_limit, stopped, or
// failed with the kind of problem.
func turnOutcome(res agent.TurnResult, err error) string {
	var pe *agent.ProviderError
	switch {
	case err == nil && res.StepLimit:
		return "step_limit"
	case err == nil:
		return "ok"
	case errors.Is(err, context.Canceled):
		return "stopped"
	case errors.Is(err, agent.ErrContextTooLong):
		return "failed: context too long"
	case errors.Is(err, agent.ErrStreamInterrupted):
		return "failed: answer cut off"
	case storagefail.Is(err):
		return "failed: agent dir not writable"
	case unreachable(err):
		return "failed: provider unreachable"
	case errors.As(err, &pe) && pe.StatusCode != 0:
		return "failed: provider status " + strconv.Itoa(pe.StatusCode)
	case errors.As(err, &pe):
		return "failed: broken answer"
	}
	return "failed"
}
