package agent

import (
	"context"
	"encoding/json"
)

// ToolSpec is what the model sees of a tool: its name, what it does and the
// JSON Schema of its parameters (an object schema); and what the tool
// declares of its effects, which the model does not see.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	// Effects is what a call may change, for the extensions that judge
	// calls before they run.
	Effects Effects `json:"-"`
}

// Effects is a tool's declaration of what its calls change, for the
// extensions that judge a call before it runs (approvals reads it, never
// a tool's name). The loop does not enforce it: a tool that runs a
// command or writes a file must say so here, or the call is not judged as
// one. The zero value declares nothing: a tool that may change something,
// but neither through a command nor through a path it writes (an MCP
// server's tool, say).
type Effects struct {
	// ReadOnly says a call changes nothing: no file, job or setting, and
	// nothing reaches the chat.
	ReadOnly bool
	// Command names the string argument the tool runs as a bash command
	// line.
	Command string
	// Deferred says the Command argument is not run during the call but
	// later, with nobody watching (a watcher job's script); an absent or
	// empty one runs nothing.
	Deferred bool
	// WritesPath names the string argument that is the path of a file the
	// tool writes; a relative path is relative to the workspace.
	WritesPath string
}

// Tool is something the model can call. The loop redacts every result,
// progress report and error before anything downstream sees it, so a tool
// need not redact what it returns; a tool that cuts or stores output (a
// tail, a file) should redact the stream first, with ToolContext.Redactor,
// so that no cut can leave part of a secret and nothing unredacted reaches
// the disk.
type Tool interface {
	// Spec describes the tool to the model. It must not change after
	// registration.
	Spec() ToolSpec
	// Execute runs one call. The arguments in call have been validated
	// against the schema. A returned error becomes an error result for the
	// model (its message redacted); so does a panic. Execute must return
	// promptly once ctx is done, and must start every process through
	// call.Context.PrepareProcess (or Exec), never with an inherited
	// environment.
	Execute(ctx context.Context, call *Call) (Result, error)
}

// Call is one invocation of a tool.
type Call struct {
	// ID is the model's id for the call.
	ID string
	// Arguments is the JSON object the model sent, validated against the
	// tool's schema (only as an object when the schema is one the loop
	// cannot check: an MCP server's, logged at registration).
	Arguments json.RawMessage
	// Context is the session the call runs in: scope, zone, workspace, and the
	// only sanctioned way to start a process.
	Context *ToolContext
	// Progress reports a partial result (for example a snapshot of a command's
	// output tail). Progress is never nil: the loop always sets it. Call it
	// any number of times, from any goroutine, until Execute returns; each
	// report is redacted whole and emitted as an EventToolUpdate, and a
	// report made after Execute returned is dropped.
	Progress func(Result)
}

// Result is what a tool returns: content blocks for the model, and a Details
// map for hosts (rendered, persisted). Every string inside Details is
// redacted, however deeply nested; images are left alone.
type Result struct {
	Content []Content      `json:"content"`
	Details map[string]any `json:"details,omitempty"`
	IsError bool           `json:"is_error,omitempty"`
}

// TextResult returns a result holding one text block.
func TextResult(text string) Result { return Result{Content: []Content{Text(text)}} }

// ErrorResult returns an error result holding one text block.
func ErrorResult(text string) Result {
	return Result{Content: []Content{Text(text)}, IsError: true}
}
