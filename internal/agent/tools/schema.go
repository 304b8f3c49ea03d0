package tools

import (
	"encoding/json"
	"fmt"

	"github.com/volcanic/telegram-agent/internal/agent"
)

// The tools' names, part of the contract with the model.
const (
	BashName  = "bash"
	ReadName  = "read"
	WriteName = "write"
	EditName  = "edit"
)

// bashSpec describes the bash tool to the model.
func bashSpec(cfg bashConfig) agent.ToolSpec {
	limit := ""
	if cfg.maxTimeout > 0 {
		limit = fmt.Sprintf(", at most %d", int(cfg.maxTimeout.Seconds()))
	}
	return agent.ToolSpec{
		Name: BashName,
		Description: fmt.Sprintf("Run a bash command in the workspace and return its output (stdout and stderr interleaved) and exit code. "+
			"Standard input is empty. Only the last %d lines or %d KB of the output are returned; the full output is then saved to a file whose path the result gives. "+
			"The command is killed, with its background processes, after the timeout (default %d seconds%s).",
			cfg.maxLines, cfg.maxBytes/1024, int(cfg.defaultTimeout.Seconds()), limit),
		Parameters: json.RawMessage(`{
  "type": "object",
  "properties": {
    "command": {"type": "string", "description": "The bash command line to run."},
    "timeout": {"type": "number", "description": "Timeout in seconds."}
  },
  "required": ["command"],
  "additionalProperties": false
}`),
	}
}

// readSpec describes the read tool to the model.
func readSpec() agent.ToolSpec {
	return agent.ToolSpec{
		Name: ReadName,
		Description: fmt.Sprintf("Read a file. Text comes back as numbered lines, at most %d lines or %d KB at a time; use offset and limit to read on. "+
			"Images (PNG, JPEG, GIF, WebP) come back as images. Relative paths are relative to the workspace.", DefaultMaxLines, DefaultMaxBytes/1024),
		Parameters: json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Path of the file, relative to the workspace or absolute."},
    "offset": {"type": "integer", "description": "Line number to start from, 1-based."},
    "limit": {"type": "integer", "description": "Maximum number of lines to read."}
  },
  "required": ["path"],
  "additionalProperties": false
}`),
	}
}

// writeSpec describes the write tool to the model.
func writeSpec() agent.ToolSpec {
	return agent.ToolSpec{
		Name: WriteName,
		Description: "Write content to a file, replacing it if it exists and creating missing parent folders. " +
			"Relative paths are relative to the workspace.",
		Parameters: json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Path of the file, relative to the workspace or absolute."},
    "content": {"type": "string", "description": "The file's new content."}
  },
  "required": ["path", "content"],
  "additionalProperties": false
}`),
	}
}

// editSpec describes the edit tool to the model.
func editSpec() agent.ToolSpec {
	return agent.ToolSpec{
		Name: EditName,
		Description: "Replace text in a file: old_text must occur in the file exactly once (include surrounding lines to make it unique), " +
			"and is replaced by new_text. Relative paths are relative to the workspace.",
		Parameters: json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Path of the file, relative to the workspace or absolute."},
    "old_text": {"type": "string", "description": "The exact text to replace; it must occur exactly once."},
    "new_text": {"type": "string", "description": "The text to put in its place."}
  },
  "required": ["path", "old_text", "new_text"],
  "additionalProperties": false
}`),
	}
}

// decodeArgs unmarshals a call's arguments into v. The loop has validated
// them against the schema already, so a failure here is rare; its message is
// worded for the model.
func decodeArgs(call *agent.Call, v any) error {
	raw := call.Arguments
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("invalid arguments: %w", err)
	}
	return nil
}
