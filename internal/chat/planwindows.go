package chat

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// PlanWindow is one of the model plan's usage windows as the provider last
// reported it (Claude Code's 5-hour and weekly limits).
type PlanWindow struct {
	// Name is the provider's name of the window ("five_hour", "seven_day").
	Name string
	// Status is "allowed", "allowed_warning" or "rejected".
	Status string
	// Utilization is the share used, 0 to 1 (0: not reported).
	Utilization float64
	// Resets is when the window resets (zero: not reported).
	Resets time.Time
}

// WithPlanWindows gives /usage the model plan's usage windows: f returns
// them as the provider last reported them (none before its first turn).
func WithPlanWindows(f func() []PlanWindow) Option {
	return func(h *Host) { h.meter.planWindows = f }
}

// planWindowName words a window Claude Code reports.
func planWindowName(name string) string {
	switch name {
	case "five_hour":
		return "5-hour window"
	case "seven_day":
		return "weekly window"
	case "seven_day_opus":
		return "weekly Opus window"
	case "seven_day_sonnet":
		return "weekly Sonnet window"
	case "overage":
		return "extra usage"
	}
	return name
}

// planWindowState words a window's status.
func planWindowState(status string) string {
	switch status {
	case "allowed":
		return "ok"
	case "allowed_warning":
		return "nearly used up"
	case "rejected":
		return "reached"
	}
	return status
}

// planWindowsText is /usage's part on the plan's windows, "" without any.
func (m *meter) planWindowsText(t target) string {
	if m.planWindows == nil {
		return ""
	}
	windows := m.planWindows()
	if len(windows) == 0 {
		return ""
	}
	sort.Slice(windows, func(i, j int) bool { return windows[i].Name < windows[j].Name })
	loc := m.sessions.location(t.String())
	var b strings.Builder
	b.WriteString("\n\nPlan limits, as Claude Code last reported them:")
	for _, w := range windows {
		fmt.Fprintf(&b, "\n%s: %s", planWindowName(w.Name), planWindowState(w.Status))
		if w.Utilization > 0 {
			fmt.Fprintf(&b, ", %.0f%% used", 100*w.Utilization)
		}
		if !w.Resets.IsZero() {
			fmt.Fprintf(&b, ", resets %s", formatWhen(w.Resets.In(loc), time.Now()))
		}
	}
	return b.String()
}
