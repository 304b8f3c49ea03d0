package chat

// reportInterrupted tells each chat whose message a crash or restart cut
// short, so nothing is lost silently; the notices go out while polling
// starts.
func (h *Host) reportInterrupted() {
	seen := map[string]bool{}
	for _, e := range h.journal.reported() {
		if seen[e.Scope] {
			continue
		}
		seen[e.Scope] = true
		t, err := parseTarget(e.Scope)
		if err != nil {
			continue
		}
		h.logger.Info("reporting a message interrupted by a restart", "scope", e.Scope, "update_id", e.ID)
		h.notice(t, "⚠️ Your last message was interrupted by a restart; send it again or say /retry.", 0)
	}
}
