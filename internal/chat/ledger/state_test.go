package ledger

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// allStates is every State, the zero one (none) included.
var allStates = []State{0, Received, Queued, Answering, Answered, Refused, Interrupted, Reported, Dropped}

// TestTransitions holds every pair of states to the one table: the moves
// it lists (written out again here, as the promise reads) are taken, and
// every other move, from any state to any state, is refused with an error
// naming both.
func TestTransitions(t *testing.T) {
	legal := map[[2]State]bool{
		{Received, Answered}: true, {Received, Dropped}: true,
		{Queued, Answering}: true, {Queued, Answered}: true, {Queued, Refused}: true, {Queued, Interrupted}: true, {Queued, Dropped}: true,
		{Answering, Answered}: true, {Answering, Refused}: true,
		{Refused, Answered}:     true,
		{Interrupted, Reported}: true, {Interrupted, Queued}: true, {Interrupted, Dropped}: true,
		{Reported, Queued}: true, {Reported, Dropped}: true,
	}
	taken := 0
	for _, from := range allStates {
		for _, to := range allStates {
			t.Run(fmt.Sprintf("%v to %v", from, to), func(t *testing.T) {
				got, err := from.To(to)
				if legal[[2]State{from, to}] {
					taken++
					if err != nil || got != to {
						t.Errorf("%v.To(%v) = %v, %v; want %v, no error", from, to, got, err, to)
					}
					return
				}
				if err == nil || got != from {
					t.Fatalf("%v.To(%v) = %v, %v; want it refused, the state kept", from, to, got, err)
				}
				if want := "ledger: an item " + from.String() + " cannot become " + to.String(); err.Error() != want {
					t.Errorf("the refusal says %q, want %q", err, want)
				}
			})
		}
	}
	if taken != len(legal) {
		t.Errorf("%d legal moves taken, want the %d listed", taken, len(legal))
	}
}

// No move leaves a finished state: answered and dropped are the ends.
func TestFinishedStatesAreEnds(t *testing.T) {
	for _, s := range allStates {
		if s.finished() && len(transitions[s]) != 0 {
			t.Errorf("%v is done in the file but may still become %v", s, transitions[s])
		}
	}
}

// TestSettle is the worker's decision for each state an item can end a
// run in: only what is answered, or ended unanswered outside a shutdown,
// is marked done.
func TestSettle(t *testing.T) {
	type outcome struct {
		State State
		Done  bool
	}
	tests := []struct {
		state          State
		running, shuts outcome
	}{
		{Received, outcome{Answered, true}, outcome{Received, false}},
		{Queued, outcome{Answered, true}, outcome{Queued, false}},
		{Answering, outcome{Answering, false}, outcome{Answering, false}},
		{Answered, outcome{Answered, true}, outcome{Answered, true}},
		{Refused, outcome{Refused, false}, outcome{Refused, false}},
		{Interrupted, outcome{Interrupted, false}, outcome{Interrupted, false}},
	}
	for _, tt := range tests {
		for shuttingDown, want := range map[bool]outcome{false: tt.running, true: tt.shuts} {
			s, done := Settle(tt.state, shuttingDown)
			if diff := cmp.Diff(want, outcome{s, done}); diff != "" {
				t.Errorf("Settle(%v, shutting down %v) (-want +got):\n%s", tt.state, shuttingDown, diff)
			}
			if s != tt.state && !tt.state.Can(s) {
				t.Errorf("Settle(%v) moves to %v, which the table refuses", tt.state, s)
			}
		}
	}
}

// Every state but the zero one has its word in the file, and the words a
// journal holds read back as the state that wrote them, in-memory states
// as the one they are journaled in.
func TestStatesOnDisk(t *testing.T) {
	journaledAs := map[State]State{Refused: Queued, Interrupted: Queued, Dropped: Answered}
	for _, s := range allStates[1:] {
		data, err := json.Marshal(Entry{Origin: Update(3), State: s})
		if err != nil {
			t.Fatalf("%v: %v", s, err)
		}
		var back Entry
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatal(err)
		}
		want := s
		if as, ok := journaledAs[s]; ok {
			want = as
		}
		if back.State != want || back.Origin != Update(3) {
			t.Errorf("%v written as %s reads back as %v %v, want %v", s, data, back.Origin, back.State, want)
		}
	}
	if _, err := json.Marshal(Entry{Origin: Update(3)}); err == nil {
		t.Error("an entry without a state was written")
	}
}

