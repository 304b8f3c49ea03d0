package chat

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/storagefail"
	"github.com/volcanic/telegram-agent/internal/usage"
)

// WithUsage gives the host the usage log: /usage and /status read it, and
// a chat whose usage today reaches limit (USAGE_DAILY_LIMIT, the zero
// Limit for none) gets a message instead of a turn until its day ends.
// prices (MODEL_PRICES) turn tokens into money. Without it /usage says
// usage is not recorded.
func WithUsage(store *usage.Store, prices usage.Prices, limit usage.Limit) Option {
	return func(h *Host) {
		h.meter.store, h.meter.prices, h.meter.limit = store, prices, limit
		h.limit = limit
	}
}

// meter reports a chat's usage from the usage log (/usage, /status) and
// holds it to the daily limit.
type meter struct {
	// store is the usage log (nil: not recorded), with the prices and
	// the daily limit (see WithUsage).
	store  *usage.Store
	prices usage.Prices
	limit  usage.Limit
	// planWindows reports the model plan's usage windows (nil: none; see
	// WithPlanWindows).
	planWindows func() []PlanWindow
	sessions    *sessions
}

// overLimit returns the message for t when its usage today reaches the
// daily limit, and whether it does.
func (m *meter) overLimit(t target) (string, bool) {
	if m.store == nil || m.limit.IsZero() {
		return "", false
	}
	scope := t.String()
	loc := m.sessions.location(scope)
	if !m.limit.Exceeded(m.store.Today(scope, loc), m.prices) {
		return "", false
	}
	next := m.store.NextDay(loc)
	return fmt.Sprintf("⛔ This chat has used its daily limit of %s. It can go on from %s (%s), in %s.",
		m.limit, next.Format("Mon 2 Jan 15:04"), zoneLabel(m.sessions.timeZone(scope), next), roughDuration(time.Until(next))), true
}

// zoneLabel names a chat's zone: its IANA id, else the host's abbreviation.
func zoneLabel(zone string, at time.Time) string {
	if zone != "" {
		return zone
	}
	abbr, _ := at.Zone()
	return abbr
}

// roughDuration words d in hours and minutes ("3h 20m", "45m").
func roughDuration(d time.Duration) string {
	d = max(d.Round(time.Minute), time.Minute)
	h, m := int(d.Hours()), int(d.Minutes())%60
	if h == 0 {
		return fmt.Sprintf("%dm", m)
	}
	return fmt.Sprintf("%dh %dm", h, m)
}

// command answers /usage: the chat's tokens (and money, with prices) for
// its latest turn, its session, today and the last 30 days.
func (m *meter) command(_ context.Context, in *inbound, reply func(string)) {
	reply(m.text(in.target))
}

// text is /usage's answer for t.
func (m *meter) text(t target) string {
	if m.store == nil {
		return "Usage is not recorded on this bot."
	}
	scope := t.String()
	zone := m.sessions.timeZone(scope)
	sum := m.store.Summary(scope, m.sessions.id(t), m.sessions.location(scope))
	var b strings.Builder
	b.WriteString("📊 Usage of this chat\n")
	rows := []struct {
		name   string
		totals usage.Totals
	}{
		{"This turn", sum.Turn},
		{"This session", sum.Session},
		{"Today", sum.Today},
		{"Last 30 days", sum.Last30},
	}
	var unpriced []string
	for _, r := range rows {
		line, missing := m.line(r.totals)
		fmt.Fprintf(&b, "\n%s: %s", r.name, line)
		for _, m := range missing {
			if !slices.Contains(unpriced, m) {
				unpriced = append(unpriced, m)
			}
		}
	}
	if zone == "" {
		zone = "the host's time zone"
	}
	fmt.Fprintf(&b, "\n\nDays are counted in %s.", zone)
	if len(m.prices) > 0 && len(unpriced) > 0 {
		slices.Sort(unpriced)
		fmt.Fprintf(&b, " No price is set for %s (MODEL_PRICES): its tokens are not in the amounts.", strings.Join(unpriced, ", "))
	}
	if !m.limit.IsZero() {
		fmt.Fprintf(&b, "\nDaily limit: %s (%s used today).", m.limit, m.limitShare(sum.Today))
	}
	b.WriteString(m.planWindowsText(t))
	return b.String()
}

