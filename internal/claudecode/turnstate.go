package claudecode

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
)

// turnState is what one run's output reader and its bridge calls share:
// the text since the last tool call, and the tool uses claude announced.
type turnState struct {
	onText func(string)
	// announced gets the id of each bridge tool use claude's assistant
	// messages announce, in order; a call takes the next one.
	announced chan string
	// callMu makes the bridge's calls run one at a time, as the agent
	// loop runs them.
	callMu sync.Mutex

	mu       sync.Mutex
	buf      strings.Builder
	any      bool
	ready    bool
	finished bool
}

// initDone marks the init event checked: calls may run from now on.
func (t *turnState) initDone() {
	t.mu.Lock()
	t.ready = true
	t.mu.Unlock()
}

// abort makes later calls get nothing.
func (t *turnState) abort() {
	t.mu.Lock()
	t.finished = true
	t.mu.Unlock()
}

// text streams a delta and keeps it for the next call or the answer.
func (t *turnState) text(delta string) {
	if delta == "" {
		return
	}
	t.mu.Lock()
	t.buf.WriteString(delta)
	t.any = true
	t.mu.Unlock()
	t.onText(delta)
}

// announce records a tool use of an assistant message.
func (t *turnState) announce(id string) {
	select {
	case t.announced <- id:
	default:
	}
}

// rest returns the text since the last call.
func (t *turnState) rest() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.buf.String()
	t.buf.Reset()
	return s
}

// streamed reports whether any text delta arrived.
func (t *turnState) streamed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.any
}

// call runs one bridge call in the turn ctx belongs to. A call before
// claude's init was checked, or after the run ended, is refused.
func (t *turnState) call(ctx context.Context, name string, args json.RawMessage) wireResult {
	t.callMu.Lock()
	defer t.callMu.Unlock()
	t.mu.Lock()
	ok := t.ready && !t.finished
	t.mu.Unlock()
	if !ok {
		return wireResult{Content: []agent.Content{agent.Text("The turn is not running.")}, IsError: true}
	}
	id := ""
	timer := time.NewTimer(toolUseWait)
	select {
	case id = <-t.announced:
	case <-timer.C:
	case <-ctx.Done():
	}
	timer.Stop()
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	res, err := agent.RunBridgedCall(ctx, t.rest(), agent.ToolCall{ID: id, Name: name, Arguments: string(args)})
	if err != nil && len(res.Content) == 0 {
		res = agent.ErrorResult("The call could not run: " + err.Error())
	}
	return wireResult{Content: res.Content, IsError: res.IsError}
}
