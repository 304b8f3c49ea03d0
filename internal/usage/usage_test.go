package usage_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/usage"
)

// clock is a settable test clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func open(t *testing.T, path string, c *clock) *usage.Store {
	t.Helper()
	s, err := usage.Open(path, usage.WithClock(c.now))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func tok(prompt, completion, cached int64) usage.Tokens {
	return usage.Tokens{Prompt: prompt, Completion: completion, Cached: cached, Requests: 1}
}

func TestSummedAcrossRestarts(t *testing.T) {
	path := filepath.Join(t.TempDir(), usage.FileName)
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skipf("the zone database lacks Europe/Berlin: %v", err)
	}
	// 23:30 in Berlin on 1 December: 22:30 UTC.
	c := &clock{t: time.Date(2026, 12, 1, 22, 30, 0, 0, time.UTC)}
	s := open(t, path, c)
	add := func(s *usage.Store, r usage.Record) {
		t.Helper()
		if err := s.Add(r); err != nil {
			t.Fatalf("Add: %v", err)
		}
	}
	// Two days ago, yesterday, and two turns today (Berlin).
	add(s, usage.Record{Time: c.t.Add(-49 * time.Hour), Chat: "1", Session: "old", Turn: "t0", Model: "m", Tokens: tok(1000, 100, 0)})
	add(s, usage.Record{Time: c.t.Add(-24 * time.Hour), Chat: "1", Session: "s", Turn: "t1", Model: "m", Tokens: tok(200, 20, 0)})
	add(s, usage.Record{Chat: "1", Session: "s", Turn: "t2", Model: "m", Tokens: tok(300, 30, 100)})
	add(s, usage.Record{Chat: "2", Session: "x", Turn: "t9", Model: "m", Tokens: tok(7, 7, 0)})
	s.Close()

	s = open(t, path, c)
	add(s, usage.Record{Chat: "1", Session: "s", Turn: "t3", Model: "m", Tokens: tok(50, 5, 40)})
	add(s, usage.Record{Chat: "1", Session: "s", Turn: "t3", Model: "n", Tokens: tok(10, 1, 0)})
	got := s.Summary("1", "s", berlin)
	want := usage.Summary{
		Turn:    usage.Totals{"m": tok(50, 5, 40), "n": tok(10, 1, 0)},
		Session: usage.Totals{"m": {Prompt: 550, Completion: 55, Cached: 140, Requests: 3}, "n": tok(10, 1, 0)},
		Today:   usage.Totals{"m": {Prompt: 350, Completion: 35, Cached: 140, Requests: 2}, "n": tok(10, 1, 0)},
		Last30:  usage.Totals{"m": {Prompt: 1550, Completion: 155, Cached: 140, Requests: 4}, "n": tok(10, 1, 0)},
		Since:   c.t.Add(-49 * time.Hour).Truncate(15 * time.Minute),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Summary (-want +got):\n%s", diff)
	}

	// Half an hour later it is 2 December in Berlin (still 1 December in
	// UTC): today starts afresh there, and not in New York.
	c.t = c.t.Add(45 * time.Minute)
	if got := s.Today("1", berlin).Sum(); got != (usage.Tokens{}) {
		t.Errorf("Today in Berlin after midnight = %+v, want nothing", got)
	}
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skipf("the zone database lacks America/New_York: %v", err)
	}
	if got := s.Today("1", ny).Sum().Total(); got != 35+350+11 {
		t.Errorf("Today in New York = %d tokens, want %d", got, 35+350+11)
	}
	if got, want := s.NextDay(berlin), time.Date(2026, 12, 3, 0, 0, 0, 0, berlin); !got.Equal(want) {
		t.Errorf("NextDay = %v, want %v", got, want)
	}
}

