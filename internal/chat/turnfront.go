package chat

// frontEnd is what the host hands each turn on its context
// (agent.WithFrontEnd) for the tools and extension handlers that reach the
// chat from inside the turn, the way net/http hands a handler its
// ResponseWriter: the approvals extension asks through it, send_file sends
// through it. Handing it per turn, not to their constructors, is what
// lets main build the agent before the host.
type frontEnd struct {
	*chatApprovals
	fileSender
}

// newFrontEnd returns h's front end; h's Bot API client, view, settings
// and logger are set.
func newFrontEnd(h *Host) frontEnd {
	return frontEnd{
		chatApprovals: &chatApprovals{view: h.view, settings: h.settings, board: &h.asks, logger: h.logger},
		fileSender:    fileSender{view: h.view, logger: h.logger},
	}
}
