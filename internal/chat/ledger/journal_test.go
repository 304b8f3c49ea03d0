package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/tmpfstest"
)

// scope is the chat the tests' entries belong to.
const scope = "1001"

// open opens dir's journal (with opts), closed when the test ends.
func open(t *testing.T, dir string, opts ...Option) *Journal {
	t.Helper()
	j, err := Open(dir, slog.New(slog.DiscardHandler), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(j.Close)
	return j
}

// origins returns the entries' origins.
func origins(es []Entry) []Origin {
	var out []Origin
	for _, e := range es {
		out = append(out, e.Origin)
	}
	return out
}

// fileLine is a line of the file as the tests compare it.
type fileLine struct {
	ID    int64
	State string
}

// fileLines reads the journal file's lines.
func fileLines(t *testing.T, dir string) []fileLine {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, File))
	if err != nil {
		t.Fatal(err)
	}
	var out []fileLine
	for l := range bytes.Lines(data) {
		var e fileLine
		if err := json.Unmarshal(l, &e); err != nil {
			t.Fatalf("journal line %q: %v", l, err)
		}
		out = append(out, e)
	}
	return out
}

// An update journaled as received (a command, a button press) and not
// handled before the bot died is handed out once after the restart, to be
// handled then, and its delivery again is skipped as seen; one older than
// Telegram keeps updates is not. Done, it is not handed out again.
func TestReceivedUpdateIsReplayed(t *testing.T) {
	dir := t.TempDir()
	j := open(t, dir)
	now := time.Now()
	if err := j.Write(
		Entry{Origin: Update(7), State: Received, Update: json.RawMessage(`{"update_id":7}`), At: now.Add(-2 * updateRetention).Unix()},
		Entry{Origin: Update(9), State: Received, Update: json.RawMessage(`{"update_id":9}`), At: now.Unix()},
		Entry{Origin: Update(10), State: Queued, Scope: scope, Update: json.RawMessage(`{"update_id":10}`), At: now.Unix()},
	); err != nil {
		t.Fatal(err)
	}
	j.Close()
	j = open(t, dir)
	got := map[string]any{"replayed": origins(j.Replay()), "again": len(j.Replay()), "seen 9": j.Seen(9), "offset": j.ResumeOffset(now)}
	want := map[string]any{"replayed": []Origin{Update(9)}, "again": 0, "seen 9": true, "offset": int64(11)}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(Origin{})); diff != "" {
		t.Errorf("after the restart (-want +got):\n%s", diff)
	}
	// Not handled yet: a crash now hands it out again.
	j.Close()
	j = open(t, dir)
	if n := len(j.Replay()); n != 1 {
		t.Errorf("after a second restart %d entries are handed out, want the one still received", n)
	}
	if err := j.Done(Update(9)); err != nil {
		t.Fatal(err)
	}
	j.Close()
	if n := len(open(t, dir).Replay()); n != 0 {
		t.Errorf("once done, %d entries are handed out after the restart, want 0", n)
	}
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
		reported []Origin
	}{
		{"a corrupt line in the middle", pending("7") + "{not json\n" + pending("8"), "line 2 does not parse", nil},
		{"a line without an id in the middle", pending("7") + `{"state":"done"}` + "\n" + pending("8"), "line 2 does not parse", nil},
		{"a torn last line", pending("7") + pending("8") + `{"id":9,"sta`, "", []Origin{Update(7), Update(8)}},
		{"a torn last line with a newline", pending("7") + `{"id":9,"sta` + "\n", "", []Origin{Update(7)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, File)
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			j, err := Open(dir, slog.New(slog.DiscardHandler))
			if tt.wantErr != "" {
				if err == nil {
					j.Close()
					t.Fatalf("Open succeeded, want an error")
				}
				if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("Open = %v, want one naming %s and %q", err, path, tt.wantErr)
				}
				if data, _ := os.ReadFile(path); string(data) != tt.content {
					t.Errorf("the journal that does not parse was rewritten")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			if diff := cmp.Diff(tt.reported, origins(j.ToReport()), cmp.AllowUnexported(Origin{})); diff != "" {
				t.Errorf("reported origins (-want +got):\n%s", diff)
			}
		})
	}
}

