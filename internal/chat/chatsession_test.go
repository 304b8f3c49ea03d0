package chat

import (
	"testing"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
)

// /new saves the new session id before it closes the old session, so a
// command that opens the chat's session in between (/status, /tz, /model)
// gets the new one and never reopens the old one, which would then stay
// open.
func TestNewSessionSavesTheIDFirst(t *testing.T) {
	h := newHarness(t, harnessConfig{provider: agenttest.NewFauxProvider()})
	ctx := t.Context()
	tgt := target{chatID: userID}
	old, err := h.host.session(ctx, tgt)
	if err != nil {
		t.Fatal(err)
	}
	var between *agent.Session
	h.host.newSessionGap = func() {
		// What /status does while /new runs.
		if between, err = h.host.session(ctx, tgt); err != nil {
			t.Errorf("opening the session during /new: %v", err)
		}
	}
	h.host.newSession(ctx, tgt)
	if between == nil {
		t.Fatal("the seam did not run")
	}
	if between.ID() == old.ID() {
		t.Errorf("a command during /new opened the old session %s again", old.ID())
	}
	if now, err := h.host.session(ctx, tgt); err != nil || now != between {
		t.Errorf("after /new the chat's session is %v (err %v), want the one opened during /new", now, err)
	}
	reopened, err := h.agent.Session(ctx, agent.SessionOptions{ID: old.ID(), Scope: tgt.String()})
	if err != nil {
		t.Fatal(err)
	}
	defer reopened.Close()
	if reopened == old {
		t.Errorf("the old session %s is still open after /new", old.ID())
	}
}
