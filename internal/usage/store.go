package usage

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/volcanic/telegram-agent/internal/atomicfile"
)

// FileName is the usage log's name in the agent dir.
const FileName = "usage.jsonl"

// The store's defaults.
const (
	// retention is how long records are kept: the last 30 days of the
	// longest summary, a day more for any zone's idea of the day.
	retention = 32 * 24 * time.Hour
	// detail is how long records keep their turn and exact time; older
	// ones are merged per quarter hour, which still starts every day of
	// every zone (all UTC offsets are whole quarter hours).
	detail = 48 * time.Hour
	bucket = 15 * time.Minute
	// compactEvery is how many appends pass between compactions.
	compactEvery = 2000
)

// Record is one model response's usage, or (once compacted) the sum of
// the responses of a quarter hour.
type Record struct {
	Time    time.Time `json:"t"`
	Chat    string    `json:"chat"`
	Session string    `json:"session,omitempty"`
	// Turn names the turn the response belongs to; empty for a request
	// outside a turn (a /compact) and in merged records.
	Turn  string `json:"turn,omitempty"`
	Model string `json:"model"`
	Tokens
	// Windows are the model plan's usage windows as the provider reported
	// them with this response (Claude Code's 5-hour and weekly limits).
	Windows []Window `json:"windows,omitempty"`
}

// Window is one of a model plan's usage windows as reported.
type Window struct {
	Name        string    `json:"name"`
	Status      string    `json:"status"`
	Utilization float64   `json:"utilization,omitempty"`
	Resets      time.Time `json:"resets,omitzero"`
}

// Tokens are counts of tokens: Prompt includes Cached, the prompt tokens
// the provider served from its cache.
type Tokens struct {
	Prompt     int64 `json:"prompt"`
	Completion int64 `json:"completion"`
	Cached     int64 `json:"cached,omitempty"`
	// Requests is how many model responses the counts sum.
	Requests int64 `json:"requests"`
	// CostUSD is what the provider itself reported the responses cost
	// (Claude Code's total_cost_usd), zero when it reports none.
	CostUSD float64 `json:"cost_usd,omitempty"`
}

// Total is prompt plus completion tokens.
func (t Tokens) Total() int64 { return t.Prompt + t.Completion }

// Add returns t plus o.
func (t Tokens) Add(o Tokens) Tokens {
	return Tokens{Prompt: t.Prompt + o.Prompt, Completion: t.Completion + o.Completion, Cached: t.Cached + o.Cached, Requests: t.Requests + o.Requests,
		CostUSD: t.CostUSD + o.CostUSD}
}

// Totals are tokens per model.
type Totals map[string]Tokens

// Sum returns the tokens of every model together.
func (t Totals) Sum() Tokens {
	var s Tokens
	for _, v := range t {
		s = s.Add(v)
	}
	return s
}

// Summary is a chat's usage over the spans /usage shows.
type Summary struct {
	Turn, Session, Today, Last30 Totals
	// Since is when the records kept start (the oldest one's time), zero
	// when there are none.
	Since time.Time
}

// Store is the usage log of every chat. It is safe for concurrent use.
type Store struct {
	logger *slog.Logger
	now    func() time.Time

	mu      sync.Mutex
	log     *atomicfile.Log
	records map[string][]Record
	// appended counts the appends since the last compaction.
	appended int
	// lastTurn is each chat's latest turn, for "this turn".
	lastTurn map[string]string
	// windows are the plan's usage windows as last reported, by name.
	windows map[string]reportedWindow
}

// Option configures [Open].
type Option func(*Store)

// WithLogger sets the logger (default: discard).
func WithLogger(l *slog.Logger) Option {
	return func(s *Store) {
		if l != nil {
			s.logger = l
		}
	}
}

// WithClock sets the clock (default time.Now), for tests.
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// Open reads the usage log at path (creating it when missing), drops what
// is older than the retention or does not parse, and compacts it.
func Open(path string, opts ...Option) (*Store, error) {
	s := &Store{logger: slog.New(slog.DiscardHandler), now: time.Now, records: map[string][]Record{}, lastTurn: map[string]string{},
		windows: map[string]reportedWindow{}}
	for _, opt := range opts {
		opt(s)
	}
	var all []Record
	// A line that does not parse (the agent can write in the agent dir) is
	// left out with a warning, and the compaction below drops it: a broken
	// usage log must not keep the bot from starting.
	skipped := 0
	log, err := atomicfile.OpenLog(path, 0o600, s.logger, func(_ int, line []byte) error {
		var r Record
		if err := json.Unmarshal(line, &r); err != nil || r.Chat == "" {
			skipped++
			return nil
		}
		all = append(all, r)
		return nil
	})
	if skipped > 0 {
		s.logger.Warn("usage: lines of the usage log do not parse; they are dropped", "path", path, "lines", skipped)
	}
	if err != nil {
		return nil, fmt.Errorf("usage: %w", err)
	}
	s.log = log
	for _, r := range all {
		s.keep(r)
	}
	if err := s.compactLocked(); err != nil {
		s.logger.Warn("usage: the usage log could not be compacted; it keeps growing", "err", err)
	}
	return s, nil
}

// keep adds r to the in-memory records.
func (s *Store) keep(r Record) {
	s.records[r.Chat] = append(s.records[r.Chat], r)
	for _, w := range r.Windows {
		if old, ok := s.windows[w.Name]; !ok || !r.Time.Before(old.at) {
			s.windows[w.Name] = reportedWindow{w, r.Time}
		}
	}
	if r.Turn != "" {
		s.lastTurn[r.Chat] = r.Turn
	}
}

