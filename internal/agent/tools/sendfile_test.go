package tools_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agent/tools"
)

// fakeFileSender records what send_file hands the chat host.
type fakeFileSender struct {
	mu       sync.Mutex
	sent     []tools.OutgoingFile
	scopes   []string
	err      error
	refusePh bool // a photo goes as a document, as the host does when Telegram refuses it
}

func (s *fakeFileSender) SendFile(_ context.Context, scope string, f tools.OutgoingFile) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return false, s.err
	}
	s.sent = append(s.sent, f)
	s.scopes = append(s.scopes, scope)
	return f.Photo && !s.refusePh, nil
}

func TestSendFile(t *testing.T) {
	f := newFixture(t, fixtureConfig{})
	ws := f.workspace
	big := filepath.Join(ws, "big.bin")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// A sparse file: 51 MB long, nothing written.
	if err := os.Truncate(big, 51<<20); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"chart.png":       pngBytes + "rest of the image",
		"anim.gif":        "GIF89a" + "\x00\x01",
		"notes.txt":       "token: " + testSecret + "\n",
		"blob.bin":        "\x00\x01" + base64.StdEncoding.EncodeToString([]byte(testSecret)) + "\x02",
		"clean.bin":       "\x00\x01\x02\x03",
		"empty.txt":       "",
		"dir/placeholder": "x",
	}
	for name, content := range files {
		path := name
		if !filepath.IsAbs(path) {
			path = filepath.Join(ws, name)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	type sent struct {
		Name, Caption, Data string
		Photo               bool
	}
	tests := []struct {
		name       string
		args       map[string]any
		wantResult string
		wantErr    bool
		wantSent   []sent
	}{
		{"photo", map[string]any{"path": "chart.png", "caption": "the chart"}, fmt.Sprintf("Sent photo chart.png (%d B) to the chat.", len(pngBytes+"rest of the image")), false,
			[]sent{{"chart.png", "the chart", pngBytes + "rest of the image", true}}},
		{"image as document", map[string]any{"path": "chart.png", "as_photo": false}, "Sent document chart.png", false,
			[]sent{{"chart.png", "", pngBytes + "rest of the image", false}}},
		{"gif as document", map[string]any{"path": "anim.gif"}, "Sent document anim.gif", false,
			[]sent{{"anim.gif", "", "GIF89a\x00\x01", false}}},
		{"text redacted", map[string]any{"path": "notes.txt", "caption": "key " + testSecret}, "secrets replaced with [REDACTED]", false,
			[]sent{{"notes.txt", "key [REDACTED]", "token: [REDACTED]\n", false}}},
		{"caption cut in UTF-16 units", map[string]any{"path": "clean.bin", "caption": strings.Repeat("😀", 600)}, "Sent document clean.bin", false,
			[]sent{{"clean.bin", strings.Repeat("😀", 511) + "…", "\x00\x01\x02\x03", false}}},
		{"binary without secret", map[string]any{"path": "clean.bin"}, "Sent document clean.bin (4 B) to the chat.", false,
			[]sent{{"clean.bin", "", "\x00\x01\x02\x03", false}}},
		{"binary with secret", map[string]any{"path": "blob.bin"}, "blob.bin is a binary file that holds a secret", true, nil},
		{"too large", map[string]any{"path": "big.bin"}, "larger than the 50 MB the Telegram Bot API accepts", true, nil},
		{"empty", map[string]any{"path": "empty.txt"}, "is empty", true, nil},
		{"directory", map[string]any{"path": "dir"}, "is a directory", true, nil},
		{"missing", map[string]any{"path": "nope.txt"}, "File not found", true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sender := &fakeFileSender{}
			res := f.call(agent.WithFrontEnd(t.Context(), sender), t, tools.NewSendFile(), jsonArgs(tt.args), nil)
			text := agent.TextOf(res.Content)
			if res.IsError != tt.wantErr || !strings.Contains(text, tt.wantResult) {
				t.Errorf("result %q (error %v), want %q (error %v)", text, res.IsError, tt.wantResult, tt.wantErr)
			}
			var got []sent
			for _, s := range sender.sent {
				got = append(got, sent{s.Name, s.Caption, string(s.Data), s.Photo})
			}
			if diff := cmp.Diff(tt.wantSent, got); diff != "" {
				t.Errorf("sent (-want +got):\n%s", diff)
			}
			for _, s := range sender.scopes {
				if s != "chat:1" {
					t.Errorf("sent to scope %q, want chat:1", s)
				}
			}
		})
	}
	data, err := os.ReadFile(filepath.Join(ws, "notes.txt"))
	if err != nil || !strings.Contains(string(data), testSecret) {
		t.Errorf("send_file changed the file it redacted (read error %v)", err)
	}
}

// TestSendFileFailures checks that a failed upload and a photo the host
// sent as a document are reported plainly.
func TestSendFileFailures(t *testing.T) {
	f := newFixture(t, fixtureConfig{})
	if err := os.WriteFile(filepath.Join(f.workspace, "chart.png"), []byte(pngBytes), 0o644); err != nil {
		t.Fatal(err)
	}
	res := f.call(agent.WithFrontEnd(t.Context(), &fakeFileSender{err: errors.New("Bad Request: wrong file")}), t, tools.NewSendFile(), jsonArgs(map[string]any{"path": "chart.png"}), nil)
	if text := agent.TextOf(res.Content); !res.IsError || !strings.Contains(text, "could not be delivered to the chat: Bad Request: wrong file") {
		t.Errorf("failed upload: result %q (error %v)", text, res.IsError)
	}
	res = f.call(agent.WithFrontEnd(t.Context(), &fakeFileSender{refusePh: true}), t, tools.NewSendFile(), jsonArgs(map[string]any{"path": "chart.png"}), nil)
	if text := agent.TextOf(res.Content); res.IsError || !strings.HasPrefix(text, "Sent document chart.png") {
		t.Errorf("photo sent as a document: result %q (error %v)", text, res.IsError)
	}
}

// TestSendFileNoSender checks that a turn whose front end sends no files
// (none at all, or one that is no FileSender) gets an error result saying
// so.
func TestSendFileNoSender(t *testing.T) {
	f := newFixture(t, fixtureConfig{})
	if err := os.WriteFile(filepath.Join(f.workspace, "notes.txt"), []byte("notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		ctx  context.Context
	}{
		{"no front end", t.Context()},
		{"a front end that sends no files", agent.WithFrontEnd(t.Context(), struct{ name string }{"asks only"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := f.call(tt.ctx, t, tools.NewSendFile(), jsonArgs(map[string]any{"path": "notes.txt"}), nil)
			if text := agent.TextOf(res.Content); !res.IsError || !strings.Contains(text, "sending files is not available in this turn") {
				t.Errorf("result %q (error %v), want an error saying sending files is not available", text, res.IsError)
			}
		})
	}
}
