package scheduler

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/storagefail"
)

// Limits of what the model may schedule.
const (
	maxPromptLen = 8000
	maxScriptLen = 16000
)

// errNoChat is the result of a job tool called outside a chat.
const errNoChat = "Jobs belong to a chat, and this session has none (its scope is empty)."

// tools returns the scheduler's tools, as the model calls them.
func (s *Scheduler) tools() []agent.Tool {
	return []agent.Tool{
		agent.NewTool(scheduleSpec(), scheduleTool{s}.execute),
		agent.NewTool(listSpec(), listTool{s}.execute),
		agent.NewTool(cancelSpec(), cancelTool{s}.execute),
	}
}

// scheduleArgs are schedule_job's arguments.
type scheduleArgs struct {
	Schedule string `json:"schedule" jsonschema:"When to run: a 5-field cron expression (minute hour day-of-month month day-of-week, e.g. \"0 9 * * 1\"), @hourly, @daily, @weekly, @every <duration> (e.g. \"@every 30m\"), or a one-shot time: RFC 3339 (\"2026-12-01T09:00:00+01:00\") or local to this chat (\"2026-12-01 09:00\")."`
	Prompt   string `json:"prompt" jsonschema:"What you will be asked when the job fires (for a watcher: what to do with the script's output)."`
	Script   string `json:"script,omitempty" jsonschema:"Optional bash script that makes this a watcher. It runs in the workspace, without the host's secrets, for at most a minute."`
	Name     string `json:"name,omitempty" jsonschema:"Optional short name shown when the job runs, e.g. \"morning-summary\"."`
}

// scheduleTool is schedule_job.
type scheduleTool struct{ s *Scheduler }

// scheduleSpec describes schedule_job. Its script is a command run later,
// on the schedule, with nobody watching: the spec declares it so.
func scheduleSpec() agent.ToolSpec {
	return agent.ToolSpec{
		Name: "schedule_job",
		Description: "Schedule a job for this chat. A prompt job puts its prompt to you on the schedule, and your answer is sent to the chat. " +
			"A watcher job (with a script) runs the bash script on the schedule instead and wakes you only when the script prints something: " +
			"you then get the prompt and the output. A watcher that exits 0 with no output, or prints just " + silentWord + ", stays quiet; " +
			"a non-zero exit alerts the chat. Schedules are evaluated in this chat's time zone.",
		Effects: agent.Effects{Command: "script", Deferred: true},
	}
}

// execute schedules the job for the calling chat.
func (t scheduleTool) execute(_ context.Context, call *agent.Call, a scheduleArgs) (agent.Result, error) {
	target := call.Context.Scope
	if target == "" {
		return agent.ErrorResult(errNoChat), nil
	}
	job, err := t.s.Schedule(target, a.Schedule, a.Prompt, a.Script, a.Name)
	if err != nil {
		return agent.ErrorResult(toolError(err, t.s.cfg.minInterval)), nil
	}
	loc := t.s.location(target, nil)
	next := t.s.Next(job)
	text := fmt.Sprintf("Scheduled %s job %s (%q): %s; next run %s.", job.Kind(), job.ID, job.Name, job.Schedule, formatTime(next, loc))
	return agent.Result{Content: []agent.Content{agent.Text(text)}, Details: jobDetails(job, next, loc)}, nil
}

// toolError words a scheduling error for the model: a bad schedule comes
// with the accepted forms, a jobs file the disk refuses in words.
func toolError(err error, floor time.Duration) string {
	if storagefail.Is(err) {
		return "The jobs file could not be written (" + diskText + "), so nothing changed. Tell the user; it works again once the operator has freed space."
	}
	msg := strings.TrimPrefix(err.Error(), "scheduler: ")
	if errors.Is(err, ErrBadSchedule) {
		return msg + "\n" + acceptedForms(floor)
	}
	return msg
}

// Schedule adds a job for target, as the schedule_job tool does: schedule
// is read in the target's zone, name defaults to the prompt's first words.
// A bad schedule's error matches [ErrBadSchedule].
func (s *Scheduler) Schedule(target, scheduleText, prompt, script, name string) (Job, error) {
	prompt, name = strings.TrimSpace(prompt), strings.TrimSpace(name)
	switch {
	case target == "":
		return Job{}, errors.New("scheduler: no target chat")
	case prompt == "":
		return Job{}, errors.New("scheduler: the prompt is empty")
	case utf8.RuneCountInString(prompt) > maxPromptLen:
		return Job{}, fmt.Errorf("scheduler: the prompt is longer than %d characters", maxPromptLen)
	case len(script) > maxScriptLen:
		return Job{}, fmt.Errorf("scheduler: the script is longer than %d bytes", maxScriptLen)
	case len(name) > maxNameLen || strings.ContainsAny(name, "\r\n"):
		return Job{}, fmt.Errorf("scheduler: the name must be one line of at most %d bytes", maxNameLen)
	}
	if strings.TrimSpace(script) == "" {
		script = ""
	}
	now := s.cfg.now()
	loc := s.location(target, nil)
	sched, err := parseSchedule(scheduleText, loc)
	if err == nil {
		err = validateSchedule(sched, strings.TrimSpace(scheduleText), now, loc, s.cfg.minInterval)
	}
	if err != nil {
		return Job{}, fmt.Errorf("scheduler: %w", err)
	}
	return s.add(Job{
		Name:     name,
		Target:   target,
		Schedule: strings.TrimSpace(scheduleText),
		At:       sched.at,
		Prompt:   prompt,
		Script:   script,
		Created:  now,
	}, sched)
}