func TestCompactionKeepsTheSums(t *testing.T) {
	path := filepath.Join(t.TempDir(), usage.FileName)
	c := &clock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	// 40 days of a request every 10 minutes, written as the log's lines
	// (appending them one by one would fsync each).
	start := c.t.Add(-40 * 24 * time.Hour)
	var b strings.Builder
	n := 0
	for at := start; at.Before(c.t); at = at.Add(10 * time.Minute) {
		line, err := json.Marshal(usage.Record{Time: at, Chat: "1", Session: "s", Turn: "t", Model: "m", Tokens: tok(10, 1, 0)})
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
		n++
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	// The records as they are, summed without a compaction.
	var want usage.Tokens
	month := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	for at := start; at.Before(c.t); at = at.Add(10 * time.Minute) {
		if !at.Before(month) {
			want = want.Add(tok(10, 1, 0))
		}
	}
	s := open(t, path, c)
	if diff := cmp.Diff(want, s.Summary("1", "s", time.UTC).Last30.Sum()); diff != "" {
		t.Errorf("the last 30 days changed with the compaction (-want +got):\n%s", diff)
	}
	s.Close()
	s = open(t, path, c)
	if diff := cmp.Diff(want, s.Summary("1", "s", time.UTC).Last30.Sum()); diff != "" {
		t.Errorf("the last 30 days changed when the compacted log was read back (-want +got):\n%s", diff)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Count(string(data), "\n")
	// 30 days merged per quarter hour would be 2880 lines; per 10 minutes
	// the last 48 hours are 288 more. The 40 days were 5760 records.
	if lines >= n || lines > 32*96+288 {
		t.Errorf("the compacted log has %d lines, want fewer than the %d records and at most %d", lines, n, 32*96+288)
	}
}

func TestBrokenLinesAreDropped(t *testing.T) {
	path := filepath.Join(t.TempDir(), usage.FileName)
	c := &clock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	good := `{"t":"2026-12-01T11:00:00Z","chat":"1","session":"s","model":"m","prompt":10,"completion":1,"requests":1}`
	data := good + "\nnot json at all\n{\"chat\":\"\"}\n[1,2]\n" + good + "\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	s := open(t, path, c)
	if got := s.Today("1", time.UTC).Sum(); got != (usage.Tokens{Prompt: 20, Completion: 2, Requests: 2}) {
		t.Errorf("Today = %+v, want the two good lines", got)
	}
	kept, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(kept), "not json") || strings.Count(string(kept), "\n") != 2 {
		t.Errorf("the compacted log still holds the broken lines:\n%s", kept)
	}
}

func TestParsePrices(t *testing.T) {
	tests := []struct {
		in      string
		want    usage.Prices
		wantErr bool
	}{
		{in: "", want: usage.Prices{}},
		{in: "gpt-4.1-mini=0.40/1.60/0.10", want: usage.Prices{"gpt-4.1-mini": {Input: 0.40, Output: 1.60, Cached: 0.10}}},
		{in: " a=1/2 , b=$3/4/0.5", want: usage.Prices{"a": {Input: 1, Output: 2, Cached: 1}, "b": {Input: 3, Output: 4, Cached: 0.5}}},
		{in: "a=1", wantErr: true},
		{in: "=1/2/3", wantErr: true},
		{in: "a=x/2/3", wantErr: true},
		{in: "a=-1/2/3", wantErr: true},
		{in: "a=1/2/3,a=1/2/3", wantErr: true},
	}
	for _, tt := range tests {
		got, err := usage.ParsePrices(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParsePrices(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" && !tt.wantErr {
			t.Errorf("ParsePrices(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestCost(t *testing.T) {
	p, err := usage.ParsePrices("gpt-4.1-mini=0.40/1.60/0.10")
	if err != nil {
		t.Fatal(err)
	}
	// 1M prompt tokens of which 400k cached, 100k completion tokens:
	// 600k*0.40 + 400k*0.10 + 100k*1.60 per million = 0.24+0.04+0.16.
	got, ok := p.Cost("gpt-4.1-mini", usage.Tokens{Prompt: 1_000_000, Completion: 100_000, Cached: 400_000})
	if !ok || got < 0.4399999 || got > 0.4400001 {
		t.Errorf("Cost = %v, %v; want 0.44, true", got, ok)
	}
	if _, ok := p.Cost("other", usage.Tokens{Prompt: 1}); ok {
		t.Error("Cost of an unpriced model reports a price")
	}
	// A provider that reports its cost (Claude Code) prices an unpriced
	// model; a price still wins.
	if got, ok := p.Cost("sonnet", usage.Tokens{Prompt: 1, CostUSD: 0.25}); !ok || got != 0.25 {
		t.Errorf("Cost of a reported cost = %v, %v; want 0.25, true", got, ok)
	}
	if got, _ := p.Cost("gpt-4.1-mini", usage.Tokens{Completion: 1_000_000, CostUSD: 9}); got < 1.5999 || got > 1.6001 {
		t.Errorf("Cost with a price and a reported cost = %v; want the price's 1.60", got)
	}
	if got := (usage.Tokens{CostUSD: 0.5}).Add(usage.Tokens{CostUSD: 0.25}); got.CostUSD != 0.75 {
		t.Errorf("Add sums the reported cost to %v, want 0.75", got.CostUSD)
	}
	cost, unpriced := p.CostOf(usage.Totals{"gpt-4.1-mini": {Completion: 1_000_000}, "other": {Prompt: 5}})
	if diff := cmp.Diff([]string{"other"}, unpriced); diff != "" || cost < 1.5999 || cost > 1.6001 {
		t.Errorf("CostOf = %v, %v; want 1.60 and [other] unpriced", cost, unpriced)
	}
}

func TestLimit(t *testing.T) {
	prices := usage.Prices{"m": {Input: 1, Output: 2, Cached: 0.5}}
	day := usage.Totals{"m": {Prompt: 600_000, Completion: 200_000}} // 800k tokens, $1.00
	tests := []struct {
		in       string
		want     usage.Limit
		exceeded bool
		wantErr  bool
	}{
		{in: "", want: usage.Limit{}},
		{in: "800000", want: usage.Limit{Tokens: 800_000}, exceeded: true},
		{in: "800001", want: usage.Limit{Tokens: 800_001}},
		{in: "1m", want: usage.Limit{Tokens: 1_000_000}},
		{in: "500k", want: usage.Limit{Tokens: 500_000}, exceeded: true},
		{in: "$2.50", want: usage.Limit{Money: 2.5}},
		{in: "$1", want: usage.Limit{Money: 1}, exceeded: true},
		{in: "$0", wantErr: true},
		{in: "lots", wantErr: true},
		{in: "-5", wantErr: true},
	}
	for _, tt := range tests {
		got, err := usage.ParseLimit(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseLimit(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if tt.wantErr {
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseLimit(%q) (-want +got):\n%s", tt.in, diff)
		}
		if ex := got.Exceeded(day, prices); ex != tt.exceeded {
			t.Errorf("ParseLimit(%q).Exceeded(800k tokens, $1.00) = %v, want %v", tt.in, ex, tt.exceeded)
		}
	}
}

func TestFormat(t *testing.T) {
	for in, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := usage.FormatTokens(in); got != want {
			t.Errorf("FormatTokens(%d) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[float64]string{0: "$0.00", 2.5: "$2.50", 0.0012: "$0.0012"} {
		if got := usage.FormatMoney(in); got != want {
			t.Errorf("FormatMoney(%v) = %q, want %q", in, got, want)
		}
	}
}

// TestPlanWindowsAcrossRestarts checks that the plan's usage windows a
// response reported are in the log, that the latest report of each window
// holds, and that they survive a restart and the compaction of old
// records.
func TestPlanWindowsAcrossRestarts(t *testing.T) {
	path := filepath.Join(t.TempDir(), usage.FileName)
	c := &clock{t: time.Date(2026, 12, 1, 22, 30, 0, 0, time.UTC)}
	resets := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	weekly := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	s := open(t, path, c)
	for _, r := range []usage.Record{
		// Three days ago (merged by the compaction), then today.
		{Time: c.t.Add(-72 * time.Hour), Chat: "1", Session: "s", Model: "sonnet", Tokens: tok(10, 1, 0),
			Windows: []usage.Window{{Name: "seven_day", Status: "allowed", Utilization: 0.1, Resets: weekly}}},
		{Time: c.t.Add(-72*time.Hour + time.Minute), Chat: "1", Session: "s", Model: "sonnet", Tokens: tok(10, 1, 0)},
		{Time: c.t.Add(-time.Hour), Chat: "1", Session: "s", Model: "sonnet", Tokens: tok(10, 1, 0),
			Windows: []usage.Window{{Name: "five_hour", Status: "allowed", Utilization: 0.2, Resets: resets}}},
		{Chat: "2", Session: "x", Model: "sonnet", Tokens: tok(10, 1, 0),
			Windows: []usage.Window{{Name: "five_hour", Status: "allowed_warning", Utilization: 0.9, Resets: resets}}},
	} {
		if err := s.Add(r); err != nil {
			t.Fatalf("Add: %v", err)
		}
	}
	want := []usage.Window{
		{Name: "five_hour", Status: "allowed_warning", Utilization: 0.9, Resets: resets},
		{Name: "seven_day", Status: "allowed", Utilization: 0.1, Resets: weekly},
	}
	if diff := cmp.Diff(want, s.Windows()); diff != "" {
		t.Errorf("Windows (-want +got):\n%s", diff)
	}
	s.Close()
	s = open(t, path, c)
	defer s.Close()
	if diff := cmp.Diff(want, s.Windows()); diff != "" {
		t.Errorf("Windows after a restart (-want +got):\n%s", diff)
	}
}