// A journal written by the version before the ledger (negative ids for
// scheduled prompts, states as words) loads as it did: each state is
// handed out where it belongs, the prompts apart from the updates.
func TestJournalOfEarlierVersionLoads(t *testing.T) {
	dir := t.TempDir()
	at := strconv.FormatInt(time.Now().Unix(), 10)
	file := `{"id":40,"state":"pending","scope":"1001","update":{"update_id":40,"message":{"message_id":3}},"at":` + at + `}
{"id":-1764000000000000000,"state":"pending","scope":"1001","label":"⏰ Job plants","prompt":"check the plants","at":` + at + `}
{"id":41,"state":"pending","scope":"1001","update":{"update_id":41},"at":` + at + `}
{"id":41,"state":"interrupted"}
{"id":-1764000000000000001,"state":"pending","scope":"1001:7","label":"⏰ Job mail","prompt":"read the mail","at":` + at + `}
{"id":-1764000000000000001,"state":"answering"}
{"id":42,"state":"received","update":{"update_id":42},"at":` + at + `}
{"id":43,"state":"pending","scope":"1001","update":{"update_id":43},"at":` + at + `}
{"id":43,"state":"answering"}
{"id":43,"state":"done"}
{"id":44,"state":"a state of a later version","at":` + at + `}
`
	if err := os.WriteFile(filepath.Join(dir, File), []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	j := open(t, dir)
	plants, mail := originOf(-1764000000000000000), originOf(-1764000000000000001)
	type entry struct {
		Origin       Origin
		State        State
		Scope, Label string
	}
	short := func(es []Entry) []entry {
		var out []entry
		for _, e := range es {
			out = append(out, entry{e.Origin, e.State, e.Scope, e.Label})
		}
		return out
	}
	toReport, cut, replay := short(j.ToReport()), short(j.CutShort()), short(j.Replay())
	interrupted, _ := j.TakeInterrupted("1001", -1)
	got := map[string]any{
		"to report": toReport, "cut short": cut, "replayed": replay, "interrupted": short(interrupted),
		"offset": j.ResumeOffset(time.Now()), "seen 44": j.Seen(44), "prompt seen": j.Seen(plants.key()),
	}
	want := map[string]any{
		"to report":   []entry{{Update(40), Interrupted, "1001", ""}, {plants, Interrupted, "1001", "⏰ Job plants"}},
		"cut short":   []entry{{mail, Answering, "1001:7", "⏰ Job mail"}},
		"replayed":    []entry{{Update(42), Received, "", ""}},
		"interrupted": []entry{{Update(40), Interrupted, "1001", ""}, {plants, Interrupted, "1001", "⏰ Job plants"}, {Update(41), Reported, "1001", ""}},
		"offset":      int64(45), "seen 44": true, "prompt seen": false,
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(Origin{})); diff != "" {
		t.Errorf("the earlier version's journal (-want +got):\n%s", diff)
	}
	if !plants.IsPrompt() || plants.UpdateID() != 0 || mail.key() != -1764000000000000001 {
		t.Errorf("the prompts' origins %v, %v do not keep their ids", plants, mail)
	}
	// The compaction at start-up wrote the same encoding back.
	want2 := []fileLine{{40, "pending"}, {-1764000000000000000, "pending"}, {41, "interrupted"}, {-1764000000000000001, "answering"}, {42, "received"}, {44, "done"}}
	if diff := cmp.Diff(want2, fileLines(t, dir)); diff != "" {
		t.Errorf("the compacted file (-want +got):\n%s", diff)
	}
}
