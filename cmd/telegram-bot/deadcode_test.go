package main

import (
	"bufio"
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBinaryKeepsMethodsDeadCodeEliminated links the bot with the linker's
// dependency dump and fails if any reachable function calls a method by a
// name only known at run time (reflect.Value.MethodByName or Method(i), as
// text/template's Execute does): the linker then keeps every exported
// method of every reachable type, about 2 MB of the stripped binary, and
// the binary's pages are most of the bot's resident memory
// (docs/performance.md, Chat host).
func TestBinaryKeepsMethodsDeadCodeEliminated(t *testing.T) {
	if testing.Short() {
		t.Skip("links the binary")
	}
	cmd := exec.Command("go", "build", "-ldflags=-dumpdep", "-o", filepath.Join(t.TempDir(), "telegram-bot"), ".")
	var dump bytes.Buffer
	cmd.Stderr = &dump
	if err := cmd.Run(); err != nil {
		t.Fatalf("go build -ldflags=-dumpdep: %v\n%s", err, tail(dump.String(), 20))
	}
	// Each line is "caller -> callee"; a flagged function carries
	// <ReflectMethod> on its side of the arrow. The line that marks it
	// first names who reaches it.
	sc := bufio.NewScanner(&dump)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		from, to, ok := strings.Cut(sc.Text(), " -> ")
		if ok && strings.Contains(to, "<ReflectMethod>") && !strings.Contains(from, "<ReflectMethod>") {
			t.Errorf("a method is called by a run-time name, so the linker keeps every exported method: %s", sc.Text())
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// tail returns s's last n lines.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