// jobDetails is a job as a tool result's Details show it.
func jobDetails(j Job, next time.Time, loc *time.Location) map[string]any {
	d := map[string]any{
		"id":       j.ID,
		"name":     j.Name,
		"kind":     j.Kind(),
		"schedule": j.Schedule,
		"prompt":   j.Prompt,
	}
	if j.Script != "" {
		d["script"] = j.Script
	}
	if !next.IsZero() {
		d["next_run"] = next.In(loc).Format(time.RFC3339)
	}
	if !j.LastRun.IsZero() {
		d["last_run"] = j.LastRun.In(loc).Format(time.RFC3339)
		d["last_outcome"] = j.LastOutcome
	}
	if j.CutShort() {
		d["cut_short_by_restart"] = true
		d["fired"] = j.Fired.In(loc).Format(time.RFC3339)
	}
	return d
}

// listTool is list_jobs.
type listTool struct{ s *Scheduler }

// listSpec describes list_jobs.
func listSpec() agent.ToolSpec {
	return agent.ToolSpec{
		Name:        "list_jobs",
		Description: "List this chat's scheduled jobs with their next run, in this chat's time zone.",
		Effects:     agent.Effects{ReadOnly: true},
	}
}

// execute lists the calling chat's jobs.
func (t listTool) execute(_ context.Context, call *agent.Call, _ struct{}) (agent.Result, error) {
	target := call.Context.Scope
	if target == "" {
		return agent.ErrorResult(errNoChat), nil
	}
	jobs := t.s.List(target)
	if len(jobs) == 0 {
		return agent.Result{Content: []agent.Content{agent.Text("This chat has no scheduled jobs.")}, Details: map[string]any{"jobs": []any{}}}, nil
	}
	loc := t.s.location(target, nil)
	// The prompt and the script are redacted whole before oneLine cuts
	// them: a cut inside a secret's encoded form leaves a part the
	// redactor of the result no longer recognises.
	red := t.s.redactor()
	var b strings.Builder
	fmt.Fprintf(&b, "This chat has %d scheduled job(s):", len(jobs))
	details := make([]any, 0, len(jobs))
	for _, j := range jobs {
		next := t.s.Next(j)
		if j.CutShort() {
			// Redacted whole like the prompt: the file is the agent's to
			// write, and this job came from it, not from schedule_job.
			fmt.Fprintf(&b, "\n- %s %q (%s, one-shot), was due at %s: a restart of the bot came as it fired, so it may not have run; "+
				"it does not run again, and the chat is told so (cancel_job removes it untold)",
				red.Redact(j.ID), red.Redact(j.Name), j.Kind(), formatTime(j.At, loc))
		} else {
			fmt.Fprintf(&b, "\n- %s %q (%s), schedule %s, next run %s", j.ID, j.Name, j.Kind(), j.Schedule, formatNext(next, loc))
		}
		if !j.LastRun.IsZero() {
			fmt.Fprintf(&b, ", last run %s: %s", formatTime(j.LastRun, loc), j.LastOutcome)
		}
		fmt.Fprintf(&b, "\n  prompt: %s", oneLine(red.Redact(j.Prompt), 200))
		if j.Script != "" {
			fmt.Fprintf(&b, "\n  script: %s", oneLine(red.Redact(j.Script), 200))
		}
		details = append(details, jobDetails(j, next, loc))
	}
	return agent.Result{Content: []agent.Content{agent.Text(b.String())}, Details: map[string]any{"jobs": details}}, nil
}

// formatNext renders a next run, or "none".
func formatNext(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return "none"
	}
	return formatTime(t, loc)
}

// oneLine shortens s to one line of at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// cancelArgs are cancel_job's arguments.
type cancelArgs struct {
	ID string `json:"id" jsonschema:"The job's id."`
}

// cancelTool is cancel_job.
type cancelTool struct{ s *Scheduler }

// cancelSpec describes cancel_job. It declares no effects: it runs and
// writes nothing the model names, but it is not read-only.
func cancelSpec() agent.ToolSpec {
	return agent.ToolSpec{
		Name:        "cancel_job",
		Description: "Cancel one of this chat's scheduled jobs by its id (list_jobs shows the ids).",
	}
}

// execute cancels the job, if it is the calling chat's.
func (t cancelTool) execute(_ context.Context, call *agent.Call, a cancelArgs) (agent.Result, error) {
	target := call.Context.Scope
	if target == "" {
		return agent.ErrorResult(errNoChat), nil
	}
	id := strings.TrimSpace(a.ID)
	if err := t.s.Cancel(target, id); err != nil {
		switch {
		case errors.Is(err, ErrNotFound):
			return agent.ErrorResult(fmt.Sprintf("This chat has no job %q; list_jobs shows its jobs.", id)), nil
		case errors.Is(err, ErrAlreadyRunning):
			return agent.ErrorResult(fmt.Sprintf("Job %s already fired and is running now; a one-shot job cannot be cancelled once it fired.", id)), nil
		case errors.Is(err, ErrAlreadyFinished):
			return agent.ErrorResult(fmt.Sprintf("Job %s already ran; a one-shot job is gone once it fired.", id)), nil
		}
		return agent.ErrorResult(toolError(err, t.s.cfg.minInterval)), nil
	}
	return agent.TextResult(fmt.Sprintf("Cancelled job %s.", id)), nil
}
