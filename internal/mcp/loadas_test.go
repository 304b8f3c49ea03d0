package mcp

import (
	"fmt"
	"io"
)

// loadAsArg, as the test binary's first argument, makes it load the MCP
// configuration file named by the second and report the outcome instead of
// running the tests: TestLoadTrust runs it as another user.
const loadAsArg = "mcp-load-config"

// Outcomes runLoad prints first on its output.
const (
	loadAccepted = "accepted"
	loadRefused  = "refused"
)

// runLoad loads the configuration at path with an empty environment and
// writes "accepted <servers>" or "refused <error>" to out. It returns the
// process's exit code.
func runLoad(path string, out io.Writer) int {
	cfg, err := Load(path, func(string) (string, bool) { return "", false }, nil)
	if err != nil {
		fmt.Fprintf(out, "%s %v\n", loadRefused, err)
		return 0
	}
	fmt.Fprintf(out, "%s %d\n", loadAccepted, len(cfg.Servers))
	return 0
}
