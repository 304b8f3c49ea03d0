package chat

import (
	"sync"

	"github.com/volcanic/telegram-agent/internal/approvals"
)

// pendingApproval is an approval request waiting for its chat's answer.
type pendingApproval struct {
	target target
	// seq orders the requests of a chat: /approve and /deny answer the
	// oldest.
	seq uint64
	// answer receives the first press; it holds one.
	answer chan approvals.Decision
}

// approvalBoard is the approval requests waiting for an answer, by id.
type approvalBoard struct {
	mu      sync.Mutex
	pending map[string]*pendingApproval
	seq     uint64
}

// add registers a request for t and returns its id.
func (b *approvalBoard) add(t target) (string, *pendingApproval) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pending == nil {
		b.pending = map[string]*pendingApproval{}
	}
	id := newTurnID()
	for b.pending[id] != nil {
		id = newTurnID()
	}
	b.seq++
	p := &pendingApproval{target: t, seq: b.seq, answer: make(chan approvals.Decision, 1)}
	b.pending[id] = p
	return id, p
}

// remove forgets the request id.
func (b *approvalBoard) remove(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.pending, id)
}

// oldest returns the id of t's oldest request still waiting, "" when none
// waits.
func (b *approvalBoard) oldest(t target) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var id string
	var seq uint64
	for k, p := range b.pending {
		if p.target == t && len(p.answer) == 0 && (id == "" || p.seq < seq) {
			id, seq = k, p.seq
		}
	}
	return id
}

// waiting reports whether a request of t waits for its answer.
func (b *approvalBoard) waiting(t target) bool { return b.oldest(t) != "" }

// answer delivers d to the request id of t; it reports false when no such
// request waits (it ended, or the press comes from another chat).
func (b *approvalBoard) answer(id string, t target, d approvals.Decision) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.pending[id]
	if p == nil || p.target != t {
		return false
	}
	select {
	case p.answer <- d:
		delete(b.pending, id)
		return true
	default:
		return false
	}
}
