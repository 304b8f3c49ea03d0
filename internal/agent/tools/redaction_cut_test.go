package tools_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agent/tools"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/redactor"
)

// holdBackBound is more than the redactor's longest pattern for testSecret
// (no derived form is more than six bytes a byte of the value), so more
// than a progress snapshot can lag behind the output.
const holdBackBound = 6 * len(testSecret)

// xs returns the shell command that prints n bytes of 'x'.
func xs(n int) string {
	return fmt.Sprintf("head -c %d /dev/zero | tr '\\0' x", n)
}

// secretPart returns a description of the longest part of testSecret that
// s holds, and false when it holds none: a run of 8 bytes or more from
// anywhere in it, or a prefix or a suffix of 4 bytes or more. The
// description never holds the part itself.
func secretPart(s string) (string, bool) {
	for n := len(testSecret); n >= 4; n-- {
		if strings.Contains(s, testSecret[len(testSecret)-n:]) {
			return fmt.Sprintf("a %d-byte suffix", n), true
		}
		if strings.Contains(s, testSecret[:n]) {
			return fmt.Sprintf("a %d-byte prefix", n), true
		}
		if n < 8 {
			continue
		}
		for i := 1; i+n < len(testSecret); i++ {
			if strings.Contains(s, testSecret[i:i+n]) {
				return fmt.Sprintf("the %d bytes at offset %d", n, i), true
			}
		}
	}
	return "", false
}

// lastBytes returns the last n bytes of s, or s when it is shorter.
func lastBytes(s string, n int) string {
	return s[len(s)-min(n, len(s)):]
}

// snapshotOfEnd reports whether text is the tail (of limit bytes) of all
// of output but the redactor's hold-back, as a progress snapshot taken once
// the command printed everything is. The session redacts the snapshot
// again (RedactPartial), which may hold back a trailing run of the tail
// too: a text of "xxx" ends in a run that begins the base64 or base32 form
// of a piece of the secret.
func snapshotOfEnd(text, output string, limit int) bool {
	for h := range holdBackBound + 1 {
		if h > len(output) {
			break
		}
		tail := lastBytes(output[:len(output)-h], limit)
		if strings.HasPrefix(tail, text) && len(tail)-len(text) <= holdBackBound {
			return true
		}
	}
	return false
}

// TestSecretPart checks the leak detector itself on the parts it must
// find and on text it must pass.
func TestSecretPart(t *testing.T) {
	tests := []struct {
		name string
		text string
		want bool
	}{
		{name: "whole", text: "a " + testSecret + " b", want: true},
		{name: "31-byte suffix", text: "a" + testSecret[1:] + "xxxx", want: true},
		{name: "4-byte suffix", text: testSecret[len(testSecret)-4:] + "xxxx", want: true},
		{name: "4-byte prefix", text: "xxxx" + testSecret[:4], want: true},
		{name: "8 bytes inside", text: "x" + testSecret[10:18] + "x", want: true},
		{name: "7 bytes inside", text: "x" + testSecret[10:17] + "x", want: false},
		{name: "redacted", text: redactor.Token + strings.Repeat("x", 100), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, got := secretPart(tt.text); got != tt.want {
				t.Errorf("secretPart found a part: %v, want %v", got, tt.want)
			}
		})
	}
}

// cutCase is a command whose output the tail limit cuts, and that output
// redacted.
type cutCase struct {
	name, command, want string
}

// straddleCase prints the secret, without a newline, and then as many
// bytes of 'x' as leave only its last keep bytes inside the tail limit.
func straddleCase(name string, limit, keep int) cutCase {
	pad := limit - keep
	return cutCase{
		name:    name,
		command: fmt.Sprintf("{ tr -d '\\n' < secret.txt; %s; }", xs(pad)),
		want:    redactor.Token + strings.Repeat("x", pad),
	}
}

