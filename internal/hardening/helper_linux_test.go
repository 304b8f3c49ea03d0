package hardening

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// The variables through which the integration tests drive a re-run of the
// test binary.
const (
	modeVar   = "HARDENING_TEST_MODE"   // which helper mode to run
	markerVar = "HARDENING_TEST_MARKER" // a fake secret in a helper's environment
	pathVar   = "HARDENING_TEST_PATH"   // the file a reader opens
)

// The helper modes.
const (
	modeHardened = "hardened" // Apply(true), report, wait for stdin to close
	modeControl  = "control"  // Apply(false), report, wait for stdin to close
	modeSpawn    = "spawn"    // Apply(true), run a modeReport child, report both
	modeReport   = "report"   // report and exit
	modeOpen     = "open"     // open pathVar and report the errno
	modeRead     = "read"     // open and read pathVar, and report the errno and bytes
)

// helperReport is the JSON line a helper writes to stdout once it is ready.
type helperReport struct {
	PID           int
	EUID          int
	Dumpable      bool
	Err           string
	ChildDumpable *bool `json:",omitempty"`
}

// readerReport is the JSON line a reader writes to stdout.
type readerReport struct {
	EUID  int
	Errno int
	Err   string
	Data  []byte
}

// runHelperMode runs the mode named by modeVar and reports its exit code; ok
// is false when the binary runs as the test runner.
func runHelperMode() (code int, ok bool) {
	mode := os.Getenv(modeVar)
	if mode == "" {
		return 0, false
	}
	out := json.NewEncoder(os.Stdout)
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	var err error
	switch mode {
	case modeHardened, modeControl:
		Apply(mode == modeHardened, logger)
		allowAnyTracer()
		err = out.Encode(report())
		if err == nil {
			_, err = io.Copy(io.Discard, os.Stdin) // stay alive until the test is done
		}
	case modeSpawn:
		Apply(true, logger)
		err = out.Encode(spawnReport())
	case modeReport:
		err = out.Encode(report())
	case modeOpen, modeRead:
		err = out.Encode(readReport(mode == modeRead, os.Getenv(pathVar)))
	default:
		err = fmt.Errorf("unknown %s %q", modeVar, mode)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "helper %s: %v\n", mode, err)
		return 2, true
	}
	return 0, true
}

// report describes the running process.
func report() helperReport {
	r := helperReport{PID: os.Getpid(), EUID: os.Geteuid()}
	d, err := Dumpable()
	r.Dumpable = d
	if err != nil {
		r.Err = err.Error()
	}
	return r
}

// spawnReport describes the running process and a child it execs, which
// reports its own dumpable flag.
func spawnReport() helperReport {
	r := report()
	child := exec.Command(os.Args[0])
	child.Env = []string{modeVar + "=" + modeReport}
	child.Stderr = os.Stderr
	out, err := child.Output()
	var cr helperReport
	if err == nil {
		err = json.Unmarshal(out, &cr)
	}
	if err == nil && cr.Err != "" {
		err = errors.New(cr.Err)
	}
	if err != nil {
		r.Err = fmt.Sprintf("child: %v", err)
		return r
	}
	r.ChildDumpable = &cr.Dumpable
	return r
}

// readReport opens path, and reads it when read is true, reporting the errno
// of the first failure.
func readReport(read bool, path string) readerReport {
	r := readerReport{EUID: os.Geteuid()}
	var err error
	if read {
		r.Data, err = os.ReadFile(path)
	} else {
		var f *os.File
		if f, err = os.Open(path); err == nil {
			err = f.Close()
		}
	}
	if err != nil {
		r.Err = err.Error()
		if errno, ok := errors.AsType[syscall.Errno](err); ok {
			r.Errno = int(errno)
		}
	}
	return r
}

// allowAnyTracer lifts Yama's ptrace_scope 1 restriction for this process,
// so that a sibling reader is refused /proc/<pid>/mem only because of the
// dumpable flag. Without Yama the call fails with EINVAL, which is fine.
func allowAnyTracer() {
	_ = unix.Prctl(unix.PR_SET_PTRACER, unix.PR_SET_PTRACER_ANY, 0, 0, 0)
}
