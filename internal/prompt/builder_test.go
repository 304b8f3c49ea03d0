package prompt

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/sandbox"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// syncBuffer is a log sink safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// newLogger returns a logger that writes text lines to the returned buffer.
func newLogger() (*slog.Logger, *syncBuffer) {
	var buf syncBuffer
	return slog.New(slog.NewTextHandler(&buf, nil)), &buf
}

// sessionInfo is a turn's info at a fixed time in Paris.
func sessionInfo(t *testing.T) agent.SessionInfo {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skipf("zone data: %v", err)
	}
	return agent.SessionInfo{ID: "chat-1", TimeZone: "Europe/Paris", Model: "m", Now: time.Date(2026, 7, 14, 10, 30, 0, 0, loc)}
}

func TestBuilderOperatorFiles(t *testing.T) {
	tests := []struct {
		name      string
		system    string // "" for no file, "/dir" for a directory in its place
		agents    string
		want      []string
		not       []string
		wantLog   string
		wantOrder bool
	}{
		{"no files", "", "", nil, []string{"## Operator instructions", "## Workspace instructions"}, "", false},
		{"SYSTEM.md only", "Always answer in French.", "", []string{"## Operator instructions (SYSTEM.md)\nAlways answer in French."}, []string{"## Workspace instructions"}, "", false},
		{"AGENTS.md only", "", "The repo uses tabs.", []string{"## Workspace instructions (AGENTS.md)\nThe repo uses tabs."}, []string{"## Operator instructions"}, "", false},
		{"both, operator first", "Be brief.", "Run make test.", []string{"Be brief.", "Run make test."}, nil, "", true},
		{"empty file", "  \n", "", nil, []string{"## Operator instructions"}, "", false},
		{"unreadable", "/dir", "Still here.", []string{"Still here."}, []string{"## Operator instructions"}, "cannot read an instruction file", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			agentDir, workspace := t.TempDir(), t.TempDir()
			writeInstructions(t, filepath.Join(agentDir, SystemFile), tt.system)
			writeInstructions(t, filepath.Join(workspace, AgentsFile), tt.agents)
			logger, logs := newLogger()
			b := NewBuilder(agentDir, workspace, logger)
			got := b.SystemPrompt(sessionInfo(t), []string{"bash"})
			if !strings.Contains(got, "This chat's time zone is Europe/Paris.") {
				t.Errorf("prompt lacks the zone; its zone line is %q", lineWith(got, "time zone is"))
			}
			checkHolds(t, got, tt.want, tt.not)
			if tt.wantOrder && strings.Index(got, tt.want[0]) > strings.Index(got, tt.want[1]) {
				t.Error("AGENTS.md comes before SYSTEM.md")
			}
			if tt.wantLog != "" {
				b.SystemPrompt(sessionInfo(t), nil)
				if n := strings.Count(logs.String(), tt.wantLog); n != 1 {
					t.Errorf("the problem was logged %d times over two turns, want once", n)
				}
			} else if logs.String() != "" {
				t.Errorf("unexpected log: %s", logs.String())
			}
		})
	}
}

// writeInstructions writes text to path; "" writes nothing and "/dir" makes
// a directory there.
func writeInstructions(t *testing.T, path, text string) {
	t.Helper()
	switch text {
	case "":
		return
	case "/dir":
		if err := os.Mkdir(path, 0o700); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestBuilderFreshEachTurn checks that edits, removals and new files show
// from the next turn on.
func TestBuilderFreshEachTurn(t *testing.T) {
	agentDir, workspace := t.TempDir(), t.TempDir()
	path := filepath.Join(agentDir, SystemFile)
	b := NewBuilder(agentDir, workspace, nil)
	info := sessionInfo(t)
	steps := []struct {
		name  string
		write string // "-" removes the file
		want  string
		not   string
	}{
		{"missing", "-", "", "## Operator instructions"},
		{"created", "first version", "first version", ""},
		{"edited, longer", "second, longer version", "second, longer version", "first version"},
		{"edited, same size", "third, longer  version", "third, longer  version", "second"},
		{"removed", "-", "", "version"},
	}
	for i, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if st.write == "-" {
				os.Remove(path)
			} else {
				writeInstructions(t, path, st.write)
				// Give every version its own modification time.
				mtime := time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC)
				if err := os.Chtimes(path, mtime, mtime); err != nil {
					t.Fatal(err)
				}
			}
			got := b.SystemPrompt(info, nil)
			if st.want != "" && !strings.Contains(got, st.want) {
				t.Errorf("prompt lacks %q", st.want)
			}
			if st.not != "" && strings.Contains(got, st.not) {
				t.Errorf("prompt holds %q", st.not)
			}
		})
	}
}

// TestBuilderLongFile checks that a file over the limit is cut with a note
// and a warning.
func TestBuilderLongFile(t *testing.T) {
	workspace := t.TempDir()
	// Twice the limit in bytes, with the limit falling inside a character.
	long := "a" + strings.Repeat("é", MaxInstructionBytes)
	writeInstructions(t, filepath.Join(workspace, AgentsFile), long)
	logger, logs := newLogger()
	got := NewBuilder("", workspace, logger).SystemPrompt(sessionInfo(t), nil)
	if !strings.Contains(got, "the rest of AGENTS.md is cut") || strings.Contains(got, "\uFFFD") {
		t.Error("the long file is not cut cleanly with a note")
	}
	if len(got) > MaxInstructionBytes+8000 {
		t.Errorf("prompt has %d bytes, want the file cut near %d", len(got), MaxInstructionBytes)
	}
	if !strings.Contains(logs.String(), "longer than the limit") {
		t.Error("no warning for the long file")
	}
}

