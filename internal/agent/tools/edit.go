package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/volcanic/telegram-agent/internal/agent"
)

// maxEditBytes is the largest file edit reads: it holds the file, and its
// new content, in the bot's memory.
const maxEditBytes = 16 << 20

// editTool replaces one unique piece of text in a file.
type editTool struct {
	// files is how the tool reads and writes files (WithView).
	files fileAccess
}

// NewEdit returns the edit tool {path, old_text, new_text}. old_text must
// occur in the file exactly once; none or several occurrences are an error
// result that says which (with the count for several). The file is
// rewritten atomically, keeping its permission bits.
func NewEdit() agent.Tool { return editTool{}.tool() }

// tool returns e as the model calls it.
func (e editTool) tool() agent.Tool { return agent.NewTool(editSpec(), e.execute) }

// editArgs are the edit tool's arguments.
type editArgs struct {
	Path    string `json:"path" jsonschema:"Path of the file, relative to the workspace or absolute."`
	OldText string `json:"old_text" jsonschema:"The exact text to replace; it must occur exactly once."`
	NewText string `json:"new_text" jsonschema:"The text to put in its place."`
}

// execute edits one file.
func (e editTool) execute(ctx context.Context, call *agent.Call, args editArgs) (agent.Result, error) {
	path, err := resolvePath(call.Context, args.Path)
	if err != nil {
		return agent.ErrorResult(err.Error()), nil
	}
	if args.OldText == "" {
		return agent.ErrorResult("old_text must not be empty"), nil
	}
	if args.OldText == args.NewText {
		return agent.ErrorResult("old_text and new_text are identical; nothing to change"), nil
	}
	info, data, err := e.files.readFile(path, maxEditBytes)
	if errors.Is(err, errTooLarge) {
		return agent.ErrorResult(fmt.Sprintf("%s is larger than the %d MB edit takes; change it with bash (sed, a script)", path, maxEditBytes>>20)), nil
	}
	if err != nil {
		return agent.ErrorResult(describeFileError(path, err)), nil
	}
	if info.IsDir() {
		return agent.ErrorResult(fmt.Sprintf("%s is a directory, not a file", path)), nil
	}
	if looksBinary(data[:min(len(data), sniffLen)], len(data) <= sniffLen) {
		return agent.ErrorResult(fmt.Sprintf("%s looks like a binary file; edit only changes text files", path)), nil
	}
	if err := ctx.Err(); err != nil {
		return agent.Result{}, err
	}
	content := string(data)
	switch n := strings.Count(content, args.OldText); {
	case n == 0:
		return agent.ErrorResult(fmt.Sprintf("old_text was not found in %s; it must match the file exactly, whitespace included", path)), nil
	case n > 1:
		return agent.ErrorResult(fmt.Sprintf("old_text occurs %d times in %s; it must occur exactly once, so include more surrounding text", n, path)), nil
	}
	at := strings.Index(content, args.OldText)
	line := strings.Count(content[:at], "\n") + 1
	updated := content[:at] + args.NewText + content[at+len(args.OldText):]
	if err := e.files.writeAtomic(path, []byte(updated)); err != nil {
		return agent.ErrorResult(fmt.Sprintf("Cannot write %s: %s", path, describeFileError(path, err))), nil
	}
	return agent.Result{
		Content: []agent.Content{agent.Text(fmt.Sprintf("Replaced 1 occurrence in %s (line %d)", path, line))},
		Details: map[string]any{"path": path, "line": line},
	}, nil
}
