package ledger

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Scheduled prompts' entries never move the polling offset nor enter the
// dedupe of update ids, keep their label and text, and come back, across
// a compaction and a restart, interrupted in the order they came among
// the messages; a journal written before prompts were journaled reads as
// it did.
func TestJournalKeepsPromptsApartFromUpdates(t *testing.T) {
	dir := t.TempDir()
	now := time.Now().Unix()
	at := strconv.FormatInt(now, 10)
	old := `{"id":100,"state":"pending","scope":"1001","update":{"update_id":100,"message":{"message_id":7,"date":0,"chat":{"id":1001,"type":"private"},"text":"old"}},"at":` + at + "}\n" +
		`{"id":101,"state":"done","at":` + at + "}\n"
	if err := os.WriteFile(filepath.Join(dir, File), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	j := open(t, dir, CompactAfter(1))
	if got := j.ResumeOffset(time.Now()); got != 102 {
		t.Errorf("resume offset %d, want 102", got)
	}
	p1, err := j.WritePrompt(scope, "⏰ Job one", "first prompt")
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Write(Entry{Origin: Update(102), State: Queued, Scope: scope, Update: json.RawMessage(`{"update_id":102}`), At: now}); err != nil {
		t.Fatal(err)
	}
	p2, err := j.WritePrompt(scope, "⏰ Job two", "second prompt")
	if err != nil {
		t.Fatal(err)
	}
	if !p1.IsPrompt() || !p2.IsPrompt() || p1.UpdateID() != 0 || p2.key() >= p1.key() {
		t.Errorf("prompt origins %v, %v: want prompts, each below the one before in the file", p1, p2)
	}
	// A done prompt makes a compaction (CompactAfter(1)).
	p3, err := j.WritePrompt(scope, "⏰ Job three", "done at once")
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Done(p3); err != nil {
		t.Fatal(err)
	}
	for _, o := range []Origin{p1, p2, p3} {
		if j.Seen(o.key()) {
			t.Errorf("%v's id counts as a seen update id", o)
		}
	}
	if !j.Seen(102) {
		t.Errorf("update 102 is not seen")
	}
	if j.top.Origin != Update(102) {
		t.Errorf("the top is %v, want update 102", j.top.Origin)
	}
	j.Close()

	j2 := open(t, dir)
	if got := j2.ResumeOffset(time.Now()); got != 103 {
		t.Errorf("resume offset after the prompts %d, want 103", got)
	}
	for id := range j2.known {
		if id < 0 {
			t.Errorf("prompt id %d is known as an update id", id)
		}
	}
	type got struct {
		Origin        Origin
		Label, Prompt string
	}
	var order []got
	for _, e := range j2.ToReport() {
		order = append(order, got{e.Origin, e.Label, e.Prompt})
	}
	want := []got{{Update(100), "", ""}, {p1, "⏰ Job one", "first prompt"}, {Update(102), "", ""}, {p2, "⏰ Job two", "second prompt"}}
	if diff := cmp.Diff(want, order, cmp.AllowUnexported(Origin{})); diff != "" {
		t.Errorf("the interrupted entries after the restart (-want +got):\n%s", diff)
	}
	taken, left := j2.TakeInterrupted(scope, 3)
	if len(taken) != 3 || taken[1].Origin != p1 || left != 1 {
		t.Errorf("/retry takes %d (%v), %d left; want the oldest three in order, one left", len(taken), taken, left)
	}
	p4, err := j2.WritePrompt(scope, "⏰ Job four", "after the restart")
	if err != nil {
		t.Fatal(err)
	}
	if p4.key() >= p2.key() {
		t.Errorf("a prompt id after the restart %d is not below the journal's %d", p4.key(), p2.key())
	}
	// The file holds the prompts' text, line by line, for /retry.
	f, err := os.Open(filepath.Join(dir, File))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines := 0
	for sc := bufio.NewScanner(f); sc.Scan(); lines++ {
		var e Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Errorf("line %d: %v", lines+1, err)
		}
	}
}

// A scheduled prompt's entry whose text is empty (omitted from its line)
// keeps its scope and label across a restart, and comes back cut short.
func TestJournalPromptWithEmptyTextKeepsItsScope(t *testing.T) {
	dir := t.TempDir()
	j := open(t, dir)
	o, err := j.WritePrompt(scope, "⏰ Job", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Answering(o); err != nil {
		t.Fatal(err)
	}
	j.Close()
	got := open(t, dir).CutShort()
	if len(got) != 1 || got[0].Origin != o || got[0].Scope != scope || got[0].Label != "⏰ Job" {
		t.Errorf("after the restart the prompt cut short is %+v, want %v in scope %s labelled ⏰ Job", got, o, scope)
	}
}
