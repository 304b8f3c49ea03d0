package chat

import (
	"strings"
	"sync"
	"testing"

	"github.com/volcanic/telegram-agent/internal/agenttest"
)

// /status ends with the lines WithStatusLines gives at the time it is
// asked (an MCP server that failed, then answered), redacted as every
// reply is.
func TestStatusShowsExtraLines(t *testing.T) {
	var mu sync.Mutex
	line := "MCP github: failed after 2 tries: npm error code E503 " + openAIKey + "; tried again in 4s"
	lines := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return []string{line}
	}
	h := newHarness(t, harnessConfig{provider: agenttest.NewFauxProvider(), opts: []Option{WithStatusLines(lines)}})
	h.tg.SendText(userID, userID, "/status")
	got := h.waitText(userID, "MCP github: failed after 2 tries")
	if strings.Contains(got.Visible, openAIKey) {
		t.Error("/status sent a secret an extra line held")
	}
	if !strings.Contains(got.Visible, "Time zone: ") {
		t.Errorf("the extra lines replaced the status: %q", got.Visible)
	}
	mu.Lock()
	line = "MCP github: ready, 12 tool(s)"
	mu.Unlock()
	h.tg.SendText(userID, userID, "/status")
	h.waitText(userID, "MCP github: ready, 12 tool(s)")
}
