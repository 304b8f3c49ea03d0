package prompt

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"text/template"
	"time"
)

// systemTemplate is the text/template of the system prompt; Build executes
// it with an [Info].
//
//go:embed system.md
var systemTemplate string

// Info is what the system prompt is built from, once per turn. Nothing in
// it changes from turn to turn unless the chat changes (its zone, its
// model, the tools), so the prompt is the same bytes every turn and the
// provider's prompt cache can keep it: the time goes with each user
// message instead (see agent.WithMessageTimes).
type Info struct {
	// Now is the current time in the chat's zone; only its location is
	// used, to name the zone when TimeZone is empty.
	Now time.Time
	// TimeZone is the chat's IANA zone id; empty means Now's location
	// names the zone.
	TimeZone string
	// Workspace is the agent's working directory.
	Workspace string
	// AgentDir is where the host keeps its state.
	AgentDir string
	// Tools are the names of the tools the model is offered.
	Tools []string
	// Model is the model the chat uses.
	Model string
}

// Build returns the system prompt for info, without the operator's
// instructions (see [Builder] for those).
func Build(info Info) string {
	funcs := template.FuncMap{
		"join": strings.Join,
		"zone": zoneName,
		"has":  slices.Contains[[]string],
	}
	tmpl, err := template.New("system.md").Funcs(funcs).Option("missingkey=error").Parse(systemTemplate)
	if err == nil {
		var b strings.Builder
		if err = tmpl.Execute(&b, info); err == nil {
			return strings.TrimSpace(b.String())
		}
	}
	// The embedded template is tested; this is a last resort that still
	// tells the model the zone.
	return fmt.Sprintf("You are an AI agent talking to a person on Telegram, whose time zone is %s. (system prompt template failed: %v)",
		zoneName(info), err)
}

// zoneName names info's zone: the IANA id when there is one, else the
// location's name, else "the host's local time" (an abbreviation would
// change with daylight saving time, and the prompt with it).
func zoneName(info Info) string {
	if info.TimeZone != "" {
		return info.TimeZone
	}
	if name := info.Now.Location().String(); name != "" && name != "Local" {
		return name
	}
	return "the host's local time"
}
