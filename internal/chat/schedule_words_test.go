package chat

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestDescribeSchedule(t *testing.T) {
	tests := []struct{ in, want string }{
		{"0 9 * * 1", "every Monday at 09:00"},
		{"30 7 * * *", "every day at 07:30"},
		{"0 8 * * 1-5", "weekdays at 08:00"},
		{"0 10 * * 6,0", "weekends at 10:00"},
		{"0 18 * * 0", "every Sunday at 18:00"},
		{"0 18 * * 7", "every Sunday at 18:00"},
		{"15 * * * *", "every hour at :15"},
		{"*/15 * * * *", "every 15 minutes"},
		{"0 */6 * * *", "every 6 hours"},
		{"0 9 1 * *", "on day 1 of every month at 09:00"},
		{"@hourly", "every hour"},
		{"@daily", "every day at 00:00"},
		{"@every 30m", "every 30m"},
		{"0 9 * 1 *", "0 9 * 1 *"},
		{"0 9 * * 1,3", "0 9 * * 1,3"},
		{"2026-12-01 09:00", "2026-12-01 09:00"},
		{"61 9 * * *", "61 9 * * *"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, describeSchedule(tt.in)); diff != "" {
				t.Errorf("describeSchedule(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// A job's line in /jobs: a recurring job with its schedule in words and its
// next run, a one-shot job as "once" with its time, in the chat's zone.
func TestJobLine(t *testing.T) {
	next := time.Date(2026, 11, 30, 5, 30, 0, 0, time.UTC)
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		job  JobView
		loc  *time.Location
		want string
	}{
		{"one-shot local time", JobView{ID: "a1", Name: "tea", Schedule: "2026-11-30 05:30", Next: next}, time.UTC, "• tea: once, Mon 30 Nov 05:30 UTC"},
		{"one-shot RFC 3339", JobView{ID: "a1", Name: "tea", Schedule: "2026-11-30T05:30:00Z", Next: next}, tokyo, "• tea: once, Mon 30 Nov 14:30 JST"},
		{"one-shot without a next run", JobView{ID: "a1", Schedule: "2026-11-30 05:30"}, time.UTC, "• a1: once, 2026-11-30 05:30"},
		{"recurring", JobView{ID: "a2", Name: "plants", Schedule: "0 9 * * *", Next: next}, time.UTC, "• plants: every day at 09:00, next Mon 30 Nov 05:30 UTC"},
		{"recurring without a next run", JobView{ID: "a2", Name: "plants", Schedule: "@hourly"}, time.UTC, "• plants: every hour, no next run"},
		{"next year", JobView{ID: "a3", Name: "new year", Schedule: "0 0 1 1 *", Next: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)}, time.UTC, "• new year: 0 0 1 1 *, next Fri 1 Jan 2027 00:00 UTC"},
		{"one-shot next year", JobView{ID: "a4", Name: "renew", Schedule: "2027-03-01 09:00", Next: time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)}, time.UTC, "• renew: once, Mon 1 Mar 2027 09:00 UTC"},
	}
	// Now is in 2026: a run in another year names it.
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, jobLine(tt.job, tt.loc, now)); diff != "" {
				t.Errorf("jobLine (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCounted(t *testing.T) {
	tests := []struct {
		n    int
		want string
	}{
		{0, "0 queued messages"},
		{1, "1 queued message"},
		{2, "2 queued messages"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, counted(tt.n, "queued message", "queued messages")); diff != "" {
				t.Errorf("counted (-want +got):\n%s", diff)
			}
		})
	}
}
