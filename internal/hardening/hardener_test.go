package hardening

import (
	"errors"
	"log/slog"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/volcanic/telegram-agent/internal/logtest"
)

// prctlCall is one recorded call of the prctl seam.
type prctlCall struct {
	Option int
	Arg2   uintptr
}

// rlimitCall is one recorded call of the setrlimit seam.
type rlimitCall struct {
	Resource int
	Cur, Max uint64
}

// fakeSystem scripts the seams of a hardener and records how they were called.
type fakeSystem struct {
	notLinux    bool
	euid        int
	env         map[string]string
	setErr      error // returned by prctl(PR_SET_DUMPABLE)
	setPanics   bool
	getValue    int   // returned by prctl(PR_GET_DUMPABLE); 0 after a successful set
	getErr      error // returned by prctl(PR_GET_DUMPABLE)
	rlimitErr   error
	rlimitPanic bool
	euidPanics  bool

	prctlCalls  []prctlCall
	rlimitCalls []rlimitCall
}

// hardener returns a hardener over the fake seams, guarded by once.
func (f *fakeSystem) hardener(once *sync.Once) hardener {
	return hardener{
		once:    once,
		isLinux: !f.notLinux,
		prctl: func(option int, arg2 uintptr) (int, error) {
			f.prctlCalls = append(f.prctlCalls, prctlCall{option, arg2})
			switch option {
			case prSetDumpable:
				if f.setPanics {
					panic("libc does not resolve")
				}
				return 0, f.setErr
			case prGetDumpable:
				return f.getValue, f.getErr
			}
			return 0, syscall.EINVAL
		},
		setrlimit: func(resource int, cur, max uint64) error {
			f.rlimitCalls = append(f.rlimitCalls, rlimitCall{resource, cur, max})
			if f.rlimitPanic {
				panic("setrlimit exploded")
			}
			return f.rlimitErr
		},
		geteuid: func() int {
			if f.euidPanics {
				panic("geteuid exploded")
			}
			return f.euid
		},
		getenv: func(key string) string { return f.env[key] },
	}
}

var (
	setAndVerify = []prctlCall{{prSetDumpable, 0}, {prGetDumpable, 0}}
	coreToZero   = []rlimitCall{{rlimitCore, 0, 0}}
	hardenedLog  = entry{Level: slog.LevelInfo, Msg: msgHardened}
	rootLog      = entry{Level: slog.LevelWarn, Msg: msgRoot}
	disabledLog  = entry{Level: slog.LevelWarn, Msg: msgDisabled}
)

