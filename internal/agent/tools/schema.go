package tools

import (
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

// The specs below hold each tool's name, description and declared effects;
// NewTool adds the parameters, inferred from the tool's argument struct.

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
		Effects: agent.Effects{Command: "command"},
	}
}

// readSpec describes the read tool to the model.
func readSpec() agent.ToolSpec {
	return agent.ToolSpec{
		Name: ReadName,
		Description: fmt.Sprintf("Read a file. Text comes back as numbered lines, at most %d lines or %d KB at a time; use offset and limit to read on. "+
			"Images (PNG, JPEG, GIF, WebP) come back as images. Relative paths are relative to the workspace.", DefaultMaxLines, DefaultMaxBytes/1024),
		Effects: agent.Effects{ReadOnly: true},
	}
}

// writeSpec describes the write tool to the model.
func writeSpec() agent.ToolSpec {
	return agent.ToolSpec{
		Name: WriteName,
		Description: "Write content to a file, replacing it if it exists and creating missing parent folders. " +
			"Relative paths are relative to the workspace.",
		Effects: agent.Effects{WritesPath: "path"},
	}
}

// editSpec describes the edit tool to the model.
func editSpec() agent.ToolSpec {
	return agent.ToolSpec{
		Name: EditName,
		Description: "Replace text in a file: old_text must occur in the file exactly once (include surrounding lines to make it unique), " +
			"and is replaced by new_text. Relative paths are relative to the workspace.",
		Effects: agent.Effects{WritesPath: "path"},
	}
}
