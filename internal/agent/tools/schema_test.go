package tools_test

import (
	"flag"
	"testing"

	"github.com/volcanic/telegram-agent/internal/agent/tools"
	"github.com/volcanic/telegram-agent/internal/agenttest"
)

// update rewrites the golden schemas of TestGoldenSchemas.
var update = flag.Bool("update", false, "rewrite the golden tool schemas in testdata/schemas")

// TestGoldenSchemas pins each built-in tool as the model sees it, with the
// default settings, in testdata/schemas: a change to a name, a parameter
// or a description shows in the diff.
func TestGoldenSchemas(t *testing.T) {
	f := newFixture(t, fixtureConfig{tools: append(tools.All(), tools.NewSendFile())})
	specs := f.agent.Tools()
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	if len(specs) != 5 {
		t.Fatalf("the agent offers %v, want the five built-in tools", names)
	}
	agenttest.CheckGoldenSpecs(t, "testdata/schemas", specs, *update)
}
