package sandbox_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// fileView is a view over a fresh workspace, and a directory beside it
// that the view does not grant, holding a secret file.
type fileView struct {
	view      sandbox.View
	workspace string
	secret    string
}

const secretContent = "the bot's state"

func newFileView(t *testing.T) fileView {
	t.Helper()
	root := t.TempDir()
	ws := filepath.Join(root, "workspace")
	hidden := filepath.Join(root, "data")
	for _, d := range []string{ws, hidden, filepath.Join(root, "tmp")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	secret := filepath.Join(hidden, "jobs.json")
	if err := os.WriteFile(secret, []byte(secretContent), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	return fileView{
		view:      sandbox.View{Workspace: ws, Temp: filepath.Join(root, "tmp"), System: []string{"/usr", "/etc"}},
		workspace: ws,
		secret:    secret,
	}
}

// TestOpenFileView checks what the in-process file tools may open.
func TestOpenFileView(t *testing.T) {
	fv := newFileView(t)
	ws := fv.workspace
	mustSymlink(t, fv.secret, filepath.Join(ws, "to-secret"))
	mustSymlink(t, "../data/jobs.json", filepath.Join(ws, "relative-to-secret"))
	mustSymlink(t, "/etc/hostname", filepath.Join(ws, "to-etc"))
	mustSymlink(t, "/proc/self/environ", filepath.Join(ws, "to-environ"))
	other := os.Getppid()
	tests := []struct {
		name    string
		path    string
		flag    int
		wantErr error
	}{
		{name: "a workspace file", path: filepath.Join(ws, "notes.txt")},
		{name: "a new workspace file", path: filepath.Join(ws, "new.txt"), flag: os.O_WRONLY | os.O_CREATE},
		{name: "a system file, read", path: "/etc/hostname"},
		{name: "a system file, written", path: "/etc/hostname", flag: os.O_WRONLY, wantErr: sandbox.ErrOutsideView},
		{name: "the hidden file", path: fv.secret, wantErr: sandbox.ErrOutsideView},
		{name: "dot-dot out of the workspace", path: ws + "/../data/jobs.json", wantErr: sandbox.ErrOutsideView},
		{name: "an absolute link out of the view", path: filepath.Join(ws, "to-secret"), wantErr: sandbox.ErrOutsideView},
		{name: "a relative link out of the view", path: filepath.Join(ws, "relative-to-secret"), wantErr: sandbox.ErrOutsideView},
		{name: "a link out of the view, written", path: filepath.Join(ws, "to-secret"), flag: os.O_WRONLY | os.O_TRUNC, wantErr: sandbox.ErrOutsideView},
		{name: "a link into a read-only tree, read", path: filepath.Join(ws, "to-etc")},
		{name: "a link into a read-only tree, written", path: filepath.Join(ws, "to-etc"), flag: os.O_WRONLY, wantErr: sandbox.ErrOutsideView},
		{name: "a link to the bot's own environ", path: filepath.Join(ws, "to-environ"), wantErr: sandbox.ErrProcessEntry},
		{name: "the bot's own environ", path: "/proc/self/environ", wantErr: sandbox.ErrProcessEntry},
		{name: "the bot's environ by pid", path: "/proc/" + strconv.Itoa(os.Getpid()) + "/environ", wantErr: sandbox.ErrProcessEntry},
		{name: "another process's environ", path: "/proc/" + strconv.Itoa(other) + "/environ", wantErr: sandbox.ErrProcessEntry},
		{name: "a process entry through /proc/net", path: "/proc/net/tcp", wantErr: sandbox.ErrProcessEntry},
		// /dev is in every view, read and written: its links to the bot's
		// own descriptors (its log on stderr, its stdin) lead to
		// /proc/self/fd magic links, which are never followed.
		{name: "the bot's stderr through /dev/stderr", path: "/dev/stderr", flag: os.O_WRONLY | os.O_APPEND, wantErr: sandbox.ErrOutsideView},
		{name: "the bot's stderr through /dev/fd", path: "/dev/fd/2", flag: os.O_WRONLY, wantErr: sandbox.ErrOutsideView},
		{name: "the bot's stdin through /dev/stdin", path: "/dev/stdin", wantErr: sandbox.ErrOutsideView},
		{name: "a descriptor through /proc/self/fd", path: "/proc/self/fd/2", flag: os.O_WRONLY, wantErr: sandbox.ErrProcessEntry},
		{name: "the null device", path: "/dev/null", flag: os.O_WRONLY},
		{name: "a kernel file", path: "/proc/cpuinfo"},
		{name: "a relative path", path: "notes.txt", wantErr: sandbox.ErrOutsideView},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := fv.view.OpenFile(tt.path, tt.flag, 0o644)
			if err == nil {
				f.Close()
			}
			if tt.wantErr == nil && err != nil {
				t.Errorf("OpenFile(%s): %v, want it opened", tt.path, err)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("OpenFile(%s): %v, want %v", tt.path, err, tt.wantErr)
			}
		})
	}
	if data, _ := os.ReadFile(fv.secret); string(data) != secretContent {
		t.Errorf("the hidden file was changed to %d bytes", len(data))
	}
}

