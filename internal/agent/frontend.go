package agent

import "context"

// frontEndKey is the context key of WithFrontEnd.
type frontEndKey struct{}

// WithFrontEnd returns ctx carrying fe, the front end a turn prompted with
// ctx answers to (the chat host, for a chat's turn). Its tools and
// extension handlers find it with [FrontEnd] and take what they need of it
// by type assertion, the way an http.Handler asserts an http.Flusher of
// its ResponseWriter: the approvals extension an asker, send_file a file
// sender. It is handed to each turn rather than to the tools' constructors
// because the front end is built after the agent it prompts.
func WithFrontEnd(ctx context.Context, fe any) context.Context {
	return context.WithValue(ctx, frontEndKey{}, fe)
}

// FrontEnd returns the front end ctx carries, or nil when the turn has
// none (a turn nobody prompted from a chat: a test, a tool run alone).
func FrontEnd(ctx context.Context) any {
	return ctx.Value(frontEndKey{})
}
