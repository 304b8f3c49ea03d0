// Package scheduler runs a chat's scheduled jobs: prompt jobs, which put a
// prompt to the chat's session on a schedule, and watcher jobs, which run a
// bash script on a schedule and wake the agent only when the script has
// something to say.
//
// The scheduler is an [agent.Extension]: activation registers the model's
// tools (schedule_job, list_jobs, cancel_job) and keeps the agent's
// process-wide spawn policy and redactor. Watcher scripts are
// agent-requested processes, so they are prepared by that policy (Purpose
// ScheduledScript) and never inherit the
// host's environment; their output and the stderr tail of a failure are
// redacted before they reach the chat or the model.
//
// Schedules are parsed with github.com/robfig/cron/v3, but the scheduler
// computes the next run itself, in the target chat's time zone, so that a
// test can inject its clock and a chat's /tz change applies at once.
//
// Jobs live in one JSON file (jobs.json in the agent dir), written
// atomically; a file that does not parse stops start-up and is never
// overwritten.
package scheduler
