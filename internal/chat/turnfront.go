package chat

import (
	"context"
	"fmt"

	"github.com/volcanic/telegram-agent/internal/agent/tools"
	"github.com/volcanic/telegram-agent/internal/approvals"
	"github.com/volcanic/telegram-agent/internal/chat/turnview"
)

// frontEnd is what the host hands each turn on its context
// (agent.WithFrontEnd) for the tools and extension handlers that reach the
// chat from inside the turn, the way net/http hands a handler its
// ResponseWriter: the approvals extension asks through it, send_file sends
// through it. Handing it per turn, not to their constructors, is what
// lets main build the agent before the host. It reaches only the chat of
// the turn it is called in (see turnChat).
type frontEnd struct {
	*chatApprovals
	fileSender
}

// The tools and handlers find the front end by type assertion, which a
// changed signature would fail without a word (approvals would deny every
// risky call, send_file send nothing): the compiler checks it here.
var _ interface {
	approvals.Asker
	approvals.DecisionStore
	tools.FileSender
} = frontEnd{}

// newFrontEnd returns h's front end; h's view, outlet, settings and logger
// are set.
func newFrontEnd(h *Host) frontEnd {
	return frontEnd{
		chatApprovals: &chatApprovals{view: h.view, settings: h.settings, board: &h.asks, out: h.out, logger: h.logger},
		fileSender:    fileSender{view: h.view, logger: h.logger},
	}
}

// turnChat returns the chat scope names when it is the chat of the turn
// ctx belongs to (the turn on ctx, see turnview.WithTurn), else an
// error. One front end serves every turn, and every tool and extension
// handler of a turn finds it, while the scope they pass is the session's
// or their own: checking it against the turn keeps a call from sending
// to, asking in or using the decisions of a chat the turn does not answer.
func turnChat(ctx context.Context, scope string) (target, error) {
	t, err := parseTarget(scope)
	if err != nil {
		return target{}, err
	}
	o := turnview.TurnOf(ctx)
	if o == nil {
		return target{}, fmt.Errorf("chat: %s is reached outside a turn", scope)
	}
	if o.Target() != t.view() {
		return target{}, fmt.Errorf("chat: %s is not the chat of this turn (%s)", scope, o.Target())
	}
	return t, nil
}
