package agent_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
)

func TestCutStreamIsSentOnceMore(t *testing.T) {
	cut := func(text string) agenttest.FauxResponse {
		return agenttest.FauxFunc(func(_ context.Context, _ agent.Request, onText func(string)) (agent.Response, error) {
			onText(text)
			return agent.Response{}, fmt.Errorf("%w: connection reset", agent.ErrStreamInterrupted)
		})
	}
	answer := agenttest.FauxFunc(func(_ context.Context, _ agent.Request, onText func(string)) (agent.Response, error) {
		onText("whole answer")
		return agent.Response{Text: "whole answer", Model: "backup"}, nil
	})
	tests := []struct {
		name      string
		responses []agenttest.FauxResponse
		wantErr   bool
		wantKinds []agent.EventKind
	}{
		{
			name:      "cut once, then whole from a fallback model",
			responses: []agenttest.FauxResponse{cut("half an ans"), answer},
			wantKinds: []agent.EventKind{agent.EventTurnStart, agent.EventTextDelta, agent.EventStreamRestart,
				agent.EventTextDelta, agent.EventModelFallback, agent.EventTurnEnd},
		},
		{
			name:      "cut twice",
			responses: []agenttest.FauxResponse{cut("half"), cut("half again")},
			wantErr:   true,
			wantKinds: []agent.EventKind{agent.EventTurnStart, agent.EventTextDelta, agent.EventStreamRestart,
				agent.EventTextDelta, agent.EventError, agent.EventTurnEnd},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			faux := agenttest.NewFauxProvider(tt.responses...)
			s := openSession(t, newTestAgent(t, faux), agent.SessionOptions{})
			var log eventLog
			res, err := s.Prompt(context.Background(), []agent.Content{agent.Text("hi")}, log.add)
			if tt.wantErr != (err != nil) {
				t.Fatalf("Prompt error = %v, want error %v", err, tt.wantErr)
			}
			if err != nil && !errors.Is(err, agent.ErrStreamInterrupted) {
				t.Errorf("Prompt error = %v, want ErrStreamInterrupted", err)
			}
			if diff := cmp.Diff(tt.wantKinds, kindsOf(log.all())); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			reqs := faux.Requests()
			if len(reqs) != 2 {
				t.Fatalf("the provider got %d requests, want 2", len(reqs))
			}
			if diff := cmp.Diff(reqs[0], reqs[1]); diff != "" {
				t.Errorf("the second request differs from the first (-first +second):\n%s", diff)
			}
			if err == nil {
				if res.Text != "whole answer" {
					t.Errorf("answer = %q, want the second stream's", res.Text)
				}
				for _, ev := range log.all() {
					if ev.Kind == agent.EventModelFallback && ev.Text != "backup" {
						t.Errorf("EventModelFallback names %q, want backup", ev.Text)
					}
				}
			}
		})
	}
}
