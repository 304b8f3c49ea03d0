package chat

import (
	"testing"

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
