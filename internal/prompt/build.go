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

// Info is what the system prompt is built from, once per turn.
type Info struct {
	// Now is the current time in the chat's zone.
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
	// tells the model the time.
	return fmt.Sprintf("You are an AI agent talking to a person on Telegram. It is %s (%s). (system prompt template failed: %v)",
		info.Now.Format("Monday, 2 January 2006, 15:04"), zoneName(info), err)
}

// zoneName names info's zone: the IANA id when there is one, else the
// location's name, else its abbreviation.
func zoneName(info Info) string {
	if info.TimeZone != "" {
		return info.TimeZone
	}
	if name := info.Now.Location().String(); name != "" && name != "Local" {
		return name
	}
	abbr, _ := info.Now.Zone()
	return abbr
}
