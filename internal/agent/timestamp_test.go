package agent_test

import (
	"context"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
)

func TestTimeStamp(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skipf("zone data: %v", err)
	}
	at := time.Date(2026, 12, 1, 8, 30, 0, 0, time.UTC)
	tests := []struct {
		t    time.Time
		zone string
		want string
	}{
		{at.In(berlin), "Europe/Berlin", "[Tue 1 Dec 2026 09:30 Europe/Berlin]"},
		{at.In(berlin), "", "[Tue 1 Dec 2026 09:30 CET]"},
		{at, "UTC", "[Tue 1 Dec 2026 08:30 UTC]"},
	}
	for _, tt := range tests {
		if got := agent.TimeStamp(tt.t, tt.zone); got != tt.want {
			t.Errorf("TimeStamp(%v, %q) = %q, want %q", tt.t, tt.zone, got, tt.want)
		}
	}
}

// TestMessageTimesAreKept checks that the stamp goes first in the user
// message, in the session's zone, and that the transcript keeps it: the
// session reopened sends the same bytes.
func TestMessageTimesAreKept(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions")
	faux := agenttest.NewFauxProvider(agenttest.FauxText("one"), agenttest.FauxText("two"))
	a := newTestAgent(t, faux, agent.WithMessageTimes(), agent.WithSessionDir(dir))
	s := openSession(t, a, agent.SessionOptions{ID: "c", TimeZone: "Asia/Tokyo"})
	if _, err := s.Prompt(context.Background(), []agent.Content{agent.Text("hello")}, nil); err != nil {
		t.Fatal(err)
	}
	first := faux.Requests()[0].Messages
	stamp := regexp.MustCompile(`^\[(Mon|Tue|Wed|Thu|Fri|Sat|Sun) \d{1,2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2} Asia/Tokyo\]\nhello$`)
	if got := agent.TextOf(first[0].Content); !stamp.MatchString(got) {
		t.Errorf("the user message is %q, want a Tokyo stamp then hello", got)
	}
	s.Close()

	b := newTestAgent(t, faux, agent.WithMessageTimes(), agent.WithSessionDir(dir))
	s = openSession(t, b, agent.SessionOptions{ID: "c", TimeZone: "Asia/Tokyo"})
	if _, err := s.Prompt(context.Background(), []agent.Content{agent.Text("again")}, nil); err != nil {
		t.Fatal(err)
	}
	second := faux.Requests()[1].Messages
	if diff := cmp.Diff(agent.TextOf(first[0].Content), agent.TextOf(second[0].Content)); diff != "" {
		t.Errorf("the reopened session sends another first message (-before +after):\n%s", diff)
	}
}
