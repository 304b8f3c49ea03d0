package main

import (
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/tmpfstest"
)

// TestDoctorDirsOnFullDisk runs the directory checks on a real tmpfs: a
// full one is a problem (an empty file would still be created there, so
// only a write shows it), a nearly full one a warning with its free space.
func TestDoctorDirsOnFullDisk(t *testing.T) {
	tests := []struct {
		name         string
		full         bool
		wantProblems int
		wantWarnings int
		wantOut      string
	}{
		{"full", true, 1, 0, "AGENT_DIR " + "%s: not writable: write"},
		{"little space", false, 0, 1, "has only 1.0 MiB free"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tmpfstest.Mount(t, 1<<20)
			if tt.full {
				d.Fill()
			}
			var out strings.Builder
			r := &report{w: &out}
			doctorDirs(r, Config{AgentDir: d.Dir, WorkspaceDir: t.TempDir()})
			want := strings.ReplaceAll(tt.wantOut, "%s", d.Dir)
			// The workspace is on the test machine's disk, which may be
			// low on space too: only AGENT_DIR's findings count.
			problems, warnings := aboutAgentDir(r.problems), aboutAgentDir(r.warnings)
			if problems != tt.wantProblems || warnings != tt.wantWarnings || !strings.Contains(out.String(), want) {
				t.Errorf("%d problems and %d warnings about AGENT_DIR, want %d and %d, and %q in the output:\n%s",
					problems, warnings, tt.wantProblems, tt.wantWarnings, want, out.String())
			}
		})
	}
}

// aboutAgentDir counts the findings about AGENT_DIR.
func aboutAgentDir(findings []string) int {
	n := 0
	for _, f := range findings {
		if strings.HasPrefix(f, "AGENT_DIR ") {
			n++
		}
	}
	return n
}