// TestBashTailCutInsideSecret runs commands whose output's tail limit cuts
// a secret in two, through a real session with the faux model, and checks
// that no part of the secret reaches the final result, any progress
// snapshot, the next model request or the saved full output: the tool
// redacts the stream before it keeps a tail or saves it.
func TestBashTailCutInsideSecret(t *testing.T) {
	limit := tools.DefaultMaxBytes
	n := len(testSecret)
	tests := []cutCase{
		// The review's command, head -c 51169 with the default limits: the
		// raw tail keeps all of the secret but its first byte.
		straddleCase("all but the first byte in the tail", limit, n-1),
		straddleCase("half in the tail", limit, n/2),
		straddleCase("the last four bytes in the tail", limit, 4),
		{
			// One line longer than the limit, the cut in the middle of the
			// secret inside it.
			name:    "a line longer than the limit",
			command: fmt.Sprintf("{ %s; tr -d '\\n' < secret.txt; %s; echo; }", xs(limit), xs(limit-n/2-1)),
			want:    strings.Repeat("x", limit) + redactor.Token + strings.Repeat("x", limit-n/2-1) + "\n",
		},
	}
	if got := len(tests[0].want) - len(redactor.Token); got != 51169 {
		t.Fatalf("the review's case prints %d bytes of x, want 51169", got)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, fixtureConfig{tools: []agent.Tool{tools.NewBash(tools.WithProgressInterval(5 * time.Millisecond))}})
			if err := os.WriteFile(filepath.Join(f.workspace, "secret.txt"), []byte(testSecret+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			// The command waits for a line on a FIFO once it printed its
			// output, so a progress snapshot of all of it (but the
			// redactor's hold-back) is seen before it ends. Opened
			// read-write, the FIFO never blocks its opener.
			fifo := filepath.Join(f.workspace, "ready.fifo")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatalf("mkfifo: %v", err)
			}
			release, err := os.OpenFile(fifo, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer release.Close()
			var once sync.Once
			releaseCommand := func() {
				once.Do(func() {
					if _, err := release.WriteString("go\n"); err != nil {
						t.Errorf("releasing the command: %v", err)
					}
				})
			}

			command := tt.command + "; read -r _ < ready.fifo"
			f.faux.Enqueue(agenttest.FauxToolCalls(agenttest.FauxCall("bash", bashArgs(command, 20))), agenttest.FauxText("done"))
			var mu sync.Mutex
			var texts []string
			var end *agent.Result
			covered := false
			_, err = f.session.Prompt(t.Context(), []agent.Content{agent.Text("run it")}, func(ev agent.Event) {
				mu.Lock()
				defer mu.Unlock()
				switch ev.Kind {
				case agent.EventToolUpdate:
					text := agent.TextOf(ev.Result.Content)
					texts = append(texts, "a progress snapshot: "+text)
					if snapshotOfEnd(text, tt.want, limit) {
						covered = true
						releaseCommand()
					}
				case agent.EventToolEnd:
					end = ev.Result
					texts = append(texts, "the final result: "+agent.TextOf(end.Content))
				}
			})
			// Whatever happened, the command must not wait for its timeout.
			releaseCommand()
			if err != nil {
				t.Fatalf("Prompt: %v", err)
			}
			if !covered {
				t.Errorf("no progress snapshot covered the output")
			}
			if end == nil {
				t.Fatalf("no end event")
			}
			reqs := f.faux.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d model requests, want 2", len(reqs))
			}
			for _, m := range reqs[1].Messages {
				texts = append(texts, "the next model request: "+agent.TextOf(m.Content))
			}
			path, _ := end.Details["full_output_path"].(string)
			if path != "" {
				full, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("reading the full output: %v", err)
				}
				texts = append(texts, "the full output file: "+string(full))
				if string(full) != tt.want {
					t.Errorf("the full output file holds %d bytes, want the redacted output (%d bytes)", len(full), len(tt.want))
				}
			}

			for _, text := range texts {
				where, body, _ := strings.Cut(text, ": ")
				if part, ok := secretPart(body); ok {
					t.Errorf("%s holds %s of testSecret", where, part)
				}
			}
			wantTruncated := len(tt.want) > limit
			if got := end.Details["truncated"]; got != wantTruncated {
				t.Errorf("Details[truncated] = %v, want %v", got, wantTruncated)
			}
			if got := end.Details["total_bytes"]; got != int64(len(tt.want)) {
				t.Errorf("Details[total_bytes] = %v, want the redacted output's %d", got, len(tt.want))
			}
			if wantTruncated && path == "" {
				t.Errorf("truncated, but no full output file")
			}
			if tail := strings.TrimSuffix(lastBytes(tt.want, limit), "\n"); !strings.HasPrefix(agent.TextOf(end.Content), tail+"\n\n") {
				t.Errorf("the final result does not start with the redacted output's last %d bytes", len(tail))
			}
		})
	}
}
