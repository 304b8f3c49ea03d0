package chaostest

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// killKind is how the supervisor ends the bot before a restart.
type killKind int

const (
	// killRandom is a SIGKILL at a random moment.
	killRandom killKind = iota
	// killJournal is a SIGKILL the moment the bot writes its inbound
	// journal (seen through inotify).
	killJournal
	// killTerm is a SIGTERM, a graceful shutdown.
	killTerm
	// killCompacting is a SIGKILL while the model streams a compaction
	// summary.
	killCompacting
	numKillKinds
)

func (k killKind) String() string {
	return [...]string{"random SIGKILL", "SIGKILL at a journal write", "SIGTERM", "SIGKILL while compacting"}[k]
}

// runtimeStats matches the bot's periodic Debug line.
var runtimeStats = regexp.MustCompile(`msg="runtime stats" goroutines=(\d+) heap_bytes=(\d+)`)

// statsSample is one "runtime stats" line of the bot.
type statsSample struct {
	at         time.Time
	goroutines int
	heap       int
}

// supervisor runs the bot, restarts it after a kill, and samples its
// memory and threads (from /proc) and goroutines (from its log).
type supervisor struct {
	t        *testing.T
	bin      string
	env      []string
	agentDir string
	rng      *lockedRand
	// compacting receives a value when the model is asked for a summary.
	compacting chan struct{}

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	logs   bytes.Buffer
	// restarts counts the restarts, byKind by how the bot was ended.
	restarts int
	byKind   [numKillKinds]int
	rss      int
	threads  int
	stats    []statsSample
	stopped  bool
}

func (s *supervisor) start() {
	s.t.Helper()
	cmd := exec.Command(s.bin, "run")
	cmd.Env = s.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pr, pw, err := os.Pipe()
	if err != nil {
		s.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	pw.Close()
	exited := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			s.mu.Lock()
			s.logs.Write(line)
			s.logs.WriteByte('\n')
			if m := runtimeStats.FindSubmatch(line); m != nil {
				g, _ := strconv.Atoi(string(m[1]))
				h, _ := strconv.Atoi(string(m[2]))
				s.stats = append(s.stats, statsSample{at: time.Now(), goroutines: g, heap: h})
			}
			s.mu.Unlock()
		}
		pr.Close()
	}()
	go func() { cmd.Wait(); close(exited) }()
	go s.sample(cmd.Process.Pid, exited)
	s.mu.Lock()
	s.cmd, s.exited = cmd, exited
	s.mu.Unlock()
	s.note("started pid %d", cmd.Process.Pid)
}

// note writes a line about the run (a start, a kill, a full disk) into the
// bot's log, in the bot's own line format, so that the log kept as
// evidence shows what the bot went through between its lines.
func (s *supervisor) note(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(&s.logs, "time=%s level=INFO msg=%q source=chaostest\n", time.Now().UTC().Format(time.RFC3339Nano), fmt.Sprintf(format, args...))
}

// sample records the process's peak VmRSS and thread count every second.
func (s *supervisor) sample(pid int, exited chan struct{}) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-exited:
			return
		case <-tick.C:
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue
		}
		for line := range strings.SplitSeq(string(data), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			n, _ := strconv.Atoi(f[1])
			s.mu.Lock()
			switch f[0] {
			case "VmRSS:":
				s.rss = max(s.rss, n)
			case "Threads:":
				s.threads = max(s.threads, n)
			}
			s.mu.Unlock()
		}
	}
}

// restart ends the bot (SIGTERM when graceful, else SIGKILL to its
// process group, as a crash would leave it) and starts it again.
//
//lint:ignore U1000 the disk-full run (chaostest/diskfull_test.go) restarts through it.
func (s *supervisor) restart(graceful bool) {
	if graceful {
		s.kill(killTerm)
	} else {
		s.kill(killRandom)
	}
}

// kill ends the bot as kind says and starts it again, as a supervisor
// would. A targeted kill whose moment does not come within a minute (no
// journal write, no compaction) falls back to a random one, and is counted
// as such. It returns the kind that was done.
func (s *supervisor) kill(kind killKind) killKind {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.mu.Unlock()
	switch kind {
	case killJournal:
		if ok, err := waitForWrite(s.agentDir, "inbound", time.Minute); err != nil {
			s.t.Errorf("watching the journal: %v", err)
			kind = killRandom
		} else if !ok {
			kind = killRandom
		}
	case killCompacting:
		select {
		case <-s.compacting: // a stale one, from before
		default:
		}
		select {
		case <-s.compacting:
			// The summary streams for a few hundred milliseconds.
			time.Sleep(s.rng.dur(150 * time.Millisecond))
		case <-time.After(time.Minute):
			kind = killRandom
		}
	}
	s.note("ending pid %d: %s", cmd.Process.Pid, kind)
	if kind == killTerm {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			s.t.Errorf("the bot did not exit within 30s of SIGTERM")
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	} else {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
	s.mu.Lock()
	s.restarts++
	s.byKind[kind]++
	s.mu.Unlock()
	s.start()
	return kind
}

// waitForWrite waits up to timeout for a file of dir whose name starts
// with prefix to be written, created or renamed into place, and reports
// whether one was.
func waitForWrite(dir, prefix string, timeout time.Duration) (bool, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return false, fmt.Errorf("inotify: %w", err)
	}
	defer unix.Close(fd)
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_MODIFY|unix.IN_CREATE|unix.IN_MOVED_TO); err != nil {
		return false, fmt.Errorf("watching %s: %w", dir, err)
	}
	buf := make([]byte, 64*1024)
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 100)
		if errors.Is(err, unix.EINTR) || n == 0 {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("poll: %w", err)
		}
		k, err := unix.Read(fd, buf)
		if errors.Is(err, unix.EAGAIN) {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("reading inotify: %w", err)
		}
		for off := 0; off+unix.SizeofInotifyEvent <= k; {
			nameLen := int(binary.NativeEndian.Uint32(buf[off+12:]))
			name := strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+nameLen]), "\x00")
			if strings.HasPrefix(name, prefix) {
				return true, nil
			}
			off += unix.SizeofInotifyEvent + nameLen
		}
	}
	return false, nil
}

// stopFinal ends the run with SIGTERM; it is safe to call twice.
func (s *supervisor) stopFinal() {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return
	}
	s.stopped = true
	cmd, exited := s.cmd, s.exited
	s.mu.Unlock()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		s.t.Errorf("the bot did not exit within 30s of SIGTERM")
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
}

func (s *supervisor) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.String()
}

func (s *supervisor) peakRSS() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rss
}

func (s *supervisor) peakThreads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.threads
}

// restartCounts returns the restarts by kind.
func (s *supervisor) restartCounts() [numKillKinds]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byKind
}

// runtimeSamples returns the bot's "runtime stats" lines so far.
func (s *supervisor) runtimeSamples() []statsSample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]statsSample(nil), s.stats...)
}
