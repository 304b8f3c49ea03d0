package chat

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// describeSchedule puts a job's schedule in words when it is one of the
// common shapes (every day at 09:00, weekdays, a day of the week, hourly,
// every N minutes or hours, a day of the month, @every); any other
// expression is returned as it is.
func describeSchedule(expr string) string {
	expr = strings.TrimSpace(expr)
	switch strings.ToLower(expr) {
	case "@hourly":
		return "every hour"
	case "@daily", "@midnight":
		return "every day at 00:00"
	case "@weekly":
		return "every Sunday at 00:00"
	case "@monthly":
		return "on day 1 of every month at 00:00"
	}
	if d, ok := strings.CutPrefix(expr, "@every "); ok {
		return "every " + strings.TrimSpace(d)
	}
	f := strings.Fields(expr)
	if len(f) != 5 || f[3] != "*" {
		return expr
	}
	minute, hour, dom, dow := f[0], f[1], f[2], f[4]
	m, minuteOK := number(minute, 0, 59)
	h, hourOK := number(hour, 0, 23)
	at := fmt.Sprintf("%02d:%02d", h, m)
	switch {
	case minuteOK && hourOK && dom == "*":
		switch day, ok := number(dow, 0, 7); {
		case dow == "*":
			return "every day at " + at
		case dow == "1-5":
			return "weekdays at " + at
		case dow == "0,6" || dow == "6,0" || dow == "6,7" || dow == "6-7":
			return "weekends at " + at
		case ok:
			return "every " + time.Weekday(day%7).String() + " at " + at
		}
	case minuteOK && hourOK && dow == "*":
		if d, ok := number(dom, 1, 31); ok {
			return fmt.Sprintf("on day %d of every month at %s", d, at)
		}
	case minuteOK && hour == "*" && dom == "*" && dow == "*":
		return fmt.Sprintf("every hour at :%02d", m)
	case dom == "*" && dow == "*":
		if n, ok := step(minute); ok && hour == "*" {
			return fmt.Sprintf("every %d minutes", n)
		}
		if n, ok := step(hour); ok && minuteOK {
			if m == 0 {
				return fmt.Sprintf("every %d hours", n)
			}
			return fmt.Sprintf("every %d hours at :%02d", n, m)
		}
	}
	return expr
}

// number parses a plain number between lo and hi.
func number(s string, lo, hi int) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= lo && n <= hi && !strings.HasPrefix(s, "+")
}

// step parses "*/N".
func step(s string) (int, bool) {
	n, ok := strings.CutPrefix(s, "*/")
	if !ok {
		return 0, false
	}
	return number(n, 2, 59)
}

// isOneShot reports whether a job's schedule is a one-shot time (RFC 3339,
// or a local time in the chat's zone) rather than a recurring schedule.
func isOneShot(expr string) bool {
	expr = strings.TrimSpace(expr)
	for _, layout := range []string{time.RFC3339, "2006-01-02 15:04", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02T15:04:05"} {
		if _, err := time.Parse(layout, expr); err == nil {
			return true
		}
	}
	return false
}
