package tools

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/volcanic/telegram-agent/internal/agent"
)

// writeTool writes whole files.
type writeTool struct {
	// files is how the tool writes files (WithView).
	files fileAccess
}

// NewWrite returns the write tool {path, content}. It creates missing
// parent folders and replaces the file atomically (a temporary file renamed
// over it), keeping an existing file's permission bits, and reports how many
// bytes it wrote.
func NewWrite() agent.Tool { return writeTool{}.tool() }

// tool returns w as the model calls it.
func (w writeTool) tool() agent.Tool { return agent.NewTool(writeSpec(), w.execute) }

// writeArgs are the write tool's arguments.
type writeArgs struct {
	Path    string `json:"path" jsonschema:"Path of the file, relative to the workspace or absolute."`
	Content string `json:"content" jsonschema:"The file's new content."`
}

// execute writes one file.
func (w writeTool) execute(ctx context.Context, call *agent.Call, args writeArgs) (agent.Result, error) {
	path, err := resolvePath(call.Context, args.Path)
	if err != nil {
		return agent.ErrorResult(err.Error()), nil
	}
	if err := ctx.Err(); err != nil {
		return agent.Result{}, err
	}
	if err := w.files.mkdirAll(filepath.Dir(path)); err != nil {
		return agent.ErrorResult(fmt.Sprintf("Cannot create the folder of %s: %s", path, describeFileError(filepath.Dir(path), err))), nil
	}
	if err := w.files.writeAtomic(path, []byte(args.Content)); err != nil {
		return agent.ErrorResult(fmt.Sprintf("Cannot write %s: %s", path, describeFileError(path, err))), nil
	}
	return agent.Result{
		Content: []agent.Content{agent.Text(fmt.Sprintf("Wrote %d bytes to %s", len(args.Content), path))},
		Details: map[string]any{"path": path, "bytes": len(args.Content)},
	}, nil
}
