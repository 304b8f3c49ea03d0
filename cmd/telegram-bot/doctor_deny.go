package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// denyKind is one kind of secret the deny rules catch, and the entries
// that catch it; the first entry is the example the doctor shows.
type denyKind struct {
	kind    string
	entries []string
}

// denyKinds names what the default deny rules (and the bot's own
// additions, hostDeny) catch, in the order the doctor lists them. The rule
// that removes a given variable stays in the doctor's list of removed
// variables.
func denyKinds() []denyKind {
	return []denyKind{
		{"API keys", []string{"*_API_KEY", "*_APIKEY", "*__APIKEY"}},
		{"tokens", []string{"*_TOKEN", "*__*TOKEN"}},
		{"secrets", []string{"*_SECRET", "*__*SECRET", "*_SECRET_*", "*_SECRET_KEY"}},
		{"passwords", []string{"*_PASSWORD", "*__*PASSWORD", "*_PASS", "*__*PASS", "*_PASSWD", "*__*PASSWD"}},
		{"keys", []string{"*_KEY", "*__*KEY", "*_PRIVATE_KEY", "*_ACCESS_KEY"}},
		{"personal access tokens", []string{"*_PAT", "*__*PAT"}},
		{"data source names", []string{"*_DSN", "*__*DSN"}},
		{"auth strings", []string{"*_AUTH", "*__*AUTH"}},
		{"credentials", []string{"*_CREDENTIALS", "*__*CREDENTIALS"}},
		{"webhook URLs", []string{"*_WEBHOOK_URL", "*__*WEBHOOKURL"}},
		{"the bot's and the model providers' own keys", []string{"TELEGRAM_BOT_TOKEN", "OPENAI_API_KEY", "GOOGLE_CLIENT_SECRET", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"}},
	}
}

// denySummary returns the doctor's lines on the deny rules: what the known
// rules catch, by kind with one example each, and the other entries by
// name, the variables that configure the bot counted apart (every one of
// them is denied by name, set or not).
func denySummary(deny []string) []string {
	var kinds, others []string
	known := map[string]bool{}
	for _, k := range denyKinds() {
		if i := slices.IndexFunc(k.entries, func(e string) bool { return slices.Contains(deny, e) }); i >= 0 {
			kinds = append(kinds, fmt.Sprintf("%s (%s)", k.kind, k.entries[i]))
		}
		for _, e := range k.entries {
			known[e] = true
		}
	}
	config := configNames()
	configured := 0
	for _, e := range deny {
		switch {
		case known[e]:
		case slices.Contains(config, e):
			configured++
		case !slices.Contains(others, e):
			others = append(others, e)
		}
	}
	lines := []string{"deny rules remove, by name: " + joinOr(kinds, "nothing")}
	if len(others) > 0 {
		lines = append(lines, "and by name (PROCESS_ENV_DENY, or a variable holding another's secret): "+strings.Join(others, ", "))
	}
	if configured > 0 {
		lines = append(lines, fmt.Sprintf("and every variable that configures the bot (%d set here)", configured))
	}
	return lines
}

// joinOr joins list with commas, or returns none when it is empty.
func joinOr(list []string, none string) string {
	if len(list) == 0 {
		return none
	}
	return strings.Join(list, ", ")
}

// allowSummary is the doctor's line on PROCESS_ENV_ALLOW.
func allowSummary(policy *spawnpolicy.Policy) string {
	return "allow: " + joinOr(policy.AllowNames(), "none") + " (PROCESS_ENV_ALLOW)"
}
