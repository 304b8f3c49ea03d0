package prompt

import (
	"strings"
	"testing"
	"time"
)

// TestBuildIsStable builds the prompt at different times, days and
// seasons: the bytes are the same, and only a change of zone changes them.
func TestBuildIsStable(t *testing.T) {
	tests := []struct {
		name     string
		zone     string
		useZone  bool
		wantZone string
	}{
		{"Paris", "Europe/Paris", true, "Europe/Paris"},
		{"New York", "America/New_York", true, "America/New_York"},
		{"Auckland", "Pacific/Auckland", true, "Pacific/Auckland"},
		{"zone from the location", "Europe/Paris", false, "Europe/Paris"},
		{"UTC", "UTC", true, "UTC"},
		{"the host's zone", "Local", false, "the host's local time"},
	}
	// Two instants on different days, one in winter and one in summer
	// time, one minute before and after midnight UTC.
	first := time.Date(2026, 3, 2, 23, 59, 0, 0, time.UTC)
	second := time.Date(2026, 7, 15, 0, 1, 30, 0, time.UTC)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc, err := time.LoadLocation(tt.zone)
			if err != nil {
				t.Skipf("zone data: %v", err)
			}
			build := func(now time.Time) string {
				info := Info{Now: now.In(loc), Workspace: "/w", AgentDir: "/a", Tools: []string{"bash"}, Model: "m"}
				if tt.useZone {
					info.TimeZone = tt.zone
				}
				return Build(info)
			}
			a, b := build(first), build(second)
			if a != b {
				t.Errorf("the prompt differs between %v and %v:\n%s\n---\n%s", first, second, lineWith(a, "zone"), lineWith(b, "zone"))
			}
			want := "This chat's time zone is " + tt.wantZone + "."
			if !strings.Contains(a, want) {
				t.Errorf("prompt lacks %q; its zone line is %q", want, lineWith(a, "time zone is"))
			}
			for _, stamp := range []string{"Monday", "March", "July", "23:59", "00:01"} {
				if strings.Contains(a, stamp) {
					t.Errorf("the prompt holds %q, a part of the time", stamp)
				}
			}
		})
	}
	paris := Build(Info{TimeZone: "Europe/Paris", Now: first})
	tokyo := Build(Info{TimeZone: "Asia/Tokyo", Now: first})
	if paris == tokyo {
		t.Error("the prompt does not change with the zone")
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
