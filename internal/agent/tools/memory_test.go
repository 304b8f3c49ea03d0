package tools_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agent/tools"
	"github.com/volcanic/telegram-agent/internal/scaletest"
)

// The helper modes and their parameters.
const (
	helperBigOutput = "bash-big-output"
	// helperWorkspaceEnv names the helper's workspace.
	helperWorkspaceEnv = "TOOLS_TEST_WORKSPACE"
	// helperBytesEnv is how many bytes the helper's command prints.
	helperBytesEnv = "TOOLS_TEST_BYTES"
	// bigOutputBytes is what the memory test's command prints: 1 GiB, or
	// an eighth of it under the race detector or with -short (scaletest),
	// still twice the spill limit and twice the growth allowed.
	bigOutputBytes = 1 << 30
	// maxGrowth is how much the tool may grow the process's memory.
	maxGrowth = 64 << 20
)

// memoryReport is what the helper prints for the test.
type memoryReport struct {
	BaselineRSSKB int64  `json:"baseline_rss_kb"`
	PeakRSSKB     int64  `json:"peak_rss_kb"`
	TotalBytes    int64  `json:"total_bytes"`
	FullOutput    string `json:"full_output"`
	ShownBytes    int    `json:"shown_bytes"`
	ShownLines    int    `json:"shown_lines"`
	Note          string `json:"note"`
	Seconds       float64
}

// printBigOutput is the memory helper: it runs runBigOutput in workspace
// and prints its report to w as JSON.
func printBigOutput(workspace, size string, w io.Writer) error {
	n, err := strconv.ParseInt(size, 10, 64)
	if err != nil {
		return fmt.Errorf("%s: %w", helperBytesEnv, err)
	}
	rep, err := runBigOutput(workspace, n)
	if err != nil {
		return err
	}
	return json.NewEncoder(w).Encode(rep)
}

// runBigOutput runs the bash tool on a command printing size bytes and
// measures the process's resident memory before and at its peak (VmHWM).
func runBigOutput(workspace string, size int64) (memoryReport, error) {
	f := newFixture(helperTB{}, fixtureConfig{opts: []agent.Option{agent.WithWorkspace(workspace)}})
	runtime.GC()
	base, err := procStatusKB("VmRSS")
	if err != nil {
		return memoryReport{}, err
	}
	cmd := fmt.Sprintf("yes 0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ | head -c %d", size)
	start := time.Now()
	res, err := tools.NewBash().Execute(context.Background(), &agent.Call{ID: "big", Arguments: json.RawMessage(bashArgs(cmd, 600)), Context: f.session.ToolContext()})
	if err != nil {
		return memoryReport{}, err
	}
	seconds := time.Since(start).Seconds()
	peak, err := procStatusKB("VmHWM")
	if err != nil {
		return memoryReport{}, err
	}
	text := agent.TextOf(res.Content)
	tail, note, _ := strings.Cut(text, "\n\n")
	total, _ := res.Details["total_bytes"].(int64)
	path, _ := res.Details["full_output_path"].(string)
	return memoryReport{
		BaselineRSSKB: base, PeakRSSKB: peak, TotalBytes: total, FullOutput: path,
		ShownBytes: len(tail), ShownLines: strings.Count(tail, "\n") + 1, Note: note, Seconds: seconds,
	}, nil
}

// procStatusKB reads a kB field of /proc/self/status.
func procStatusKB(field string) (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":")
		if ok && name == field {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in /proc/self/status", field)
}

// helperTB is the testing.TB the helper builds its fixture with: it has no
// test, so a failure panics.
type helperTB struct{ testing.TB }

func (helperTB) Helper()                           {}
func (helperTB) Cleanup(func())                    {}
func (helperTB) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (helperTB) TempDir() string {
	dir, err := os.MkdirTemp("", "tools-helper-")
	if err != nil {
		panic(err)
	}
	return dir
}

// TestBashBoundedMemory runs a command printing 1 GiB (128 MiB under the
// race detector or with -short) through the bash tool in a child process
// (the test binary re-executed) and checks that the result is the tail,
// the full output is saved up to the spill limit, and the child's memory
// grew by less than 64 MiB.
func TestBashBoundedMemory(t *testing.T) {
	size := int64(scaletest.N(bigOutputBytes))
	ws := t.TempDir()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	// The helper's fixture makes its temporary folders in TMPDIR and
	// never removes them: give it one the test removes.
	cmd.Env = append(os.Environ(), helperEnv+"="+helperBigOutput, helperWorkspaceEnv+"="+ws, helperBytesEnv+"="+strconv.FormatInt(size, 10), "TMPDIR="+t.TempDir())
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper: %v", err)
	}
	var rep memoryReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("helper output %q: %v", out, err)
	}
	growth := (rep.PeakRSSKB - rep.BaselineRSSKB) * 1024
	t.Logf("%d MiB in %.1fs; RSS %d kB before, peak %d kB: growth %.1f MiB", size>>20, rep.Seconds, rep.BaselineRSSKB, rep.PeakRSSKB, float64(growth)/(1<<20))
	if growth >= maxGrowth {
		t.Errorf("memory grew by %d bytes, want under %d", growth, maxGrowth)
	}
	if rep.TotalBytes != size || rep.ShownBytes > tools.DefaultMaxBytes || rep.ShownLines > tools.DefaultMaxLines {
		t.Errorf("total %d bytes, shown %d bytes in %d lines; want %d bytes and a tail within the limits", rep.TotalBytes, rep.ShownBytes, rep.ShownLines, size)
	}
	if !strings.Contains(rep.Note, "Full output, cut at 64.0 MB: "+rep.FullOutput+"]") {
		t.Errorf("note %q does not name the full output %q, cut at the spill limit", rep.Note, rep.FullOutput)
	}
	info, err := os.Stat(rep.FullOutput)
	if err != nil || info.Size() != tools.DefaultSpillMaxBytes {
		t.Errorf("full output file: %v, size %v, want the spill limit, %d bytes", err, info, tools.DefaultSpillMaxBytes)
	}
}
