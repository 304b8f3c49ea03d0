package tools_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agent/tools"
	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// TestFileToolsRefuseAFIFO has the agent make a FIFO in the workspace
// (mkfifo) and point the in-process file tools at it. Opening a FIFO for
// reading waits for a writer, which no agent process is left to be once
// its call has ended: the bot's goroutine would wait in the kernel for
// ever, holding the chat's turn, beyond the reach of /stop. Each tool must
// answer that it is not a regular file instead (a hang here is the test
// binary's timeout).
func TestFileToolsRefuseAFIFO(t *testing.T) {
	f := newFixture(t, fixtureConfig{})
	if err := syscall.Mkfifo(filepath.Join(f.workspace, "pipe"), 0o600); err != nil {
		t.Fatal(err)
	}
	view := &sandbox.View{Workspace: f.workspace, Temp: t.TempDir()}
	for _, withView := range []bool{true, false} {
		var opts []tools.BashOption
		if withView {
			opts = append(opts, tools.WithView(view))
		}
		all := tools.All(opts...)
		read, edit := all[1], all[3]
		send := tools.NewSendFile(opts...)
		for _, tt := range []struct {
			name string
			tool agent.Tool
			args map[string]any
		}{
			{"read", read, map[string]any{"path": "pipe"}},
			{"edit", edit, map[string]any{"path": "pipe", "old_text": "a", "new_text": "b"}},
			{"send_file", send, map[string]any{"path": "pipe"}},
		} {
			name := tt.name
			if withView {
				name += " through the view"
			}
			t.Run(name, func(t *testing.T) {
				res := f.call(agent.WithFrontEnd(context.Background(), &fakeFileSender{}), t, tt.tool, jsonArgs(tt.args), nil)
				if text := resultText(res); !res.IsError || !strings.Contains(text, "not a regular file") {
					t.Errorf("result %q (error %v), want an error saying it is not a regular file", text, res.IsError)
				}
			})
		}
	}
}

// TestEditRefusesAHugeFile has the agent make a sparse file larger than
// edit takes (truncate -s costs it nothing, a terabyte would cost the bot
// its memory): edit must refuse it by its size, unread.
func TestEditRefusesAHugeFile(t *testing.T) {
	f := newFixture(t, fixtureConfig{})
	big, err := os.Create(filepath.Join(f.workspace, "big.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(17 << 20); err != nil {
		t.Fatal(err)
	}
	big.Close()
	edit := tools.All()[3]
	res := f.call(context.Background(), t, edit, jsonArgs(map[string]any{"path": "big.txt", "old_text": "a", "new_text": "b"}), nil)
	if text := resultText(res); !res.IsError || !strings.Contains(text, "larger than") {
		t.Errorf("result %q (error %v), want an error saying the file is too large", text, res.IsError)
	}
}

// TestReadOfAnEndlessLineStops has the agent make a sparse file of a
// terabyte behind a line of text (one truncate), so that read takes its
// first line for text and reads the rest as one line, and then stops the
// turn: the read must end with the turn's context, not when the terabyte
// has been read (a hang here is the test binary's timeout).
func TestReadOfAnEndlessLineStops(t *testing.T) {
	f := newFixture(t, fixtureConfig{})
	path := filepath.Join(f.workspace, "endless.txt")
	file, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := file.WriteString(strings.Repeat("text without a line break ", 2000)); err != nil {
		t.Fatal(err)
	}
	if err := file.Truncate(1 << 40); err != nil {
		file.Close()
		t.Skipf("needs a file system that holds a sparse file of 1 TiB: %v", err)
	}
	file.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	read := tools.All()[1]
	// The stop comes while the line is being read (reading the terabyte
	// takes minutes); the result is the cancellation.
	time.AfterFunc(200*time.Millisecond, cancel)
	res, err := read.Execute(ctx, &agent.Call{ID: "call-1", Arguments: json.RawMessage(jsonArgs(map[string]any{"path": "endless.txt"})), Context: f.session.ToolContext()})
	if err == nil {
		t.Errorf("read ended with a result (%d bytes), want the turn's cancellation", len(resultText(res)))
	}
}
