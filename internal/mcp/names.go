package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// maxToolName is the longest tool name the model providers accept.
const maxToolName = 64

// toolPrefix starts every MCP tool's name.
const toolPrefix = "mcp__"

// hashLen is how many hex digits of the hash disambiguate a name.
const hashLen = 8

// remoteTool names one tool of one server.
type remoteTool struct {
	Server string
	Tool   string
}

// toolNames returns the name the model sees for each tool:
// mcp__<server>__<tool>, with every character outside [A-Za-z0-9_-]
// replaced by '_'. A name longer than maxToolName, or one that two tools
// would share, instead keeps a prefix and ends with '_' and a hash of the
// server's and the tool's original names. The result depends only on the set
// of tools, never on their order.
func toolNames(tools []remoteTool) map[remoteTool]string {
	plain := make(map[remoteTool]string, len(tools))
	count := make(map[string]int, len(tools))
	for _, t := range tools {
		if _, dup := plain[t]; dup {
			continue
		}
		n := toolPrefix + sanitize(t.Server) + "__" + sanitize(t.Tool)
		plain[t] = n
		count[n]++
	}
	out := make(map[remoteTool]string, len(plain))
	for t, n := range plain {
		if len(n) > maxToolName || count[n] > 1 {
			n = hashedName(n, t)
		}
		out[t] = n
	}
	return out
}

// hashedName shortens n so that it ends with '_' and a hash of t and fits
// maxToolName.
func hashedName(n string, t remoteTool) string {
	sum := sha256.Sum256([]byte(t.Server + "\x00" + t.Tool))
	suffix := "_" + hex.EncodeToString(sum[:])[:hashLen]
	if keep := maxToolName - len(suffix); len(n) > keep {
		n = n[:keep]
	}
	return n + suffix
}

// sanitize replaces every character outside [A-Za-z0-9_-] with '_'.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			return r
		}
		return '_'
	}, s)
}
