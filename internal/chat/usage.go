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
	return func(h *Host) { h.usage, h.prices, h.limit = store, prices, limit }
}

// overLimit returns the message for t when its usage today reaches the
// daily limit, and whether it does.
func (h *Host) overLimit(t target) (string, bool) {
	if h.usage == nil || h.limit.IsZero() {
		return "", false
	}
	scope := t.String()
	loc := h.location(scope)
	if !h.limit.Exceeded(h.usage.Today(scope, loc), h.prices) {
		return "", false
	}
	next := h.usage.NextDay(loc)
	return fmt.Sprintf("⛔ This chat has used its daily limit of %s. It can go on from %s (%s), in %s.",
		h.limit, next.Format("Mon 2 Jan 15:04"), zoneLabel(h.TimeZone(scope), next), roughDuration(time.Until(next))), true
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

// usageCommand answers /usage: the chat's tokens (and money, with prices)
// for its latest turn, its session, today and the last 30 days.
func (h *Host) usageCommand(_ context.Context, in *inbound, reply func(string)) {
	reply(h.usageText(in.target))
}

// usageText is /usage's answer for t.
func (h *Host) usageText(t target) string {
	if h.usage == nil {
		return "Usage is not recorded on this bot."
	}
	scope := t.String()
	zone := h.TimeZone(scope)
	sum := h.usage.Summary(scope, h.sessionID(t), h.location(scope))
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
		line, missing := h.usageLine(r.totals)
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
	if len(h.prices) > 0 && len(unpriced) > 0 {
		slices.Sort(unpriced)
		fmt.Fprintf(&b, " No price is set for %s (MODEL_PRICES): its tokens are not in the amounts.", strings.Join(unpriced, ", "))
	}
	if !h.limit.IsZero() {
		fmt.Fprintf(&b, "\nDaily limit: %s (%s used today).", h.limit, h.limitShare(sum.Today))
	}
	b.WriteString(h.planWindowsText(t))
	return b.String()
}

// usageLine words totals: all tokens, then prompt (of them cached) and
// completion, then the cost when there are prices. missing are the models
// used that have no price.
func (h *Host) usageLine(totals usage.Totals) (line string, missing []string) {
	t := totals.Sum()
	if t.Requests == 0 {
		return "nothing yet", nil
	}
	line = fmt.Sprintf("%s tokens (%s prompt, %s of them cached; %s completion) in %s",
		usage.FormatTokens(t.Total()), usage.FormatTokens(t.Prompt), usage.FormatTokens(t.Cached),
		usage.FormatTokens(t.Completion), counted(int(t.Requests), "request", "requests"))
	if len(h.prices) == 0 {
		if t.CostUSD > 0 {
			line += ", " + usage.FormatMoney(t.CostUSD) + " as the provider reports it"
		}
		return line, nil
	}
	cost, missing := h.prices.CostOf(totals)
	return line + ", " + usage.FormatMoney(cost), missing
}

// limitShare words how much of the daily limit today's totals use.
func (h *Host) limitShare(today usage.Totals) string {
	var used, of float64
	if h.limit.Tokens > 0 {
		used, of = float64(today.Sum().Total()), float64(h.limit.Tokens)
	} else {
		cost, _ := h.prices.CostOf(today)
		used, of = cost, h.limit.Money
	}
	return fmt.Sprintf("%.0f%%", 100*used/of)
}

// sessionUsageLine is /status's line on the session's tokens, "" without a
// usage log.
func (h *Host) sessionUsageLine(t target) string {
	if h.usage == nil {
		return ""
	}
	scope := t.String()
	line, _ := h.usageLine(h.usage.Summary(scope, h.sessionID(t), h.location(scope)).Session)
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
