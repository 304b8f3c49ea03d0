package scheduler

import (
	"errors"
	"testing"
	"time"
)

func mustZone(t *testing.T, id string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(id)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// TestParseOneShot covers the one-shot forms and the daylight-saving
// rule: a local time that does not exist moves forward by the gap, one
// that occurs twice is its first occurrence.
func TestParseOneShot(t *testing.T) {
	berlin := mustZone(t, "Europe/Berlin")
	tests := []struct {
		name string
		text string
		loc  *time.Location
		want time.Time // in UTC
	}{
		{"local winter", "2026-12-01 09:00", berlin, time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)},
		{"local summer with seconds", "2026-07-01 09:00:30", berlin, time.Date(2026, 7, 1, 7, 0, 30, 0, time.UTC)},
		{"local with T", "2026-07-01T09:00", berlin, time.Date(2026, 7, 1, 7, 0, 0, 0, time.UTC)},
		{"RFC 3339 ignores the zone", "2026-12-01T09:00:00-05:00", berlin, time.Date(2026, 12, 1, 14, 0, 0, 0, time.UTC)},
		{"spring gap moves forward", "2026-03-29 02:30", berlin, time.Date(2026, 3, 29, 1, 30, 0, 0, time.UTC)},
		{"just before the gap", "2026-03-29 01:59", berlin, time.Date(2026, 3, 29, 0, 59, 0, 0, time.UTC)},
		{"just after the gap", "2026-03-29 03:00", berlin, time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC)},
		{"autumn fold takes the first", "2026-10-25 02:30", berlin, time.Date(2026, 10, 25, 0, 30, 0, 0, time.UTC)},
		{"after the fold", "2026-10-25 03:00", berlin, time.Date(2026, 10, 25, 2, 0, 0, 0, time.UTC)},
		{"UTC", "2026-10-25 02:30", time.UTC, time.Date(2026, 10, 25, 2, 30, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := parseSchedule(tt.text, tt.loc)
			if err != nil {
				t.Fatal(err)
			}
			if s.cron != nil || !s.at.Equal(tt.want) {
				t.Errorf("parseSchedule(%q) = %v, want the one-shot %v", tt.text, s.at.UTC(), tt.want)
			}
		})
	}
}

// TestParseScheduleErrors checks what is refused, and that every refusal
// matches ErrBadSchedule.
func TestParseScheduleErrors(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		text string
	}{
		{"empty", "  "},
		{"words", "every monday"},
		{"six fields", "0 0 9 * * 1"},
		{"out of range", "61 * * * *"},
		{"bad descriptor", "@fortnightly"},
		{"bad duration", "@every soon"},
		{"below the floor", "@every 30s"},
		{"past one-shot", "2026-05-01 09:00"},
		{"now is not the future", "2026-06-01T12:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := parseSchedule(tt.text, time.UTC)
			if err == nil {
				err = validateSchedule(s, tt.text, now, time.UTC, time.Minute)
			}
			if !errors.Is(err, ErrBadSchedule) {
				t.Errorf("schedule %q: error %v, want ErrBadSchedule", tt.text, err)
			}
		})
	}
}

// TestCronNextAcrossDST checks cron schedules in a zone with daylight
// saving: wall-clock times stay put, a fixed time in the spring gap is
// skipped that day, one in the autumn fold runs once, and an hourly
// schedule runs in both repeated hours.
func TestCronNextAcrossDST(t *testing.T) {
	berlin := mustZone(t, "Europe/Berlin")
	utc := func(mo time.Month, d, h, mi int) time.Time { return time.Date(2026, mo, d, h, mi, 0, 0, time.UTC) }
	tests := []struct {
		name  string
		spec  string
		after time.Time
		want  []time.Time
	}{
		{"09:00 keeps its wall time", "0 9 * * *", utc(3, 28, 12, 0), []time.Time{utc(3, 29, 7, 0), utc(3, 30, 7, 0)}},
		{"spring gap skipped", "30 2 * * *", utc(3, 28, 12, 0), []time.Time{utc(3, 30, 0, 30)}},
		{"autumn fold once", "30 2 * * *", utc(10, 24, 12, 0), []time.Time{utc(10, 25, 0, 30), utc(10, 26, 1, 30)}},
		{"hourly in both folds", "0 * * * *", utc(10, 24, 23, 30), []time.Time{utc(10, 25, 0, 0), utc(10, 25, 1, 0), utc(10, 25, 2, 0)}},
		{"CRON_TZ wins", "CRON_TZ=UTC 0 9 * * *", utc(6, 1, 12, 0), []time.Time{utc(6, 2, 9, 0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := parseSchedule(tt.spec, berlin)
			if err != nil {
				t.Fatal(err)
			}
			at := tt.after
			for i, want := range tt.want {
				at = s.next(at, berlin)
				if !at.Equal(want) {
					t.Fatalf("run %d: %v, want %v", i, at.UTC(), want)
				}
			}
		})
	}
}

// TestShortestGap checks the floor's measure of a schedule.
func TestShortestGap(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		spec string
		want time.Duration
	}{
		{"@every 90s", 90 * time.Second},
		{"* * * * *", time.Minute},
		{"0,5 * * * *", 5 * time.Minute},
		{"@hourly", time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			s, err := parseSchedule(tt.spec, time.UTC)
			if err != nil {
				t.Fatal(err)
			}
			if got := shortestGap(s.cron, now, time.UTC); got != tt.want {
				t.Errorf("shortestGap = %s, want %s", got, tt.want)
			}
		})
	}
}
