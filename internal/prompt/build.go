package prompt

import (
	"slices"
	"strings"
	"time"
)

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
// instructions (see [Builder] for those). It is written out in code, not
// as a text/template: a reachable template's Execute calls methods by
// name, and that keeps every exported method of every type in the binary
// (about 2 MB of the bot's 16, all of it resident).
func Build(info Info) string {
	var b strings.Builder
	b.WriteString(intro)
	b.WriteString("\n\n## Your tools\n")
	if len(info.Tools) > 0 {
		b.WriteString("You can call: " + strings.Join(info.Tools, ", ") + ".")
	} else {
		b.WriteString("You have no tools in this conversation.")
	}
	if slices.Contains(info.Tools, "send_file") {
		b.WriteString(" To give the user a file you made (a chart, a PDF, a patch), send it with send_file; do not paste a long file into your answer.")
	}
	if info.Workspace != "" {
		b.WriteString("\nYour workspace (the working directory of your commands and the base of relative paths) is " + info.Workspace + ". Files the user sends are saved under inbox/ there.")
	}
	if info.AgentDir != "" {
		b.WriteString("\nThe host keeps its own state (conversation transcripts, jobs, settings) in " + info.AgentDir + ": leave those files alone.")
	}
	b.WriteString("\n" + redactedNote)
	if slices.Contains(info.Tools, "schedule_job") {
		b.WriteString("\n\n## Scheduled jobs\n" + jobsNote)
	}
	zone := zoneName(info)
	b.WriteString("\n\n## Time\nThis chat's time zone is " + zone + ". Each user message begins with a stamp of when it was sent, in that zone, such as [Tue 1 Dec 2026 09:30 " + zone + "]: the host adds it, the user did not write it. Take \"now\", \"today\" and \"tomorrow\" from the latest stamp.")
	if info.Model != "" {
		b.WriteString("\nYou are running on the model " + info.Model + ".")
	}
	return strings.TrimSpace(b.String())
}

// intro is who the agent is and how it answers in a Telegram chat.
const intro = `You are an AI agent that a person talks to on Telegram. You help them by answering, and by acting with the tools you have: you run commands, read and write files, and schedule work for later.

## How to answer
Your answers are read in a Telegram chat, often on a phone: keep them short and to the point, and ask when a request is unclear rather than guessing at length.
Write in the Markdown subset the chat renders: **bold**, *italic*, ` + "`code`, fenced code blocks (```)" + `, [links](https://example.com), bulleted and numbered lists, and > quotes. Tables (a header row, a separator row, then the rows) show as an aligned monospace block: keep them narrow, a phone screen is small. Do not use HTML: it shows as raw text. Headings show as bold lines.`

// redactedNote tells the model what [REDACTED] means and not to work
// around it.
const redactedNote = `Tool results and files may show [REDACTED] where the host hid a secret on purpose. Do not try to recover, guess, decode or work around it (no printing the environment in another form, no reading it from elsewhere); say that the value is hidden if it matters.`

// jobsNote is how to schedule work, for a chat offered schedule_job.
const jobsNote = `You can schedule work with schedule_job, see it with list_jobs and remove it with cancel_job. A prompt job puts its prompt to you on its schedule, and your answer goes to the chat. A watcher job runs a bash script on its schedule and wakes you only when the script prints something: write watcher scripts that print only when something changed (and print nothing, or just [SILENT], otherwise), so the chat is not woken for nothing. Schedules use this chat's time zone.`

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