// TestOpenFileRacingSymlink swaps a workspace path between a plain file
// and a symbolic link to the hidden file as fast as it can while the view
// opens it, for reading and for writing: no open may ever reach the hidden
// file, whichever side of the swap it lands on.
func TestOpenFileRacingSymlink(t *testing.T) {
	fv := newFileView(t)
	target := filepath.Join(fv.workspace, "race")
	plain := filepath.Join(fv.workspace, "plain")
	link := filepath.Join(fv.workspace, "link")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			_ = os.WriteFile(plain, []byte("plain"), 0o644)
			_ = os.Symlink(fv.secret, link)
			if i%2 == 0 {
				_ = os.Rename(plain, target)
			} else {
				_ = os.Rename(link, target)
			}
		}
	})
	const rounds = 5000
	var opened, refused int
	for i := range rounds {
		flag := os.O_RDONLY
		if i%2 == 1 {
			flag = os.O_RDWR
		}
		f, err := fv.view.OpenFile(target, flag, 0)
		if err != nil {
			refused++
			continue
		}
		data, _ := io.ReadAll(f)
		f.Close()
		opened++
		if string(data) == secretContent {
			t.Fatalf("round %d: the view opened the hidden file through the swapped link", i)
		}
	}
	close(stop)
	wg.Wait()
	if data, _ := os.ReadFile(fv.secret); string(data) != secretContent {
		t.Errorf("the hidden file was changed to %d bytes", len(data))
	}
	if opened == 0 || refused == 0 {
		t.Skipf("the swap never raced the opens (%d opened, %d refused): nothing was shown", opened, refused)
	}
	t.Logf("%d opens reached the plain file, %d were refused at the link", opened, refused)
}

// TestResolveAndOpenDir checks the view check send_file will make, and the
// directory the write tool creates files in.
func TestResolveAndOpenDir(t *testing.T) {
	fv := newFileView(t)
	mustSymlink(t, filepath.Join(fv.workspace, "notes.txt"), filepath.Join(fv.workspace, "alias"))
	got, err := fv.view.Resolve(filepath.Join(fv.workspace, "alias"), false)
	if err != nil || got != filepath.Join(fv.workspace, "notes.txt") {
		t.Errorf("Resolve(alias) = %q, %v; want the notes file", got, err)
	}
	if got, err := fv.view.Resolve(filepath.Join(fv.workspace, "sub", "new.txt"), true); err == nil {
		t.Errorf("Resolve of a file in a missing folder = %q, want an error", got)
	}
	if _, err := fv.view.Resolve(fv.secret, false); !errors.Is(err, sandbox.ErrOutsideView) {
		t.Errorf("Resolve(hidden) = %v, want ErrOutsideView", err)
	}
	d, err := fv.view.OpenDir(filepath.Join(fv.workspace, "a", "b"), true)
	if err != nil {
		t.Fatalf("OpenDir(create): %v", err)
	}
	d.Close()
	if info, err := os.Stat(filepath.Join(fv.workspace, "a", "b")); err != nil || !info.IsDir() {
		t.Errorf("OpenDir did not make a/b: %v", err)
	}
	if _, err := fv.view.OpenDir("/etc", false); !errors.Is(err, sandbox.ErrOutsideView) {
		t.Errorf("OpenDir(/etc) = %v, want ErrOutsideView (read-only)", err)
	}
	if _, err := fv.view.OpenDir(filepath.Join(filepath.Dir(fv.secret), "x"), true); !errors.Is(err, sandbox.ErrOutsideView) {
		t.Errorf("OpenDir(hidden/x) = %v, want ErrOutsideView", err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
