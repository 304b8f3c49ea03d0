package agent

import "time"

// WithMessageTimes starts the content of every prompt with a stamp of when
// it was sent, in the session's zone ([TimeStamp]). The stamp is recorded
// with the message, in the history and the transcript, so every later
// request repeats the same bytes: the system prompt need not carry the
// time, and the system prompt and the history stay a stable prefix that
// the provider's prompt cache can keep.
func WithMessageTimes() Option { return func(c *config) { c.messageTimes = true } }

// TimeStamp returns the stamp of a message sent at t in the zone named
// zone (an IANA id; empty names t's zone by its abbreviation), such as
// "[Tue 1 Dec 2026 09:30 Europe/Berlin]".
func TimeStamp(t time.Time, zone string) string {
	if zone == "" {
		zone, _ = t.Zone()
	}
	return "[" + t.Format("Mon 2 Jan 2006 15:04") + " " + zone + "]"
}

// stamped returns content with the stamp of now in the session's zone
// first, when the agent stamps messages.
func (s *Session) stamped(content []Content, now time.Time) []Content {
	if !s.agent.cfg.messageTimes {
		return content
	}
	s.mu.Lock()
	tz, loc := s.tz, s.loc
	s.mu.Unlock()
	return append([]Content{Text(TimeStamp(now.In(loc), tz))}, content...)
}
