package prompt

import (
	"strings"
	"testing"
	"time"
)

func TestBuildTime(t *testing.T) {
	instant := time.Date(2026, 3, 2, 14, 5, 0, 0, time.UTC) // a Monday
	tests := []struct {
		name     string
		zone     string
		useZone  bool
		wantTime string
		wantZone string
	}{
		{"Paris", "Europe/Paris", true, "Monday, 2 March 2026, 15:05", "Europe/Paris (UTC+01:00)"},
		{"New York", "America/New_York", true, "Monday, 2 March 2026, 09:05", "America/New_York (UTC-05:00)"},
		{"Tokyo across midnight", "Asia/Tokyo", true, "Monday, 2 March 2026, 23:05", "Asia/Tokyo (UTC+09:00)"},
		{"Auckland next day", "Pacific/Auckland", true, "Tuesday, 3 March 2026, 03:05", "Pacific/Auckland (UTC+13:00)"},
		{"zone from the location", "Europe/Paris", false, "Monday, 2 March 2026, 15:05", "Europe/Paris (UTC+01:00)"},
		{"UTC", "UTC", true, "Monday, 2 March 2026, 14:05", "UTC (UTC+00:00)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc, err := time.LoadLocation(tt.zone)
			if err != nil {
				t.Skipf("zone data: %v", err)
			}
			info := Info{Now: instant.In(loc)}
			if tt.useZone {
				info.TimeZone = tt.zone
			}
			got := Build(info)
			want := "It is " + tt.wantTime + " in this chat's time zone, " + tt.wantZone + "."
			if !strings.Contains(got, want) {
				t.Errorf("prompt lacks %q; its time line is %q", want, lineWith(got, "It is "))
			}
		})
	}
}

// lineWith returns the first line of s that holds sub.
func lineWith(s, sub string) string {
	for line := range strings.Lines(s) {
		if strings.Contains(line, sub) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

func TestBuildContent(t *testing.T) {
	info := Info{
		Now: time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC), TimeZone: "UTC",
		Workspace: "/srv/workspace", AgentDir: "/srv/agent",
		Tools: []string{"bash", "read", "schedule_job", "send_file"}, Model: "gpt-test",
	}
	tests := []struct {
		name string
		info Info
		want []string
		not  []string
	}{
		{"everything", info, []string{
			"Telegram", "short", "**bold**", "*italic*", "`code`", "fenced code blocks", "[links](", "lists", "> quotes", "Tables (a header row", "aligned monospace block",
			"You can call: bash, read, schedule_job, send_file.", "send it with send_file", "/srv/workspace", "/srv/agent",
			"[REDACTED]", "Do not try to recover",
			"schedule_job", "list_jobs", "cancel_job", "[SILENT]", "print only when something changed",
			"gpt-test",
		}, []string{"{{", "<no value>"}},
		{"no tools, workspace or model", Info{Now: info.Now}, []string{"You have no tools", "[REDACTED]"},
			[]string{"workspace (", "model", "schedule_job", "[SILENT]", "send_file", "Do not use tables", "{{", "<no value>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Build(tt.info)
			checkHolds(t, got, tt.want, tt.not)
		})
	}
}

// checkHolds reports every text of want that prompt lacks and every text of
// not that it holds.
func checkHolds(t *testing.T, prompt string, want, not []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(prompt, w) {
			t.Errorf("prompt lacks %q", w)
		}
	}
	for _, n := range not {
		if strings.Contains(prompt, n) {
			t.Errorf("prompt holds %q", n)
		}
	}
}