func TestHardenerApply(t *testing.T) {
	tests := []struct {
		name       string
		sys        fakeSystem
		enabled    bool
		wantPrctl  []prctlCall
		wantRlimit []rlimitCall
		wantLog    []entry
	}{
		{
			name:       "enabled on Linux clears the flag, verifies it and zeroes RLIMIT_CORE",
			sys:        fakeSystem{euid: 1000},
			enabled:    true,
			wantPrctl:  setAndVerify,
			wantRlimit: coreToZero,
			wantLog:    []entry{hardenedLog},
		},
		{
			name:    "disabled warns and touches nothing",
			sys:     fakeSystem{euid: 1000},
			wantLog: []entry{disabledLog},
		},
		{
			name:    "not Linux logs one Debug line and touches nothing",
			sys:     fakeSystem{notLinux: true, euid: 1000},
			enabled: true,
			wantLog: []entry{{Level: slog.LevelDebug, Msg: msgNotLinux}},
		},
		{
			name:    "not Linux as root gives no root warning",
			sys:     fakeSystem{notLinux: true, euid: 0},
			enabled: true,
			wantLog: []entry{{Level: slog.LevelDebug, Msg: msgNotLinux}},
		},
		{
			name:       "root is warned about, and still hardened",
			sys:        fakeSystem{euid: 0},
			enabled:    true,
			wantPrctl:  setAndVerify,
			wantRlimit: coreToZero,
			wantLog:    []entry{rootLog, hardenedLog},
		},
		{
			name:    "root with hardening disabled gets both warnings",
			sys:     fakeSystem{euid: 0},
			wantLog: []entry{rootLog, disabledLog},
		},
		{
			name:       "a failing prctl warns with the errno and start-up goes on",
			sys:        fakeSystem{euid: 1000, setErr: syscall.EPERM},
			enabled:    true,
			wantPrctl:  []prctlCall{{prSetDumpable, 0}},
			wantRlimit: coreToZero,
			wantLog:    []entry{{Level: slog.LevelWarn, Msg: msgSetFailed, Errno: int64(syscall.EPERM)}},
		},
		{
			name:       "a panicking prctl warns and does not panic out",
			sys:        fakeSystem{euid: 1000, setPanics: true},
			enabled:    true,
			wantPrctl:  []prctlCall{{prSetDumpable, 0}},
			wantRlimit: coreToZero,
			wantLog:    []entry{{Level: slog.LevelWarn, Msg: msgSetFailed}},
		},
		{
			name:       "a verification that reads back 1 warns",
			sys:        fakeSystem{euid: 1000, getValue: 1},
			enabled:    true,
			wantPrctl:  setAndVerify,
			wantRlimit: coreToZero,
			wantLog:    []entry{{Level: slog.LevelWarn, Msg: msgStillDumpable}},
		},
		{
			name:       "a verification that reads back 2 (suid_dumpable) warns",
			sys:        fakeSystem{euid: 1000, getValue: 2},
			enabled:    true,
			wantPrctl:  setAndVerify,
			wantRlimit: coreToZero,
			wantLog:    []entry{{Level: slog.LevelWarn, Msg: msgStillDumpable}},
		},
		{
			name:       "a verification that fails warns with the errno",
			sys:        fakeSystem{euid: 1000, getErr: syscall.EINVAL},
			enabled:    true,
			wantPrctl:  setAndVerify,
			wantRlimit: coreToZero,
			wantLog:    []entry{{Level: slog.LevelWarn, Msg: msgVerifyFailed, Errno: int64(syscall.EINVAL)}},
		},
		{
			name:       "a failing setrlimit warns with the errno after hardening",
			sys:        fakeSystem{euid: 1000, rlimitErr: syscall.EPERM},
			enabled:    true,
			wantPrctl:  setAndVerify,
			wantRlimit: coreToZero,
			wantLog:    []entry{hardenedLog, {Level: slog.LevelWarn, Msg: msgCoreLimit, Errno: int64(syscall.EPERM)}},
		},
		{
			name:       "a panicking setrlimit warns and does not panic out",
			sys:        fakeSystem{euid: 1000, rlimitPanic: true},
			enabled:    true,
			wantPrctl:  setAndVerify,
			wantRlimit: coreToZero,
			wantLog:    []entry{hardenedLog, {Level: slog.LevelWarn, Msg: msgCoreLimit}},
		},
		{
			name:       "a panicking geteuid gives no root warning and hardening goes on",
			sys:        fakeSystem{euidPanics: true},
			enabled:    true,
			wantPrctl:  setAndVerify,
			wantRlimit: coreToZero,
			wantLog:    []entry{hardenedLog},
		},
		{
			name:       "GOTRACEBACK=crash is warned about, since no core dump will be written",
			sys:        fakeSystem{euid: 1000, env: map[string]string{"GOTRACEBACK": "crash"}},
			enabled:    true,
			wantPrctl:  setAndVerify,
			wantRlimit: coreToZero,
			wantLog:    []entry{hardenedLog, {Level: slog.LevelWarn, Msg: msgTracebackCrash}},
		},
		{
			name:    "GOTRACEBACK=crash is not warned about when hardening is disabled",
			sys:     fakeSystem{euid: 1000, env: map[string]string{"GOTRACEBACK": "crash"}},
			wantLog: []entry{disabledLog},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := logtest.New()
			tt.sys.hardener(&sync.Once{}).apply(tt.enabled, slog.New(rec))
			if diff := cmp.Diff(tt.wantPrctl, tt.sys.prctlCalls); diff != "" {
				t.Errorf("prctl calls (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantRlimit, tt.sys.rlimitCalls); diff != "" {
				t.Errorf("setrlimit calls (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantLog, logged(rec)); diff != "" {
				t.Errorf("log (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHardenerApplyFirstCallWins(t *testing.T) {
	tests := []struct {
		name          string
		first, second bool
		wantPrctl     []prctlCall
		wantLog       []entry
	}{
		{name: "enabled then enabled", first: true, second: true, wantPrctl: setAndVerify, wantLog: []entry{hardenedLog}},
		{name: "enabled then disabled", first: true, second: false, wantPrctl: setAndVerify, wantLog: []entry{hardenedLog}},
		{name: "disabled then enabled", first: false, second: true, wantLog: []entry{disabledLog}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sys := &fakeSystem{euid: 1000}
			rec := logtest.New()
			once := &sync.Once{}
			sys.hardener(once).apply(tt.first, slog.New(rec))
			sys.hardener(once).apply(tt.second, slog.New(rec))
			if diff := cmp.Diff(tt.wantPrctl, sys.prctlCalls); diff != "" {
				t.Errorf("prctl calls (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantLog, logged(rec)); diff != "" {
				t.Errorf("log (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHardenerApplyNilLogger(t *testing.T) {
	sys := &fakeSystem{euid: 0, setErr: syscall.EPERM}
	sys.hardener(&sync.Once{}).apply(true, nil)
	if len(sys.prctlCalls) != 1 {
		t.Errorf("prctl called %d times, want 1", len(sys.prctlCalls))
	}
}

func TestDumpableSeam(t *testing.T) {
	tests := []struct {
		name    string
		value   int
		err     error
		panics  bool
		want    bool
		wantErr error
	}{
		{name: "0 is not dumpable", value: 0, want: false},
		{name: "1 is dumpable", value: 1, want: true},
		{name: "2 is dumpable", value: 2, want: true},
		{name: "an error is wrapped", err: syscall.EINVAL, wantErr: syscall.EINVAL},
		{name: "a panic is an error", panics: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls []prctlCall
			got, err := dumpable(func(option int, arg2 uintptr) (int, error) {
				calls = append(calls, prctlCall{option, arg2})
				if tt.panics {
					panic("boom")
				}
				return tt.value, tt.err
			})
			if diff := cmp.Diff([]prctlCall{{prGetDumpable, 0}}, calls); diff != "" {
				t.Errorf("prctl calls (-want +got):\n%s", diff)
			}
			switch {
			case tt.panics:
				if err == nil {
					t.Fatal("dumpable() error = nil, want the panic as an error")
				}
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("dumpable() error = %v, want one wrapping %v", err, tt.wantErr)
				}
			default:
				if err != nil || got != tt.want {
					t.Fatalf("dumpable() = %v, %v; want %v, nil", got, err, tt.want)
				}
			}
		})
	}
}