// The journal is compacted while the bot runs, once enough entries are
// done: the file keeps the live entries only, and a restart still finds
// them and where polling stopped.
func TestJournalCompactsWhileRunning(t *testing.T) {
	dir := t.TempDir()
	j := open(t, dir, CompactAfter(3))
	raw := json.RawMessage(`{"update_id":1}`)
	for id := int64(1); id <= 5; id++ {
		if err := j.Write(Entry{Origin: Update(id), State: Queued, Scope: "5", Update: raw, At: 100}); err != nil {
			t.Fatal(err)
		}
	}
	for id := int64(1); id <= 4; id++ {
		if err := j.Done(Update(id)); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	want := []fileLine{{4, "pending"}, {5, "pending"}, {4, "done"}}
	if diff := cmp.Diff(want, fileLines(t, dir)); diff != "" {
		t.Errorf("journal lines after the compaction (-want +got):\n%s", diff)
	}
	j = open(t, dir)
	if diff := cmp.Diff([]Origin{Update(5)}, origins(j.ToReport()), cmp.AllowUnexported(Origin{})); diff != "" {
		t.Errorf("reported after the restart (-want +got):\n%s", diff)
	}
	if !j.Seen(4) || j.lastID != 5 {
		t.Errorf("after the restart: Seen(4) = %v, lastID = %d; want true, 5", j.Seen(4), j.lastID)
	}
}

// A message found pending is reported after every restart until its
// report was sent; once reported, /retry still finds it.
func TestJournalReplay(t *testing.T) {
	dir := t.TempDir()
	j := open(t, dir)
	raw := json.RawMessage(`{"update_id":7,"message":{"message_id":1,"chat":{"id":5,"type":"private"},"from":{"id":5},"text":"x"}}`)
	if err := j.Write(Entry{Origin: Update(7), State: Queued, Scope: "5", Update: raw}, Entry{Origin: Update(8), State: Queued, Scope: "6", Update: raw}); err != nil {
		t.Fatal(err)
	}
	if err := j.Done(Update(8)); err != nil {
		t.Fatal(err)
	}
	j.Close()
	f, _ := os.OpenFile(filepath.Join(dir, File), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"id":9,"sta`) // torn by a crash
	f.Close()

	j = open(t, dir)
	if got := j.ToReport(); len(got) != 1 || got[0].Origin != Update(7) {
		t.Fatalf("reported = %+v", got)
	}
	// Until its report was sent, a restart reports it again.
	j.Close()
	j = open(t, dir)
	if got := j.ToReport(); len(got) != 1 || got[0].Origin != Update(7) {
		t.Fatalf("after a restart before the report went out, reported = %+v", got)
	}
	if err := j.MarkReported("5", Update(7)); err != nil {
		t.Fatal(err)
	}
	j.Close()
	// Once reported, a restart does not report it again, but /retry still
	// finds it.
	j = open(t, dir)
	if got := j.ToReport(); len(got) != 0 {
		t.Errorf("reported again: %+v", got)
	}
	if es, _ := j.TakeInterrupted("5", -1); len(es) != 1 || es[0].Origin != Update(7) || es[0].State != Reported {
		t.Errorf("TakeInterrupted = %+v, want update 7, reported", es)
	}
}

// A journaled message marked done while the disk is full keeps its mark,
// written once there is space (by Flush, or before the next entries), so
// that the next start-up does not report an answered message as
// interrupted.
func TestJournalMarkOnFullDisk(t *testing.T) {
	for _, how := range []string{"flush", "next write"} {
		t.Run(how, func(t *testing.T) {
			d := tmpfstest.Mount(t, 1<<20)
			j := open(t, d.Dir)
			// The entry fills the journal's first page but for a few
			// bytes, too few for the done line: that needs a new page.
			page := os.Getpagesize()
			e := Entry{Origin: Update(7), State: Queued, Scope: scope, At: time.Now().Unix()}
			for pad := page - 200; ; pad++ {
				e.Update = json.RawMessage(`{"update_id":7,"pad":"` + strings.Repeat("x", pad) + `"}`)
				if line, _ := json.Marshal(e); len(line)+1 >= page-10 {
					break
				}
			}
			if err := j.Write(e); err != nil {
				t.Fatal(err)
			}
			d.Fill()
			if err := j.Done(Update(7)); !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("Done on a full disk: %v, want ENOSPC", err)
			}
			d.Drain()
			var err error
			switch how {
			case "flush":
				err = j.Flush()
			default:
				err = j.Write(Entry{Origin: Update(8), State: Answered, At: time.Now().Unix()})
			}
			if err != nil {
				t.Fatal(err)
			}
			j.Close()
			j2 := open(t, d.Dir)
			interrupted, _ := j2.TakeInterrupted(scope, -1)
			if diff := cmp.Diff(0, len(j2.ToReport())+len(interrupted)); diff != "" {
				t.Errorf("entries reported as interrupted after the restart (-want +got):\n%s", diff)
			}
		})
	}
}

// A restart on a full disk: the start-up compaction fails, yet the
// journal opens (a bot that cannot start cannot tell anyone anything, and
// a supervisor would restart it in a loop), reports the message it finds
// pending, and compacts the file once there is space.
func TestJournalOpensOnFullDisk(t *testing.T) {
	d := tmpfstest.Mount(t, 1<<20)
	j := open(t, d.Dir)
	update := json.RawMessage(`{"update_id":5}`)
	if err := j.Write(Entry{Origin: Update(5), State: Queued, Scope: scope, Update: update, At: time.Now().Unix()}); err != nil {
		t.Fatal(err)
	}
	j.Close() // the bot dies with the message pending
	d.Fill()
	j, err := Open(d.Dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("the journal does not open on a full disk: %v", err)
	}
	defer j.Close()
	if got := j.ToReport(); len(got) != 1 || got[0].Origin != Update(5) {
		t.Errorf("reported after the restart: %v, want update 5", got)
	}
	// Its report went out; on the full disk the mark may wait for space,
	// like the others.
	_ = j.MarkReported(scope, Update(5))
	d.Drain()
	if err := j.Flush(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(d.Dir, File))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"state":"interrupted"`) {
		t.Errorf("after the flush the journal is %s, want it compacted to the interrupted entry", data)
	}
}
