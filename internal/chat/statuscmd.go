package chat

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// elapsed words how long something has run, to the second: "12s",
// "3m 05s", "1h 02m".
func elapsed(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm %02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	}
	return fmt.Sprintf("%dh %02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
}

// statusCommand handles /status.
func (c *commander) statusCommand(ctx context.Context, in *inbound, reply func(string)) {
	reply(c.status(ctx, in.target))
}

// status describes t's session and worker.
func (c *commander) status(ctx context.Context, t target) string {
	var b strings.Builder
	model, messages, usage := c.sessions.model, 0, ""
	if s, err := c.sessions.open(ctx, t); err == nil {
		model, messages = s.Model(), len(s.Messages())
		usage = contextLines(s.ContextUsage(), c.sessions.location(t.String())) + "\n"
	}
	usage += c.meter.sessionLine(t)
	fmt.Fprintf(&b, "Model: %s\nSession: %s (%s)\n%s", model, c.sessions.label(t), counted(messages, "message", "messages"), usage)
	running, queued := (*workItem)(nil), 0
	var tool toolActivity
	var inTool bool
	if w := c.queues.existingWorker(t); w != nil {
		running, queued = w.snapshot()
		tool, inTool = w.activity()
	}
	switch {
	case running == nil:
		b.WriteString("Running: nothing\n")
	case running.kind == itemPrompt:
		fmt.Fprintf(&b, "Running: scheduled prompt %q\n", running.label)
	case running.kind == itemCompact:
		b.WriteString("Running: a compaction\n")
	default:
		b.WriteString("Running: a turn\n")
	}
	if inTool {
		what := tool.name
		if tool.arg != "" {
			what += ": " + tool.arg
		}
		fmt.Fprintf(&b, "Tool: %s, for %s\n", what, elapsed(time.Since(tool.since)))
	}
	fmt.Fprintf(&b, "Queued: %d\n", queued)
	zone := c.sessions.timeZone(t.String())
	if zone == "" {
		zone = "the host's (" + time.Now().Format("MST") + ")"
	}
	fmt.Fprintf(&b, "Time zone: %s", zone)
	if c.statusLines != nil {
		for _, l := range c.statusLines() {
			b.WriteString("\n" + l)
		}
	}
	return b.String()
}
