package scheduler

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// schedule is a parsed Job.Schedule: a recurring cron schedule, or the
// instant of a one-shot job.
type schedule struct {
	cron cron.Schedule
	at   time.Time
}

// ErrBadSchedule marks a schedule that is not one of the accepted forms,
// a one-shot time that has passed, or one firing more often than the
// scheduler allows.
var ErrBadSchedule = errors.New("invalid schedule")

// acceptedForms lists the accepted schedules with an example of each, for
// the model to correct itself; floor is the shortest interval allowed.
func acceptedForms(floor time.Duration) string {
	return "Accepted schedules (evaluated in this chat's time zone):\n" +
		"- a 5-field cron expression: minute hour day-of-month month day-of-week, e.g. \"0 9 * * 1\" (Mondays at 09:00)\n" +
		"- @hourly, @daily or @weekly, e.g. \"@daily\" (every day at midnight)\n" +
		"- @every <duration>, at least " + floor.String() + ", e.g. \"@every 30m\"\n" +
		"- a one-shot time, RFC 3339, e.g. \"2026-12-01T09:00:00+01:00\"\n" +
		"- a one-shot local time in this chat's zone, e.g. \"2026-12-01 09:00\""
}

// parseSchedule parses text. A one-shot local time is read in loc (see
// localInstant for the daylight-saving rule). It checks neither the floor
// nor whether a one-shot time has passed: validateSchedule does.
func parseSchedule(text string, loc *time.Location) (schedule, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return schedule{}, fmt.Errorf("%w: it is empty", ErrBadSchedule)
	}
	if t, err := time.Parse(time.RFC3339, text); err == nil {
		return schedule{at: t}, nil
	}
	for _, layout := range []string{"2006-01-02 15:04", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02T15:04:05"} {
		if t, err := time.Parse(layout, text); err == nil {
			return schedule{at: localInstant(t, loc)}, nil
		}
	}
	c, err := cron.ParseStandard(text)
	if err != nil {
		return schedule{}, fmt.Errorf("%w %q: %w", ErrBadSchedule, text, err)
	}
	return schedule{cron: c}, nil
}

// validateSchedule checks a new job's schedule at now: a one-shot time must
// lie in the future, and a recurring schedule must not fire more often than
// floor.
func validateSchedule(s schedule, text string, now time.Time, loc *time.Location, floor time.Duration) error {
	if s.cron == nil {
		if !s.at.After(now) {
			return fmt.Errorf("%w %q: that time has passed (it is now %s)", ErrBadSchedule, text, formatTime(now, loc))
		}
		return nil
	}
	if gap := shortestGap(s.cron, now, loc); gap < floor {
		return fmt.Errorf("%w %q: it fires every %s, more often than the minimum of %s", ErrBadSchedule, text, gap, floor)
	}
	return nil
}

// shortestGap returns the shortest interval between the schedule's next
// few dozen runs after now.
func shortestGap(c cron.Schedule, now time.Time, loc *time.Location) time.Duration {
	if d, ok := c.(cron.ConstantDelaySchedule); ok {
		return d.Delay
	}
	shortest := time.Duration(1<<63 - 1)
	prev := nextCron(c, now, loc)
	for range 64 {
		if prev.IsZero() {
			break
		}
		next := nextCron(c, prev, loc)
		if next.IsZero() {
			break
		}
		shortest = min(shortest, next.Sub(prev))
		prev = next
	}
	return shortest
}

// allHours is a cron.SpecSchedule's Hour bits when every hour matches.
const allHours = 1<<24 - 1

// nextCron returns the first run of c after the instant after, evaluated in
// loc (unless the expression names its own zone with CRON_TZ=). Zero means
// never.
//
// Daylight saving follows cron/v3, with one change: a run at a fixed hour
// whose wall-clock time occurs twice (the autumn change) runs at the first
// occurrence only, while an hourly-or-finer schedule runs in both. A fixed
// time that does not exist (the spring change) is skipped that day, as
// cron/v3 does.
func nextCron(c cron.Schedule, after time.Time, loc *time.Location) time.Time {
	n := c.Next(after.In(loc))
	spec, ok := c.(*cron.SpecSchedule)
	if !ok || n.IsZero() || spec.Hour&allHours == allHours || !repeatedWallTime(n) {
		return n
	}
	return c.Next(n)
}

// repeatedWallTime reports whether t's wall-clock reading already occurred
// earlier, before a backward daylight-saving shift in t's location.
func repeatedWallTime(t time.Time) bool {
	_, off := t.Zone()
	_, offBefore := t.Add(-24 * time.Hour).Zone()
	if offBefore <= off {
		return false
	}
	p := t.Add(-time.Duration(offBefore-off) * time.Second)
	return sameWallTime(p, t)
}

// sameWallTime reports whether a and b read the same on a wall clock of
// their own locations.
func sameWallTime(a, b time.Time) bool {
	ay, am, ad := a.Date()
	by, bm, bd := b.Date()
	return ay == by && am == bm && ad == bd && a.Hour() == b.Hour() && a.Minute() == b.Minute() && a.Second() == b.Second()
}

// localInstant turns the wall-clock reading of wall (parsed as UTC) into an
// instant in loc. The daylight-saving rule: a time that occurs twice (the
// autumn change) is its first occurrence, the earlier instant; a time that
// does not exist (the spring change) is moved forward by the length of the
// gap, as if the clocks had not changed yet (Europe/Berlin 2026-03-29 02:30
// is 03:30 CEST, 01:30 UTC).
func localInstant(wall time.Time, loc *time.Location) time.Time {
	var found time.Time
	for _, probe := range []time.Time{wall.Add(-24 * time.Hour), wall.Add(24 * time.Hour)} {
		_, off := probe.In(loc).Zone()
		t := wall.Add(-time.Duration(off) * time.Second).In(loc)
		if sameWallTime(t, wall) && (found.IsZero() || t.Before(found)) {
			found = t
		}
	}
	if !found.IsZero() {
		return found
	}
	_, offBefore := wall.Add(-24 * time.Hour).In(loc).Zone()
	return wall.Add(-time.Duration(offBefore) * time.Second).In(loc)
}

// next returns the first run of s after the instant after, in loc; a
// one-shot's instant whatever after is.
func (s schedule) next(after time.Time, loc *time.Location) time.Time {
	if s.cron == nil {
		return s.at
	}
	return nextCron(s.cron, after, loc)
}

// loadZone returns the location of an IANA id: the host's own zone for ""
// or an id that does not resolve (then ok is false).
func loadZone(id string) (loc *time.Location, ok bool) {
	if id == "" {
		return time.Local, true
	}
	loc, err := time.LoadLocation(id)
	if err != nil {
		return time.Local, false
	}
	return loc, true
}

// formatTime renders t in loc for the chat and the model.
func formatTime(t time.Time, loc *time.Location) string {
	return t.In(loc).Format("Mon 2006-01-02 15:04 MST")
}