// fakePolicy prepares nothing; the prompt test starts no process.
type fakePolicy struct{}

func (fakePolicy) Prepare(req spawnpolicy.Request) (spawnpolicy.Context, error) {
	return spawnpolicy.Context{}, nil
}

// TestPromptWiredIntoAgent checks Builder.Prompt as the agent's system
// prompt: the request carries the session's zone, the tools and the
// operator's file, the same bytes on every turn; each user message starts
// with its time stamp, and each request starts with the one before.
func TestPromptWiredIntoAgent(t *testing.T) {
	agentDir, workspace := t.TempDir(), t.TempDir()
	writeInstructions(t, filepath.Join(agentDir, SystemFile), "Sign every answer with a cat.")
	b := NewBuilder(agentDir, workspace, nil)
	faux := agenttest.NewFauxProvider(agenttest.FauxText("hi"), agenttest.FauxText("hi again"))
	a, err := agent.New(faux, fakePolicy{}, nil, agent.WithWorkspace(workspace), agent.WithSystemPrompt(b.Prompt),
		agent.WithTools(echoTool{}), agent.WithMessageTimes())
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	s, err := a.Session(context.Background(), agent.SessionOptions{ID: "c", TimeZone: "Asia/Tokyo"})
	if err != nil {
		t.Fatal(err)
	}
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Skipf("zone data: %v", err)
	}
	for _, text := range []string{"hello", "and again"} {
		before := agent.TimeStamp(time.Now().In(tokyo), "Asia/Tokyo")
		if _, err := s.Prompt(context.Background(), []agent.Content{agent.Text(text)}, nil); err != nil {
			t.Fatal(err)
		}
		after := agent.TimeStamp(time.Now().In(tokyo), "Asia/Tokyo")
		reqs := faux.Requests()
		user := agent.TextOf(reqs[len(reqs)-1].Messages[len(reqs[len(reqs)-1].Messages)-1].Content)
		if user != before+"\n"+text && user != after+"\n"+text {
			t.Errorf("the user message is %q, want %q", user, before+"\n"+text)
		}
	}
	reqs := faux.Requests()
	system := reqs[0].System
	if reqs[1].System != system {
		t.Errorf("the system prompt changed from one turn to the next:\n%s\n---\n%s", system, reqs[1].System)
	}
	if diff := cmp.Diff(reqs[0].Messages, reqs[1].Messages[:len(reqs[0].Messages)]); diff != "" {
		t.Errorf("the second request does not start with the first's messages (-first +second):\n%s", diff)
	}
	for _, want := range []string{"This chat's time zone is Asia/Tokyo.", "You can call: echo.", "Sign every answer with a cat.", workspace} {
		if !strings.Contains(system, want) {
			t.Errorf("system prompt lacks %q", want)
		}
	}
}

// echoTool is a tool that is never called.
type echoTool struct{}

func (echoTool) Spec() agent.ToolSpec {
	return agent.ToolSpec{Name: "echo", Description: "echo", Parameters: []byte(`{"type":"object","properties":{}}`)}
}

func (echoTool) Execute(ctx context.Context, call *agent.Call) (agent.Result, error) {
	return agent.TextResult("echo"), nil
}

// TestBuilderWorkspaceFileThroughView checks that AGENTS.md, which the
// agent may write, is opened through the sandbox's view: a link to a file
// the view hides (a credentials file in the bot's home) is left out with a
// warning, a link within the workspace is followed, and a FIFO in its place
// is refused instead of blocking the prompt.
func TestBuilderWorkspaceFileThroughView(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox's view opens files with openat2, which only Linux has")
	}
	const hidden = "db:5432:app:app:hidden-password"
	home := t.TempDir()
	writeInstructions(t, filepath.Join(home, ".pgpass"), hidden)
	link := func(target string) func(t *testing.T, path string) {
		return func(t *testing.T, path string) {
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name    string
		plant   func(t *testing.T, path string)
		want    string
		warning string
	}{
		{"a link to a file the view hides", link(filepath.Join(home, ".pgpass")), "", "outside"},
		{"a link within the workspace", link("CLAUDE.md"), "Prefer small commits.", ""},
		{"a FIFO", func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "", "not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			workspace := t.TempDir()
			writeInstructions(t, filepath.Join(workspace, "CLAUDE.md"), "Prefer small commits.")
			tt.plant(t, filepath.Join(workspace, AgentsFile))
			view := &sandbox.View{Workspace: workspace, Temp: t.TempDir()}
			logger, logs := newLogger()
			got := NewBuilder("", workspace, logger, WithView(view)).SystemPrompt(sessionInfo(t), nil)
			if strings.Contains(got, hidden) {
				t.Fatal("the system prompt holds the hidden file's content")
			}
			if tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("the prompt lacks %q", tt.want)
			}
			if tt.warning != "" && !strings.Contains(logs.String(), tt.warning) {
				t.Errorf("no warning saying %q; the log:\n%s", tt.warning, logs.String())
			}
		})
	}
	t.Run("a FIFO without the view", func(t *testing.T) {
		workspace := t.TempDir()
		if err := syscall.Mkfifo(filepath.Join(workspace, AgentsFile), 0o600); err != nil {
			t.Fatal(err)
		}
		logger, logs := newLogger()
		NewBuilder("", workspace, logger).SystemPrompt(sessionInfo(t), nil)
		if !strings.Contains(logs.String(), "not a regular file") {
			t.Errorf("no warning for the FIFO; the log:\n%s", logs.String())
		}
	})
}
