//go:build !unix

package mcp

import "fmt"

// checkTrust cannot tell on this system whether the bot's user could
// change the configuration file, so it only warns.
func checkTrust(path string) ([]string, error) {
	return []string{fmt.Sprintf("mcp: %s: whether the bot's own user can modify the MCP configuration is not checked on this system", path)}, nil
}
