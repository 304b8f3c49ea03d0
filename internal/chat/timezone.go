package chat

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// tzCommand handles /tz.
func (c *commander) tzCommand(ctx context.Context, in *inbound, reply func(string)) {
	reply(c.setTimeZone(ctx, in.target, in.args))
}

// setTimeZone shows the chat's zone, or sets it in its settings and its
// session.
func (c *commander) setTimeZone(ctx context.Context, t target, arg string) string {
	scope := t.String()
	arg = strings.TrimSpace(arg)
	if arg == "" {
		zone := c.sessions.timeZone(scope)
		if zone == "" {
			zone = "the host's"
		}
		return "This chat's time zone is " + zone + ". Set it with /tz <IANA zone>, for example /tz Europe/Berlin or /tz America/New_York."
	}
	if _, err := time.LoadLocation(arg); err != nil || arg == "Local" || strings.EqualFold(arg, "local") {
		return fmt.Sprintf("%q is not an IANA time zone. Use a name such as Europe/Berlin, America/New_York, Asia/Tokyo or UTC.", c.out.shortened(arg, 60))
	}
	if err := c.sessions.settings.update(scope, func(s *chatSettings) { s.TimeZone = arg }); err != nil {
		c.logger.Error("tz", "err", err)
		return "⚠️ The time zone could not be saved."
	}
	if s, err := c.sessions.open(ctx, t); err == nil {
		if err := s.SetTimeZone(arg); err != nil {
			c.logger.Warn("session time zone", "err", err)
		}
	}
	return "🕒 Time zone set to " + arg + "."
}
