package approvals

import (
	"context"
	"time"
)

// Decision is the answer to an approval request. The zero value denies.
type Decision int

// The answers the chat offers.
const (
	// Deny refuses the call; it is also what no answer, a stopped turn
	// and a failed request amount to.
	Deny Decision = iota
	// AllowOnce runs this call.
	AllowOnce
	// AllowAlways runs this call and, from now on, every call in the same
	// chat that matches the same rules.
	AllowAlways
)

// String names the decision for logs.
func (d Decision) String() string {
	switch d {
	case AllowOnce:
		return "allow once"
	case AllowAlways:
		return "always in this chat"
	}
	return "deny"
}

// Request is what the chat is asked about one tool call.
type Request struct {
	// Scope is the chat the call runs for (the session's scope, the
	// chat host's target string); SessionID is its session.
	Scope     string
	SessionID string
	// CallID and Tool identify the call.
	CallID string
	Tool   string
	// Command is what the call does, redacted and shortened: a bash
	// command, "write <path>", or the tool and its arguments.
	Command string
	// Rules are the rules the call matches that the chat has not always
	// allowed, never empty. "Always in this chat" allows all of them.
	Rules []Rule
	// Timeout is how long the request waits for an answer; no answer
	// denies the call.
	Timeout time.Duration
}

// Asker asks the chat a Request is about, and waits for the answer. The
// chat host implements it (the message with the buttons) on the front end
// it prompts each turn with ([agent.WithFrontEnd]), where the extension
// finds it by type assertion. ctx ends when the
// approval times out or the turn is stopped; Ask must then return (a
// Decision other than Deny returned with ctx done is not used). An asker
// that tells the chat an "always" answer is kept may keep it in the
// [DecisionStore] itself first, and answer AllowOnce when it could not
// (a full disk), so that what the chat reads is true.
type Asker interface {
	Ask(ctx context.Context, req Request) (Decision, error)
}

// DecisionStore keeps each chat's "Always in this chat" decisions across
// restarts. The chat host implements it (chat-settings.json) on the same
// front end as its [Asker]; the rule is a [Rule] ID. It is asked with the
// turn's context, as the asker is, so that a front end may refuse a scope
// that is not its turn's chat: one chat's decisions never let a call of
// another run unasked.
type DecisionStore interface {
	// AlwaysAllowed reports whether the chat scope allowed rule for good.
	AlwaysAllowed(ctx context.Context, scope, rule string) bool
	// AllowAlways records that the chat scope allows rule from now on; a
	// rule kept already (by the asker) is not an error.
	AllowAlways(ctx context.Context, scope, rule string) error
}

// unattendedKey is the context key of Unattended.
type unattendedKey struct{}

// Unattended returns ctx marked as belonging to a turn nobody watches (a
// scheduled job's): a call that needs approval is denied there without
// asking, and its result says why. The chat host marks the context it
// prompts a job's turn with.
func Unattended(ctx context.Context) context.Context {
	return context.WithValue(ctx, unattendedKey{}, true)
}

// unattended returns why nobody can be asked in the turn of ctx, whose
// front end asks through front: a turn marked by Unattended, or one
// without a chat to ask in. It returns "" when the chat can be asked.
func unattended(ctx context.Context, front chat) string {
	if v, _ := ctx.Value(unattendedKey{}).(bool); v {
		return "this turn was started by a scheduled job"
	}
	if front == nil {
		return "this turn has no chat to ask in"
	}
	return ""
}
