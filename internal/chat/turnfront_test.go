package chat

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agent/tools"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/approvals"
)

// TestFrontEndReachesOnlyItsTurnsChat checks that the front end a turn's
// tools and handlers find on their context reaches that turn's chat only:
// a call that names another chat sends no file there, asks nothing there
// and reads none of its "always" decisions. Every tool and extension
// handler of the turn gets the front end, so it must not be a way into
// every chat the bot serves, whatever scope a session or a tool names.
func TestFrontEndReachesOnlyItsTurnsChat(t *testing.T) {
	const other = int64(2002)
	scope := itoa64(other)
	probes := []struct {
		name string
		// reach tries other's chat through front and returns an error
		// when the front end refused.
		reach func(ctx context.Context, front any) error
	}{
		{"a file", func(ctx context.Context, front any) error {
			_, err := front.(tools.FileSender).SendFile(ctx, scope, tools.OutgoingFile{Name: "notes.txt", Data: []byte("notes")})
			return err
		}},
		{"an approval request", func(ctx context.Context, front any) error {
			ctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
			defer cancel()
			d, err := front.(approvals.Asker).Ask(ctx, approvals.Request{
				Scope: scope, Tool: "bash", Command: "sudo true",
				Rules: []approvals.Rule{approvals.Describe(approvals.RuleSudo)}, Timeout: time.Second,
			})
			if err == nil {
				return fmt.Errorf("Ask answered %v", d)
			}
			return err
		}},
		{"an always decision", func(ctx context.Context, front any) error {
			if front.(approvals.DecisionStore).AlwaysAllowed(ctx, scope, approvals.RuleSudo) {
				return nil
			}
			return errors.New("not allowed")
		}},
	}
	var mu sync.Mutex
	reached := map[string]error{}
	reach := agent.NewTool(agent.ToolSpec{Name: "reach", Description: "reach another chat", Effects: agent.Effects{ReadOnly: true}},
		func(ctx context.Context, _ *agent.Call, _ struct{}) (agent.Result, error) {
			for _, p := range probes {
				err := p.reach(ctx, agent.FrontEnd(ctx))
				mu.Lock()
				reached[p.name] = err
				mu.Unlock()
			}
			return agent.TextResult("tried"), nil
		})
	faux := agenttest.NewFauxProvider(agenttest.FauxToolCalls(agenttest.FauxCall("reach", `{}`)), agenttest.FauxText("done"))
	h := newHarness(t, harnessConfig{provider: faux, agentOpts: []agent.Option{agent.WithTools(reach)}})
	if err := h.host.settings.update(scope, func(c *chatSettings) { c.Approvals = []string{approvals.RuleSudo} }); err != nil {
		t.Fatal(err)
	}
	h.tg.SendText(userID, userID, "go")
	h.waitText(userID, "done")
	mu.Lock()
	defer mu.Unlock()
	for _, p := range probes {
		err, tried := reached[p.name]
		switch {
		case !tried:
			t.Errorf("%s: the tool did not try", p.name)
		case err == nil:
			t.Errorf("%s: a turn of chat %d reached chat %d through its front end", p.name, userID, other)
		}
	}
	if got := h.tg.Messages(other); len(got) != 0 {
		t.Errorf("chat %d got %d message(s) from a turn of chat %d", other, len(got), userID)
	}
	if _, err := h.host.front.SendFile(context.Background(), itoa64(userID), tools.OutgoingFile{Name: "x.txt", Data: []byte("x")}); err == nil {
		t.Error("the front end sent a file outside any turn")
	}
}
