package agent

import "context"

// turnKey is the context key of the turn marks.
type turnKey struct{}

// turnMark marks a context as belonging to a turn of session, inside the
// turn marked by parent (a tool of one session prompting another), if any.
type turnMark struct {
	session *Session
	parent  *turnMark
}

// withTurn returns ctx marked as belonging to a turn of s. Every context a
// turn hands out (to its tools and to the extensions' handlers) derives
// from it.
func withTurn(ctx context.Context, s *Session) context.Context {
	parent, _ := ctx.Value(turnKey{}).(*turnMark)
	return context.WithValue(ctx, turnKey{}, &turnMark{session: s, parent: parent})
}

// insideTurn reports whether ctx belongs to a turn of s, directly or
// through turns it waits for.
func insideTurn(ctx context.Context, s *Session) bool {
	m, _ := ctx.Value(turnKey{}).(*turnMark)
	for ; m != nil; m = m.parent {
		if m.session == s {
			return true
		}
	}
	return false
}
