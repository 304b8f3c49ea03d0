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
	// callMu makes the bridge's calls run one at a time, as the agent
	// loop runs them.
	callMu sync.Mutex

	// ready closes when claude's init event passed the checks, ended when
	// the run is over; a call waits for the one or the other.
	ready, ended         chan struct{}
	readyOnce, endedOnce sync.Once

	mu  sync.Mutex
	buf strings.Builder
	any bool
	// uses are the bridge tool uses claude's assistant messages announced
	// that no call has taken yet, in order; changed is closed (and
	// replaced) when one is added.
	uses    []toolUse
	changed chan struct{}
}

// toolUse is a tool use an assistant message announced.
type toolUse struct{ id, name string }

// newTurnState returns the state of a run streaming to onText.
func newTurnState(onText func(string)) *turnState {
	return &turnState{onText: onText, ready: make(chan struct{}), ended: make(chan struct{}), changed: make(chan struct{})}
}

// initDone marks the init event checked: calls may run from now on.
func (t *turnState) initDone() { t.readyOnce.Do(func() { close(t.ready) }) }

// abort makes the calls from now on get nothing.
func (t *turnState) abort() { t.endedOnce.Do(func() { close(t.ended) }) }

// running waits until claude's init passed its checks, and reports
// whether the run is still going then.
func (t *turnState) running(ctx context.Context) bool {
	select {
	case <-t.ready:
	case <-t.ended:
		return false
	case <-ctx.Done():
		return false
	}
	select {
	case <-t.ended:
		return false
	default:
		return ctx.Err() == nil
	}
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
func (t *turnState) announce(id, name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.uses = append(t.uses, toolUse{id: id, name: name})
	close(t.changed)
	t.changed = make(chan struct{})
}

// take returns the id of the first announced use of the tool name that no
// call has taken, waiting up to toolUseWait for claude's message: claude
// writes it before it calls, but the bot reads it from a pipe. Calls made
// in parallel take the ids of their own tool's uses. "" when none came.
func (t *turnState) take(ctx context.Context, name string) string {
	timer := time.NewTimer(toolUseWait)
	defer timer.Stop()
	for {
		t.mu.Lock()
		for i, u := range t.uses {
			if u.name == toolPrefix+name {
				t.uses = append(t.uses[:i], t.uses[i+1:]...)
				t.mu.Unlock()
				return u.id
			}
		}
		changed := t.changed
		t.mu.Unlock()
		select {
		case <-changed:
		case <-timer.C:
			return ""
		case <-ctx.Done():
			return ""
		}
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

// call runs one bridge call in the turn ctx belongs to. A call that
// comes before claude's init was checked waits for it; one after the run
// ended is refused.
func (t *turnState) call(ctx context.Context, name string, args json.RawMessage) wireResult {
	t.callMu.Lock()
	defer t.callMu.Unlock()
	if !t.running(ctx) {
		return wireResult{Content: []agent.Content{agent.Text("The turn is not running.")}, IsError: true}
	}
	id := t.take(ctx, name)
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	res, err := agent.RunBridgedCall(ctx, t.rest(), agent.ToolCall{ID: id, Name: name, Arguments: string(args)})
	if err != nil && len(res.Content) == 0 {
		res = agent.ErrorResult("The call could not run: " + err.Error())
	}
	return wireResult{Content: res.Content, IsError: res.IsError}
}
