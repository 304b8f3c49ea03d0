package tools

import (
	"strings"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// noticeMark returns where n stands before a command starts (0 when
// there are no notices).
func noticeMark(n spawnpolicy.Notices) uint64 {
	if n == nil {
		return 0
	}
	return n.Mark()
}

// withNotices adds to res the lines n noticed since mark, after the
// command's own output and end, so the model reads why a client failed
// where its message does not say (a client that refused the credential
// proxy's certificate), and lists them in Details["notices"].
func withNotices(res agent.Result, n spawnpolicy.Notices, mark uint64) agent.Result {
	if n == nil {
		return res
	}
	lines := n.Since(mark)
	if len(lines) == 0 {
		return res
	}
	text := "\n" + strings.Join(lines, "\n")
	for i := len(res.Content) - 1; i >= 0; i-- {
		if res.Content[i].Type == agent.TextContent {
			res.Content[i].Text += text
			break
		}
	}
	if res.Details == nil {
		res.Details = map[string]any{}
	}
	res.Details["notices"] = lines
	return res
}
