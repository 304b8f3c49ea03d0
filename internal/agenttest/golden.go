package agenttest

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/volcanic/telegram-agent/internal/agent"
)

// CheckGoldenSpecs compares each spec, as the model sees it (name,
// description, parameters), with the golden file dir/<name>.json, and
// fails on a golden file no spec has: tool names and parameters are a
// contract with the model, so a change to one must show in a diff of
// testdata. With update it rewrites the files instead (the packages' -update
// flag), removing the stale ones.
func CheckGoldenSpecs(t testing.TB, dir string, specs []agent.ToolSpec, update bool) {
	t.Helper()
	want := make(map[string][]byte, len(specs))
	for _, spec := range specs {
		// The parameters keep the model's order of keys.
		b, err := json.MarshalIndent(struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		}{spec.Name, spec.Description, spec.Parameters}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		want[spec.Name+".json"] = append(b, '\n')
	}
	existing, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if update {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, p := range existing {
			if want[filepath.Base(p)] == nil {
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
			}
		}
		for name, b := range want {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	for _, p := range existing {
		if want[filepath.Base(p)] == nil {
			t.Errorf("%s pins a tool that is not offered any more; if it was renamed or removed on purpose, run the test with -update", p)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		p := filepath.Join(dir, name)
		got, err := os.ReadFile(p)
		if err != nil {
			t.Errorf("no golden schema for tool %s (%v); run the test with -update and review the new file", strings.TrimSuffix(name, ".json"), err)
			continue
		}
		if !bytes.Equal(got, want[name]) {
			t.Errorf("tool %s differs from %s, the contract with the model (-golden +now); if the change is meant, run the test with -update:\n%s",
				strings.TrimSuffix(name, ".json"), p, cmp.Diff(string(got), string(want[name])))
		}
	}
}
