package tools

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
)

// result builds the bash tool's result: the tail, a truncation note naming
// the full output's file, and how the command ended, in the text and in
// Details.
func (b *bashTool) result(view tailView, spill spillResult, cmd *exec.Cmd, waitErr error, reason endReason, timeout time.Duration, capped bool, elapsed time.Duration) agent.Result {
	exitCode := -1
	if cmd.ProcessState != nil {
		exitCode = cmd.ProcessState.ExitCode()
	}
	details := map[string]any{
		"exit_code":   exitCode,
		"truncated":   view.Truncated,
		"total_lines": view.TotalLines,
		"total_bytes": view.TotalBytes,
		"duration_ms": elapsed.Milliseconds(),
	}
	var text strings.Builder
	out := strings.TrimSuffix(view.Text, "\n")
	if out == "" {
		out = "(no output)"
	}
	text.WriteString(out)
	text.WriteString("\n\n")
	if view.Truncated {
		path, spillErr := spill.path, spill.err
		details["full_output_path"] = path
		saved := "Full output"
		if spill.cutAt > 0 {
			details["full_output_cut_at"] = spill.cutAt
			saved = fmt.Sprintf("Full output, cut at %s", formatSize(spill.cutAt))
		}
		shown := fmt.Sprintf("the last %d of %d lines (%s of %s)", view.ShownLines, view.TotalLines, formatSize(int64(view.ShownBytes)), formatSize(view.TotalBytes))
		if view.CutMidLine {
			shown = fmt.Sprintf("the last %s of the last line (%s in total)", formatSize(int64(view.ShownBytes)), formatSize(view.TotalBytes))
		}
		switch {
		case spillErr != nil && path == "":
			fmt.Fprintf(&text, "[Output truncated: showing %s. The full output could not be saved: %v]\n", shown, spillErr)
		case spillErr != nil:
			fmt.Fprintf(&text, "[Output truncated: showing %s. %s, possibly incomplete (%v): %s]\n", shown, saved, spillErr, path)
		default:
			fmt.Fprintf(&text, "[Output truncated: showing %s. %s: %s]\n", shown, saved, path)
		}
	}
	isError := false
	switch reason {
	case endTimedOut:
		isError = true
		details["timed_out"] = true
		note := ""
		if capped {
			note = ", the configured maximum"
		}
		fmt.Fprintf(&text, "[Command timed out after %v%s; its process group was killed]\n", timeout, note)
	case endCancelled:
		isError = true
		details["cancelled"] = true
		text.WriteString("[Command aborted: the call was cancelled; its process group was killed]\n")
	}
	var exitErr *exec.ExitError
	switch {
	case waitErr != nil && !errors.As(waitErr, &exitErr) && cmd.ProcessState == nil:
		isError = true
		fmt.Fprintf(&text, "[Command failed: %v]", waitErr)
	case exitCode >= 0:
		isError = isError || exitCode != 0
		fmt.Fprintf(&text, "[Exit code: %d]", exitCode)
	default:
		isError = true
		fmt.Fprintf(&text, "[Exit code: none, %s]", cmd.ProcessState.String())
	}
	return agent.Result{Content: []agent.Content{agent.Text(text.String())}, Details: details, IsError: isError}
}

// formatSize writes n bytes for a person: B, KB, MB or GB.
func formatSize(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	case n < 1024*1024*1024:
		return fmt.Sprintf("%.1f MB", float64(n)/(1024*1024))
	}
	return fmt.Sprintf("%.1f GB", float64(n)/(1024*1024*1024))
}
