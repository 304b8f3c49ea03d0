package scheduler

import (
	"flag"
	"testing"

	"github.com/volcanic/telegram-agent/internal/agenttest"
)

// update rewrites the golden schemas of TestGoldenSchemas.
var update = flag.Bool("update", false, "rewrite the golden tool schemas in testdata/schemas")

// TestGoldenSchemas pins the scheduler's tools as the model sees them, once
// the agent registered them, in testdata/schemas: a change to a name, a
// parameter or a description shows in the diff.
func TestGoldenSchemas(t *testing.T) {
	e := newEnv(t, setup{})
	specs := e.agent.Tools()
	if len(specs) != 3 {
		t.Fatalf("the agent offers %d tools, want the scheduler's three", len(specs))
	}
	agenttest.CheckGoldenSpecs(t, "testdata/schemas", specs, *update)
}
