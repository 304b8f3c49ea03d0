package botapi

import "github.com/volcanic/telegram-agent/internal/chat/markup"

// Shorten is markup.Shorten of s redacted whole first: the one cut of a
// text that comes unredacted (a job's name read back from state the agent
// writes, a user's argument echoed back, an approval rule), since a cut
// can leave a part of a secret's encoded form that the redaction of the
// whole message no longer recognises. Texts of the agent's events come
// redacted and are cut with markup.Shorten.
func (c *Client) Shorten(s string, n int) string {
	return markup.Shorten(c.s.red.Redact(s), n)
}
