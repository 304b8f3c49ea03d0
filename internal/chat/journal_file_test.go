package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/agenttest"
)

// journalLine is a journal entry as the tests compare it.
type journalLine struct {
	ID    int64
	State string
}

// journalLines reads the journal file's entries.
func journalLines(t *testing.T, dir string) []journalLine {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	var out []journalLine
	for line := range bytes.Lines(data) {
		var e journalEntry
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("journal line %q: %v", line, err)
		}
		out = append(out, journalLine{e.ID, e.State})
	}
	return out
}

// A line of the journal that does not parse stops start-up with the path
// and the line, and the file is left alone; only a torn last line is
// dropped.
func TestJournalCorruptLine(t *testing.T) {
	pending := func(id string) string {
		return `{"id":` + id + `,"state":"pending","scope":"5","update":{"update_id":` + id + `},"at":1}` + "\n"
	}
	tests := []struct {
		name     string
		content  string
		wantErr  string // "" when the journal opens
		reported []int64
	}{
		{"a corrupt line in the middle", pending("7") + "{not json\n" + pending("8"), "line 2 does not parse", nil},
		{"a line without an id in the middle", pending("7") + `{"state":"done"}` + "\n" + pending("8"), "line 2 does not parse", nil},
		{"a torn last line", pending("7") + pending("8") + `{"id":9,"sta`, "", []int64{7, 8}},
		{"a torn last line with a newline", pending("7") + `{"id":9,"sta` + "\n", "", []int64{7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, JournalFile)
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			j, err := openJournal(dir, slog.New(slog.DiscardHandler))
			if tt.wantErr != "" {
				if err == nil {
					j.close()
					t.Fatalf("openJournal succeeded, want an error")
				}
				if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("openJournal = %v, want one naming %s and %q", err, path, tt.wantErr)
				}
				if data, _ := os.ReadFile(path); string(data) != tt.content {
					t.Errorf("the journal that does not parse was rewritten")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer j.close()
			var got []int64
			for _, e := range j.reported() {
				got = append(got, e.ID)
			}
			if diff := cmp.Diff(tt.reported, got); diff != "" {
				t.Errorf("reported ids (-want +got):\n%s", diff)
			}
		})
	}
}

// The journal is compacted while the bot runs, once enough entries are
// done: the file keeps the live entries only, and a restart still finds
// them and where polling stopped.
func TestJournalCompactsWhileRunning(t *testing.T) {
	dir := t.TempDir()
	j, err := openJournal(dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	j.compactDone = 3
	raw := json.RawMessage(`{"update_id":1}`)
	for id := int64(1); id <= 5; id++ {
		if err := j.write(journalEntry{ID: id, State: statePending, Scope: "5", Update: raw, At: 100}); err != nil {
			t.Fatal(err)
		}
	}
	for id := int64(1); id <= 4; id++ {
		if err := j.done(id); err != nil {
			t.Fatal(err)
		}
	}
	j.close()
	want := []journalLine{{4, statePending}, {5, statePending}, {4, stateDone}}
	if diff := cmp.Diff(want, journalLines(t, dir)); diff != "" {
		t.Errorf("journal lines after the compaction (-want +got):\n%s", diff)
	}
	j, err = openJournal(dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer j.close()
	var reported []int64
	for _, e := range j.reported() {
		reported = append(reported, e.ID)
	}
	if diff := cmp.Diff([]int64{5}, reported); diff != "" {
		t.Errorf("reported after the restart (-want +got):\n%s", diff)
	}
	if !j.seen(4) || j.lastID != 5 {
		t.Errorf("after the restart: seen(4) = %v, lastID = %d; want true, 5", j.seen(4), j.lastID)
	}
}

// The heartbeat is touched after a poll only when its batch was accepted:
// while the journal cannot be written, the healthcheck goes unhealthy.
func TestHeartbeatOnlyWhenJournaled(t *testing.T) {
	message := func(from int64) json.RawMessage {
		raw, _ := json.Marshal(map[string]any{"update_id": 41, "message": map[string]any{"message_id": 1, "date": 0,
			"chat": map[string]any{"id": from, "type": "private"}, "from": map[string]any{"id": from, "first_name": "u"}, "text": "hi"}})
		return raw
	}
	tests := []struct {
		name          string
		raws          []json.RawMessage
		journalBroken bool
		wantHeartbeat bool
		wantOffset    int64
	}{
		{"an empty poll", nil, false, true, 40},
		{"a stranger's message, nothing to journal", []json.RawMessage{message(strangerID)}, false, true, 42},
		{"a message the journal cannot take", []json.RawMessage{message(userID)}, true, false, 40},
		{"an empty poll while the journal is broken: nothing waits to be accepted", nil, true, true, 40},
	}
	h := newHarness(t, harnessConfig{provider: agenttest.NewFauxProvider()})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			host, err := New(Config{Token: h.tg.Token(), AllowedUserIDs: []int64{userID}, Agent: h.agent, Redactor: h.host.cfg.Redactor,
				AgentDir: dir, WorkspaceDir: dir}, withHTTPClient((&memAPI{sent: make(chan string, 16)}).client()))
			if err != nil {
				t.Fatal(err)
			}
			defer host.journal.close()
			if tt.journalBroken {
				host.journal.close()
			}
			ctx, cancel := context.WithCancel(t.Context())
			cancel() // no pause after a failed journal write
			got, _ := host.received(ctx, host.take, tt.raws, 40)
			_, statErr := os.Stat(filepath.Join(dir, HeartbeatFile))
			if statErr != nil && !errors.Is(statErr, fs.ErrNotExist) {
				t.Fatal(statErr)
			}
			if diff := cmp.Diff(tt.wantHeartbeat, statErr == nil); diff != "" {
				t.Errorf("heartbeat written (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantOffset, got); diff != "" {
				t.Errorf("next offset (-want +got):\n%s", diff)
			}
		})
	}
}
