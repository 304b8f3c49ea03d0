package agent

import "time"

// logToolCall logs one tool call at Info: the tool, how long it took, its
// exit code when it ran a command, and whether it failed; at Debug also
// the call's id and the sizes of its arguments and result. Never the
// arguments or the output themselves.
func (s *Session) logToolCall(call ToolCall, result Result, took time.Duration) {
	attrs := []any{"session", s.id, "scope", s.scope, "tool", call.Name, "duration", took.Round(time.Millisecond), "failed", result.IsError}
	if code, ok := ExitCode(result.Details); ok {
		attrs = append(attrs, "exit_code", code)
	}
	s.agent.logger.Info("tool call", attrs...)
	s.agent.logger.Debug("tool call details", "session", s.id, "tool", call.Name, "call", call.ID,
		"argument_bytes", len(call.Arguments), "result_bytes", len(TextOf(result.Content)))
}

// ExitCode returns the exit code a command's result details carry (the
// "exit_code" the bash tool sets, as an int or, read back from JSON, a
// float64).
func ExitCode(details map[string]any) (int, bool) {
	switch v := details["exit_code"].(type) {
	case int:
		return v, true
	case int64:
		return int(v), true
	case float64:
		return int(v), true
	}
	return 0, false
}