// line words totals: all tokens, then prompt (of them cached) and
// completion, then the cost when there are prices. missing are the models
// used that have no price.
func (m *meter) line(totals usage.Totals) (line string, missing []string) {
	t := totals.Sum()
	if t.Requests == 0 {
		return "nothing yet", nil
	}
	line = fmt.Sprintf("%s tokens (%s prompt, %s of them cached; %s completion) in %s",
		usage.FormatTokens(t.Total()), usage.FormatTokens(t.Prompt), usage.FormatTokens(t.Cached),
		usage.FormatTokens(t.Completion), counted(int(t.Requests), "request", "requests"))
	if len(m.prices) == 0 {
		if t.CostUSD > 0 {
			line += ", " + usage.FormatMoney(t.CostUSD) + " as the provider reports it"
		}
		return line, nil
	}
	cost, missing := m.prices.CostOf(totals)
	return line + ", " + usage.FormatMoney(cost), missing
}

// limitShare words how much of the daily limit today's totals use.
func (m *meter) limitShare(today usage.Totals) string {
	var used, of float64
	if m.limit.Tokens > 0 {
		used, of = float64(today.Sum().Total()), float64(m.limit.Tokens)
	} else {
		cost, _ := m.prices.CostOf(today)
		used, of = cost, m.limit.Money
	}
	return fmt.Sprintf("%.0f%%", 100*used/of)
}

// sessionLine is /status's line on the session's tokens, "" without a
// usage log.
func (m *meter) sessionLine(t target) string {
	if m.store == nil {
		return ""
	}
	scope := t.String()
	line, _ := m.line(m.store.Summary(scope, m.sessions.id(t), m.sessions.location(scope)).Session)
	return "Session usage: " + line + "\n"
}

// UsageRecorder returns the agent's usage recorder (agent.WithUsageRecorder)
// writing to store: each response under its chat, session and the turn the
// host named on the context. A record that cannot be written (a full disk)
// still counts until a restart; the first such failure is logged at Error,
// the ones after it at Debug, and the first record written again at Info.
func UsageRecorder(store *usage.Store, logger *slog.Logger) func(context.Context, agent.UsageReport) {
	episode := storagefail.NewEpisode(logger, storagefail.Messages{
		Began: "usage: the usage log cannot be written; usage counts in memory until a restart, and failures are logged at debug until it can",
		Again: "usage: a model response's usage was not written",
		Ended: "usage: the usage log is written again",
	})
	return func(ctx context.Context, r agent.UsageReport) {
		err := store.Add(usage.Record{
			Chat: r.Scope, Session: r.SessionID, Turn: usage.TurnOf(ctx), Model: r.Model,
			Tokens: usage.Tokens{
				Prompt: int64(r.Usage.PromptTokens), Completion: int64(r.Usage.CompletionTokens),
				Cached: int64(r.Usage.CachedTokens), Requests: 1, CostUSD: r.Usage.CostUSD,
			},
			Windows: usageWindows(r.Usage.Windows),
		})
		if err != nil {
			episode.Failed(err, "scope", r.Scope)
			return
		}
		episode.Succeeded()
	}
}

// usageWindows converts the plan windows a response reported for the usage
// log.
func usageWindows(ws []agent.PlanWindow) []usage.Window {
	var out []usage.Window
	for _, w := range ws {
		out = append(out, usage.Window{Name: w.Name, Status: w.Status, Utilization: w.Utilization, Resets: w.Resets})
	}
	return out
}
