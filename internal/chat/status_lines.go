package chat

// WithStatusLines has /status end with the lines f returns, such as each
// MCP server's state (starting, ready with its tools, or failed and when
// it is tried again), so that a user learns why a tool is missing. The
// lines pass the redaction of everything sent, as every reply does.
func WithStatusLines(f func() []string) Option { return func(h *Host) { h.commander.statusLines = f } }
