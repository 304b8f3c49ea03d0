package agent

import (
	"context"

	"log/slog"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// faultyFile wraps a transcript's file and fails the writes, syncs and
// truncates whose numbers (from 1) it lists. A failed write first writes
// half of its bytes, as a full disk does.
type faultyFile struct {
	transcriptFile

	mu                           sync.Mutex
	writes, syncs, truncates     int
	failWrite, failSync, failCut map[int]bool
	alwaysFailCut                bool
}

func (f *faultyFile) Write(p []byte) (int, error) {
	f.mu.Lock()
	f.writes++
	fail := f.failWrite[f.writes]
	f.mu.Unlock()
	if !fail {
		return f.transcriptFile.Write(p)
	}
	n, err := f.transcriptFile.Write(p[:len(p)/2])
	if err != nil {
		return n, err
	}
	return n, syscall.ENOSPC
}

func (f *faultyFile) Sync() error {
	f.mu.Lock()
	f.syncs++
	fail := f.failSync[f.syncs]
	f.mu.Unlock()
	if fail {
		return syscall.EIO
	}
	return f.transcriptFile.Sync()
}

func (f *faultyFile) Truncate(size int64) error {
	f.mu.Lock()
	f.truncates++
	fail := f.alwaysFailCut || f.failCut[f.truncates]
	f.mu.Unlock()
	if fail {
		return syscall.EIO
	}
	return f.transcriptFile.Truncate(size)
}

func TestTranscriptFailedAppend(t *testing.T) {
	tests := []struct {
		name string
		file *faultyFile
	}{
		{"short write", &faultyFile{failWrite: map[int]bool{2: true}}},
		{"failed sync", &faultyFile{failSync: map[int]bool{2: true}}},
		{"short write, cut fails once", &faultyFile{failWrite: map[int]bool{2: true}, failCut: map[int]bool{1: true}}},
		{"two short writes in a row", &faultyFile{failWrite: map[int]bool{2: true, 3: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.jsonl")
			logger := slog.New(slog.DiscardHandler)
			tr, _, err := openTranscript(path, logger)
			if err != nil {
				t.Fatal(err)
			}
			ff := tt.file
			ff.transcriptFile = tr.f
			tr.f = ff
			var kept []string
			for _, text := range []string{"a", "b", "c", "d"} {
				if err := tr.appendMessage(Message{Role: RoleUser, Content: []Content{Text(text)}}); err == nil {
					kept = append(kept, text)
				}
			}
			if len(kept) == 4 {
				t.Fatal("no append failed; the fault was not injected")
			}
			if err := tr.close(); err != nil {
				t.Fatal(err)
			}
			tr2, msgs, err := openTranscript(path, logger)
			if err != nil {
				t.Fatalf("reopening after a failed append: %v", err)
			}
			defer tr2.close()
			var got []string
			for _, m := range msgs {
				got = append(got, TextOf(m.Content))
			}
			if diff := cmp.Diff(kept, got); diff != "" {
				t.Errorf("reloaded messages (-want +got):\n%s", diff)
			}
		})
	}
}

// TestToolResultKeptWhenTranscriptFails checks that a tool result the
// transcript could not take is still in the history, so the next request is
// valid, and that the turn reports the failure.
func TestToolResultKeptWhenTranscriptFails(t *testing.T) {
	echo := newTool("echo", "", func(ctx context.Context, call *Call) (Result, error) {
		return TextResult("ok"), nil
	})
	dir := t.TempDir()
	faux := NewFauxProvider(
		FauxToolCalls(ToolCall{ID: "c1", Name: "echo", Arguments: `{}`}, ToolCall{ID: "c2", Name: "echo", Arguments: `{}`}),
		FauxText("after"),
	)
	a := newTestAgent(t, faux, WithTools(echo), WithSessionDir(dir))
	s := openSession(t, a, SessionOptions{ID: "f"})
	// Writes: 1 the user message, 2 the assistant's calls, 3 c1's result.
	s.tr.f = &faultyFile{transcriptFile: s.tr.f, failWrite: map[int]bool{3: true}}

	var log eventLog
	if _, err := s.Prompt(context.Background(), []Content{Text("go")}, log.add); err == nil {
		t.Fatal("Prompt succeeded; want the transcript failure")
	}
	if !contains(kindsOf(log.all()), EventError) {
		t.Errorf("events %v hold no EventError", kindsOf(log.all()))
	}
	wantCalls := []string{"c1", "c2"}
	if diff := cmp.Diff(wantCalls, answeredCalls(s.Messages())); diff != "" {
		t.Errorf("answered calls in memory (-want +got):\n%s", diff)
	}

	if _, err := s.Prompt(context.Background(), []Content{Text("again")}, nil); err != nil {
		t.Fatalf("the next turn failed: %v", err)
	}
	reqs := faux.Requests()
	if diff := cmp.Diff(wantCalls, answeredCalls(reqs[len(reqs)-1].Messages)); diff != "" {
		t.Errorf("answered calls in the next request (-want +got):\n%s", diff)
	}

	s.Close()
	s2 := openSession(t, a, SessionOptions{ID: "f"})
	if diff := cmp.Diff(wantCalls, answeredCalls(s2.Messages())); diff != "" {
		t.Errorf("answered calls after reopening (-want +got):\n%s", diff)
	}
}

// answeredCalls lists the ids of the tool calls of msgs that have a result
// right after their assistant message, in order.
func answeredCalls(msgs []Message) []string {
	var out []string
	for i, m := range msgs {
		if m.Role != RoleAssistant {
			continue
		}
		results := map[string]bool{}
		for _, r := range msgs[i+1:] {
			if r.Role != RoleTool {
				break
			}
			results[r.ToolCallID] = true
		}
		for _, c := range m.ToolCalls {
			if results[c.ID] {
				out = append(out, c.ID)
			}
		}
	}
	return out
}