// Add records one model response's usage; a zero Time is now. A record
// that cannot be written is still counted in memory, and the error
// returned.
func (s *Store) Add(r Record) error {
	if r.Time.IsZero() {
		r.Time = s.now()
	}
	r.Time = r.Time.UTC()
	if r.Requests == 0 {
		r.Requests = 1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keep(r)
	if err := s.log.Append(r); err != nil {
		return fmt.Errorf("usage: %w", err)
	}
	s.appended++
	if s.appended >= compactEvery {
		if err := s.compactLocked(); err != nil {
			s.logger.Warn("usage: the usage log could not be compacted; it keeps growing", "err", err)
			s.appended = 0
		}
	}
	return nil
}

// compactLocked drops the records past the retention, merges those past
// the detail span per chat, session, model and quarter hour, and rewrites
// the log with what is left.
func (s *Store) compactLocked() error {
	now := s.now()
	var out []any
	for chat, recs := range s.records {
		kept := compact(recs, now)
		if len(kept) == 0 {
			delete(s.records, chat)
			delete(s.lastTurn, chat)
			continue
		}
		s.records[chat] = kept
		for _, r := range kept {
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b any) int { return a.(Record).Time.Compare(b.(Record).Time) })
	if err := s.log.Rewrite(out...); err != nil {
		return fmt.Errorf("usage: %w", err)
	}
	s.appended = 0
	return nil
}

// compact returns one chat's records past the retention dropped and those
// past the detail span merged, in time order.
func compact(recs []Record, now time.Time) []Record {
	type key struct {
		at             time.Time
		session, model string
	}
	merged := map[key]int{}
	var out []Record
	for _, r := range recs {
		age := now.Sub(r.Time)
		switch {
		case age > retention:
			continue
		case age <= detail:
			out = append(out, r)
			continue
		}
		k := key{r.Time.Truncate(bucket), r.Session, r.Model}
		if i, ok := merged[k]; ok {
			out[i].Tokens = out[i].Tokens.Add(r.Tokens)
			if len(r.Windows) > 0 {
				out[i].Windows = r.Windows // a state: the later report holds
			}
			continue
		}
		merged[k] = len(out)
		r.Time, r.Turn = k.at, ""
		out = append(out, r)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out
}

// reportedWindow is a plan window and when it was reported.
type reportedWindow struct {
	Window
	at time.Time
}

// Windows returns the model plan's usage windows as last reported, by
// name, so that /usage can show them after a restart too.
func (s *Store) Windows() []Window {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Window, 0, len(s.windows))
	for _, name := range slices.Sorted(maps.Keys(s.windows)) {
		out = append(out, s.windows[name].Window)
	}
	return out
}

// Summary sums chat's usage: its latest turn, the session, today and the
// last 30 days (today and the 29 days before it) in loc.
func (s *Store) Summary(chat, session string, loc *time.Location) Summary {
	if loc == nil {
		loc = time.Local
	}
	now := s.now().In(loc)
	today := startOfDay(now)
	month := today.AddDate(0, 0, -29)
	sum := Summary{Turn: Totals{}, Session: Totals{}, Today: Totals{}, Last30: Totals{}}
	s.mu.Lock()
	defer s.mu.Unlock()
	turn := s.lastTurn[chat]
	for _, r := range s.records[chat] {
		if sum.Since.IsZero() || r.Time.Before(sum.Since) {
			sum.Since = r.Time
		}
		if turn != "" && r.Turn == turn {
			sum.Turn[r.Model] = sum.Turn[r.Model].Add(r.Tokens)
		}
		if session != "" && r.Session == session {
			sum.Session[r.Model] = sum.Session[r.Model].Add(r.Tokens)
		}
		if !r.Time.Before(today) {
			sum.Today[r.Model] = sum.Today[r.Model].Add(r.Tokens)
		}
		if !r.Time.Before(month) {
			sum.Last30[r.Model] = sum.Last30[r.Model].Add(r.Tokens)
		}
	}
	return sum
}

// Today sums chat's usage since the start of its day in loc.
func (s *Store) Today(chat string, loc *time.Location) Totals {
	if loc == nil {
		loc = time.Local
	}
	today := startOfDay(s.now().In(loc))
	out := Totals{}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.records[chat] {
		if !r.Time.Before(today) {
			out[r.Model] = out[r.Model].Add(r.Tokens)
		}
	}
	return out
}

// NextDay returns when the day in loc after now's begins: when a chat over
// its daily limit may go on.
func (s *Store) NextDay(loc *time.Location) time.Time {
	if loc == nil {
		loc = time.Local
	}
	return startOfDay(s.now().In(loc)).AddDate(0, 0, 1)
}

// startOfDay returns midnight of t's day in t's zone (the first instant of
// the day where a zone skips midnight).
func startOfDay(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, t.Location())
}

// Close closes the log; adding afterwards is an error.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.Close()
}

// turnKey is the context key of a turn's name.
type turnKey struct{}

// WithTurn returns ctx naming the turn its model requests belong to: the
// chat host sets it on each turn's context, and the recorder reads it with
// [TurnOf].
func WithTurn(ctx context.Context, turn string) context.Context {
	return context.WithValue(ctx, turnKey{}, turn)
}

// TurnOf returns the turn [WithTurn] set on ctx, "" when none.
func TurnOf(ctx context.Context) string {
	t, _ := ctx.Value(turnKey{}).(string)
	return t
}
