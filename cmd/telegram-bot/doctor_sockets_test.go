package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/asusertest"
	"github.com/volcanic/telegram-agent/internal/openaitest"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// listenUnix creates a listening stream socket at path, with its mode set
// to mode whatever the umask, and closes it when the test ends.
func listenUnix(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// deadUnix leaves a socket file at path whose listener is closed, so a
// connect to it is refused (ECONNREFUSED).
func deadUnix(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// regularFile writes an empty regular file at path.
func regularFile(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o666); err != nil {
		t.Fatal(err)
	}
}

func TestFindReachableSockets(t *testing.T) {
	tests := []struct {
		name string
		// plant creates the files in dir and returns the places to search.
		plant func(t *testing.T, dir string) []socketPlace
		// want are the sockets found, in order: the base name, then
		// which place's gives and fix they carry.
		want []string
		// needsUnprivileged is why the case cannot run as root.
		needsUnprivileged string
	}{
		{
			name: "listening",
			plant: func(t *testing.T, dir string) []socketPlace {
				listenUnix(t, filepath.Join(dir, "s"), 0o755)
				return []socketPlace{{pattern: filepath.Join(dir, "s")}}
			},
			want: []string{"s gives 0, fix 0"},
		},
		{
			name: "listener closed",
			plant: func(t *testing.T, dir string) []socketPlace {
				deadUnix(t, filepath.Join(dir, "s"), 0o777)
				return []socketPlace{{pattern: filepath.Join(dir, "s")}}
			},
		},
		{
			name: "regular file named like a socket",
			plant: func(t *testing.T, dir string) []socketPlace {
				regularFile(t, filepath.Join(dir, "agent.1234"))
				return []socketPlace{{pattern: filepath.Join(dir, "agent.*")}}
			},
		},
		{
			name: "missing",
			plant: func(t *testing.T, dir string) []socketPlace {
				return []socketPlace{{pattern: filepath.Join(dir, "docker.sock")}}
			},
		},
		{
			name: "a pattern matching each kind",
			plant: func(t *testing.T, dir string) []socketPlace {
				listenUnix(t, filepath.Join(dir, "X0"), 0o777)
				deadUnix(t, filepath.Join(dir, "X1"), 0o777)
				regularFile(t, filepath.Join(dir, "X2"))
				listenUnix(t, filepath.Join(dir, "X3"), 0o777)
				return []socketPlace{{pattern: filepath.Join(dir, "X*")}}
			},
			want: []string{"X0 gives 0, fix 0", "X3 gives 0, fix 0"},
		},
		{
			name: "named twice through a link",
			plant: func(t *testing.T, dir string) []socketPlace {
				listenUnix(t, filepath.Join(dir, "s"), 0o777)
				if err := os.Symlink("s", filepath.Join(dir, "link")); err != nil {
					t.Fatal(err)
				}
				return []socketPlace{{pattern: filepath.Join(dir, "link")}, {pattern: filepath.Join(dir, "s")}}
			},
			want: []string{"link gives 0, fix 0"},
		},
		{
			name: "glob characters in the path",
			plant: func(t *testing.T, dir string) []socketPlace {
				listenUnix(t, filepath.Join(dir, "a[1]*"), 0o777)
				listenUnix(t, filepath.Join(dir, "a1b"), 0o777)
				return []socketPlace{{pattern: escapeGlob(filepath.Join(dir, "a[1]*"))}}
			},
			want: []string{"a[1]* gives 0, fix 0"},
		},
		{
			name: "mode 0",
			plant: func(t *testing.T, dir string) []socketPlace {
				listenUnix(t, filepath.Join(dir, "s"), 0)
				return []socketPlace{{pattern: filepath.Join(dir, "s")}}
			},
			needsUnprivileged: "root passes the socket's permission check; TestDoctorNamesReachableSockets refuses a mode 0 socket to the doctor run as uid 65534",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.needsUnprivileged != "" && os.Geteuid() == 0 {
				t.Skip(tt.needsUnprivileged)
			}
			dir := t.TempDir()
			places := tt.plant(t, dir)
			for i := range places {
				places[i].gives, places[i].fix = "gives "+strconv.Itoa(i), "fix "+strconv.Itoa(i)
			}
			var got []string
			for _, s := range findReachableSockets(context.Background(), places) {
				got = append(got, filepath.Base(s.path)+" "+s.gives+", "+s.fix)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("sockets found (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHostSocketPlacesFromEnvironment plants sockets where the bot's
// environment says its session keeps them: SSH_AUTH_SOCK, described as the
// ssh-agent though it lies in the runtime directory too, and
// XDG_RUNTIME_DIR, searched three levels deep. A relative SSH_AUTH_SOCK or
// XDG_RUNTIME_DIR is ignored.
func TestHostSocketPlacesFromEnvironment(t *testing.T) {
	run := t.TempDir()
	for _, d := range []string{"gnupg/d.k1/deeper", "ssh"} {
		if err := os.MkdirAll(filepath.Join(run, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"bus", "ssh/agent", "gnupg/d.k1/S.gpg-agent", "gnupg/d.k1/deeper/too-deep"} {
		listenUnix(t, filepath.Join(run, name), 0o700)
	}
	tests := []struct {
		name    string
		environ map[string]string
		want    map[string]string
	}{
		{
			name:    "SSH_AUTH_SOCK and XDG_RUNTIME_DIR",
			environ: map[string]string{"SSH_AUTH_SOCK": filepath.Join(run, "ssh/agent"), "XDG_RUNTIME_DIR": run},
			want: map[string]string{
				"ssh/agent":              "the ssh-agent of SSH_AUTH_SOCK: logs in and signs with the user's SSH keys",
				"bus":                    "a socket of the user's session (" + run + ")",
				"gnupg/d.k1/S.gpg-agent": "a socket of the user's session (" + run + ")",
			},
		},
		{
			name:    "a relative SSH_AUTH_SOCK and XDG_RUNTIME_DIR",
			environ: map[string]string{"SSH_AUTH_SOCK": "ssh/agent", "XDG_RUNTIME_DIR": "."},
			want:    map[string]string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Chdir(run)
			got := map[string]string{}
			for _, s := range findReachableSockets(context.Background(), hostSocketPlaces(os.Getuid(), tt.environ)) {
				// A relative pattern finds a relative path, which Rel
				// refuses to compare with run: made absolute (against run,
				// the working directory), a socket a relative variable
				// named counts as found.
				path, err := filepath.Abs(s.path)
				if err != nil {
					t.Fatal(err)
				}
				// The host's own sockets are not this test's.
				if rel, err := filepath.Rel(run, path); err == nil && !strings.HasPrefix(rel, "..") {
					got[rel] = s.gives
					if s.fix != fixSession {
						t.Errorf("%s: fix %q, want %q", rel, s.fix, fixSession)
					}
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("sockets found (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDoctorSocketsReport checks the doctor's section: one warning per
// reachable socket, naming what it gives and the fix, and "none reachable"
// without one.
func TestDoctorSocketsReport(t *testing.T) {
	dir := t.TempDir()
	listenUnix(t, filepath.Join(dir, "docker.sock"), 0o660)
	deadUnix(t, filepath.Join(dir, "dead.sock"), 0o777)
	docker := socketPlace{filepath.Join(dir, "docker.sock"), "the Docker API, root on the host", fixEngine}
	dead := socketPlace{filepath.Join(dir, "dead.sock"), "nothing", fixSession}
	tests := []struct {
		name         string
		places       []socketPlace
		wantWarnings []string
		wantLine     string
	}{
		{"none", []socketPlace{dead}, nil, "  none reachable ("},
		{"the Docker socket", []socketPlace{dead, docker}, []string{docker.pattern + " is open to the agent (the Docker API, root on the host): " + fixEngine},
			"  warning: " + docker.pattern + " is open to the agent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			r := &report{w: &out}
			doctorSockets(context.Background(), r, tt.places)
			if diff := cmp.Diff(tt.wantWarnings, r.warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			if !strings.Contains(out.String(), tt.wantLine) || len(r.problems) != 0 {
				t.Errorf("the output lacks %q, or has problems (%d):\n%s", tt.wantLine, len(r.problems), out.String())
			}
		})
	}
}

// TestDoctorNamesReachableSockets runs the built doctor, as uid 65534 when
// the tests run as root, with SSH_AUTH_SOCK and XDG_RUNTIME_DIR pointing at
// planted sockets: the ones it can connect to are named, one warning
// each; a socket whose listener closed, a regular file and a socket of
// mode 0 (which the doctor's user may not connect to) are not.
func TestDoctorNamesReachableSockets(t *testing.T) {
	bin := asusertest.PublicCopy(t, botBinary(t), 0o755)
	base := filepath.Dir(bin)
	run, home := filepath.Join(base, "run"), filepath.Join(base, "home")
	for _, d := range []string{run, home} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if asusertest.Needed() {
		if err := os.Chown(home, asusertest.UID, asusertest.GID); err != nil {
			t.Fatal(err)
		}
	}
	sockets := []struct {
		name      string
		plant     func(t *testing.T, path string)
		wantNamed string
	}{
		{"agent.sock", func(t *testing.T, p string) { listenUnix(t, p, 0o777) }, "the ssh-agent of SSH_AUTH_SOCK: logs in and signs with the user's SSH keys"},
		{"pipewire-0", func(t *testing.T, p string) { listenUnix(t, p, 0o777) }, "a socket of the user's session (" + run + ")"},
		{"closed", func(t *testing.T, p string) { deadUnix(t, p, 0o777) }, ""},
		{"S.not-a-socket", regularFile, ""},
		{"private", func(t *testing.T, p string) { listenUnix(t, p, 0) }, ""},
	}
	for _, s := range sockets {
		s.plant(t, filepath.Join(run, s.name))
	}
	tg := telegramtest.New(t)
	cmd := exec.Command(bin, "doctor")
	cmd.Dir = home
	cmd.Env = []string{
		"PATH=/usr/bin:/bin",
		"HOME=" + home,
		"TELEGRAM_BOT_TOKEN=" + tg.Token(),
		"TELEGRAM_ALLOWED_USER_IDS=42",
		"TELEGRAM_API_URL=" + tg.URL(),
		"OPENAI_BASE_URL=http://127.0.0.1:9/v1",
		"AGENT_DIR=" + filepath.Join(home, "data"),
		"WORKSPACE_DIR=" + filepath.Join(home, "workspace"),
		"SSH_AUTH_SOCK=" + filepath.Join(run, "agent.sock"),
		"XDG_RUNTIME_DIR=" + run,
	}
	if asusertest.Needed() {
		asusertest.Drop(cmd)
	}
	raw, _ := asusertest.CombinedOutput(t, cmd)
	out := string(raw)
	if !strings.Contains(out, "\nUnix sockets agent processes can connect to\n") {
		t.Fatalf("the doctor's output has no socket section:\n%s", out)
	}
	for _, s := range sockets {
		t.Run(s.name, func(t *testing.T) {
			path := filepath.Join(run, s.name)
			want := "  warning: " + path + " is open to the agent (" + s.wantNamed + "): " + fixSession + "\n"
			switch {
			case s.wantNamed != "" && !strings.Contains(out, want):
				t.Errorf("the doctor's output lacks %q:\n%s", want, out)
			case s.wantNamed == "" && strings.Contains(out, path):
				t.Errorf("the doctor names %s, which it cannot connect to:\n%s", path, out)
			}
		})
	}
	if strings.Contains(out, tg.Token()) {
		t.Error("the doctor printed the bot token")
	}
}

// TestBinaryWarnsOfReachableSockets starts the built bot with SSH_AUTH_SOCK
// naming a listening socket: its start-up log holds one warning naming it.
func TestBinaryWarnsOfReachableSockets(t *testing.T) {
	tg := telegramtest.New(t)
	oa := openaitest.New(t, openaitest.AllowUnscripted())
	sock := filepath.Join(t.TempDir(), "agent.sock")
	listenUnix(t, sock, 0o600)
	p := startBot(t, procEnv(tg, oa.URL(), t.TempDir(), t.TempDir(), "SSH_AUTH_SOCK="+sock))
	line := p.waitLog("agent processes can connect to these Unix sockets")
	want := sock + " (the ssh-agent of SSH_AUTH_SOCK: logs in and signs with the user's SSH keys)"
	if !strings.Contains(line, "level=WARN") || !strings.Contains(line, want) {
		t.Errorf("the start-up warning lacks %q at level WARN: %s", want, line)
	}
	p.waitLog("polling Telegram")
	if code, _ := p.terminate(); code != 0 {
		t.Errorf("exit %d, want 0; log:\n%s", code, p.log())
	}
}
