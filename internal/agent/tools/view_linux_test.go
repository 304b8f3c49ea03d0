package tools_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agent/tools"
	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// TestFileToolsView checks that read, write and edit confined to a view
// reach the workspace and refuse the bot's state (directly and through a
// link), a read-only system file for writing, and the bot's own /proc
// entries (send_file alike); and that an edit through a link inside the workspace still
// replaces the link's target.
func TestFileToolsView(t *testing.T) {
	f := newFixture(t, fixtureConfig{})
	hidden := t.TempDir()
	state := filepath.Join(hidden, "jobs.json")
	writeFile(t, state, "[]", 0o644)
	view := &sandbox.View{Workspace: f.workspace, Temp: t.TempDir(), System: []string{"/etc", "/usr"}}
	all := tools.All(tools.WithView(view))
	read, write, edit := all[1], all[2], all[3]
	sender := &fakeFileSender{}
	send := tools.NewSendFile(tools.WithView(view))
	writeFile(t, filepath.Join(f.workspace, "notes.txt"), "alpha\n", 0o600)
	if err := os.Symlink(state, filepath.Join(f.workspace, "state-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("notes.txt", filepath.Join(f.workspace, "alias")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		tool    agent.Tool
		args    map[string]any
		wantErr string // "" for success, else a part of the error text
	}{
		{name: "read a workspace file", tool: read, args: map[string]any{"path": "notes.txt"}},
		{name: "write new folders and a file", tool: write, args: map[string]any{"path": "a/b/c.txt", "content": "x"}},
		{name: "edit through a link in the workspace", tool: edit, args: map[string]any{"path": "alias", "old_text": "alpha", "new_text": "beta"}},
		{name: "read the bot's state", tool: read, args: map[string]any{"path": state}, wantErr: "Outside the sandbox"},
		{name: "read the bot's state through a link", tool: read, args: map[string]any{"path": "state-link"}, wantErr: "Outside the sandbox"},
		{name: "write the bot's state through a link", tool: write, args: map[string]any{"path": "state-link", "content": "[1]"}, wantErr: "Outside the sandbox"},
		{name: "edit the bot's state", tool: edit, args: map[string]any{"path": state, "old_text": "[]", "new_text": "[1]"}, wantErr: "Outside the sandbox"},
		{name: "write next to the bot's state", tool: write, args: map[string]any{"path": filepath.Join(hidden, "new.json"), "content": "x"}, wantErr: "Outside the sandbox"},
		{name: "write a system file", tool: write, args: map[string]any{"path": "/etc/telegram-agent-test", "content": "x"}, wantErr: "Outside the sandbox"},
		{name: "read a system file", tool: read, args: map[string]any{"path": "/etc/hostname"}},
		{name: "read the bot's environ", tool: read, args: map[string]any{"path": "/proc/self/environ"}, wantErr: "/proc entry"},
		{name: "send a workspace file", tool: send, args: map[string]any{"path": "notes.txt"}},
		{name: "send the bot's state through a link", tool: send, args: map[string]any{"path": "state-link"}, wantErr: "Outside the sandbox"},
		{name: "send the bot's environ", tool: send, args: map[string]any{"path": "/proc/self/environ"}, wantErr: "/proc entry"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := f.call(agent.WithFrontEnd(context.Background(), sender), t, tt.tool, jsonArgs(tt.args), nil)
			text := resultText(res)
			switch {
			case tt.wantErr == "" && res.IsError:
				t.Errorf("error result %q, want success", text)
			case tt.wantErr != "" && (!res.IsError || !strings.Contains(text, tt.wantErr)):
				t.Errorf("result %q (error %v), want an error with %q", text, res.IsError, tt.wantErr)
			}
		})
	}
	if data, _ := os.ReadFile(state); string(data) != "[]" {
		t.Errorf("the bot's state was changed to %d bytes", len(data))
	}
	if data, _ := os.ReadFile(filepath.Join(f.workspace, "notes.txt")); string(data) != "beta\n" {
		t.Errorf("notes.txt = %q after the edit through the link, want beta", data)
	}
	if info, err := os.Lstat(filepath.Join(f.workspace, "alias")); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced by a file (%v)", err)
	}
	if info, err := os.Stat(filepath.Join(f.workspace, "notes.txt")); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("notes.txt lost its mode 0600 (%v)", err)
	}
}

// resultText joins a result's text content.
func resultText(r agent.Result) string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// TestSendFileView checks that send_file confined to a view sends what read
// may open and refuses the rest: the bot's state, directly and through a
// link, and a process's /proc entry.
func TestSendFileView(t *testing.T) {
	f := newFixture(t, fixtureConfig{})
	hidden := t.TempDir()
	state := filepath.Join(hidden, "jobs.json")
	writeFile(t, state, "[]", 0o644)
	writeFile(t, filepath.Join(f.workspace, "report.txt"), "fine\n", 0o644)
	if err := os.Symlink(state, filepath.Join(f.workspace, "state-link")); err != nil {
		t.Fatal(err)
	}
	view := &sandbox.View{Workspace: f.workspace, Temp: t.TempDir(), System: []string{"/etc", "/usr"}}
	sender := &fakeFileSender{}
	sendFile := tools.NewSendFile(tools.WithView(view))
	tests := []struct {
		path    string
		wantErr string
	}{
		{"report.txt", ""},
		{state, "Outside the sandbox"},
		{"state-link", "Outside the sandbox"},
		{"../" + filepath.Base(hidden) + "/jobs.json", "Outside the sandbox"},
		{"/proc/self/environ", "/proc entry"},
	}
	for _, tt := range tests {
		res := f.call(agent.WithFrontEnd(context.Background(), sender), t, sendFile, jsonArgs(map[string]any{"path": tt.path}), nil)
		text := resultText(res)
		switch {
		case tt.wantErr == "" && res.IsError:
			t.Errorf("send_file %s: error %q, want it sent", tt.path, text)
		case tt.wantErr != "" && (!res.IsError || !strings.Contains(text, tt.wantErr)):
			t.Errorf("send_file %s: %q (error %v), want an error with %q", tt.path, text, res.IsError, tt.wantErr)
		}
	}
	if len(sender.sent) != 1 || sender.sent[0].Name != "report.txt" {
		t.Errorf("sent %d file(s), want report.txt alone", len(sender.sent))
	}
}
