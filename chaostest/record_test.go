package chaostest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// sentMessage is one message a chat sent.
type sentMessage struct {
	chat int64
	id   int
	at   time.Time
	// stopper marks a chat that also sends /stop, whose dropped messages
	// are told in one answer to the /stop rather than each on its own.
	stopper bool
}

// record is every message the chats sent, by tag.
type record struct {
	mu   sync.Mutex
	sent map[string]sentMessage
}

func (r *record) add(tag string, m sentMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent[tag] = m
}

// status is what the chats show about the sent messages.
type status struct {
	sent int
	// answers counts, per tag, the complete answers to it.
	answers map[string]int
	// failed are the messages answered with an error the user sees.
	failed int
	// reported are the messages reported as interrupted by a restart.
	reported int
	// cut are the messages whose answer a kill may have cut short, told so.
	cut int
	// reportsIn counts the reports per chat.
	reportsIn map[int64]int
	// waitingReported are reported messages not yet answered.
	waitingReported []string
	// lostTags have no outcome at all (yet).
	lostTags []string
	// latencies are the times from a message to its first answer.
	latencies []time.Duration
	// stopped counts the messages of /stop chats without an outcome.
	stopped int
}

func (st *status) openChats() []string { return st.lostTags }

// retryChats returns the chats with a reported message not answered yet.
func (st *status) retryChats() []int64 {
	var out []int64
	for c, n := range st.reportsIn {
		if n > 0 {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

// isAnswer reports whether text is a complete answer to tag (the model's
// final text, not a stream cut short).
func isAnswer(text, tag string) bool {
	return !strings.Contains(text, "(stopped)") &&
		(strings.Contains(text, "answer "+tag+" done") || strings.Contains(text, "answer "+tag+" direct"))
}

// isFailure reports whether text is an error answer (not a notice about
// the queue or a restart).
func isFailure(text string) bool {
	return strings.Contains(text, "⚠️") && !strings.Contains(text, "interrupted by a restart") &&
		!strings.Contains(text, "is restarting") && !strings.Contains(text, "being sent")
}

func (r *record) classify(tg *telegramtest.Server) *status {
	r.mu.Lock()
	sent := maps.Clone(r.sent)
	r.mu.Unlock()
	st := &status{sent: len(sent), answers: map[string]int{}, reportsIn: map[int64]int{}}
	byChat := map[int64][]telegramtest.Message{}
	for _, tag := range slices.Sorted(maps.Keys(sent)) {
		m := sent[tag]
		msgs, ok := byChat[m.chat]
		if !ok {
			msgs = tg.Messages(m.chat)
			byChat[m.chat] = msgs
		}
		var first time.Time
		failed, reported := false, false
		for _, b := range msgs {
			if isAnswer(b.Visible, tag) {
				st.answers[tag]++
				if first.IsZero() {
					first = b.Date
				}
				continue
			}
			if b.ReplyTo != m.id {
				continue
			}
			switch {
			case strings.Contains(b.Visible, "interrupted by a restart"):
				reported = true
			case strings.Contains(b.Visible, "while the answer to this message was being sent"):
				st.cut++
				failed = true
			case isFailure(b.Visible):
				failed = true
			}
		}
		answered := st.answers[tag] > 0
		switch {
		case answered:
			st.latencies = append(st.latencies, first.Sub(m.at))
		case failed:
			st.failed++
		}
		if reported {
			st.reported++
			if !answered && !failed {
				st.waitingReported = append(st.waitingReported, tag)
				st.reportsIn[m.chat]++
			}
		}
		if !answered && !failed && !reported {
			if m.stopper {
				st.stopped++
			} else {
				st.lostTags = append(st.lostTags, tag)
			}
		}
	}
	return st
}

// table prints the run's figures.
func (st *status) table(seed uint64, restarts, peakRSS, peakThreads int) string {
	answered, dup := 0, 0
	for _, n := range st.answers {
		if n > 0 {
			answered++
		}
		if n > 1 {
			dup++
		}
	}
	lat := slices.Clone(st.latencies)
	slices.Sort(lat)
	pct := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(p*float64(len(lat))))].Round(10 * time.Millisecond)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| seed | %d |\n|---|---|\n", seed)
	rows := []struct {
		name string
		v    any
	}{
		{"messages sent", st.sent},
		{"answered", answered},
		{"answered with an error (model or Telegram fault)", st.failed - st.cut},
		{"interrupted and reported (then /retry)", st.reported},
		{"answer being sent when killed, told so", st.cut},
		{"dropped by /stop (told once, in its answer)", st.stopped},
		{"lost (must be 0)", len(st.lostTags)},
		{"duplicated (must be 0)", dup},
		{"p50 time to answer", pct(0.50)},
		{"p99 time to answer", pct(0.99)},
		{"restarts (SIGKILL or SIGTERM)", restarts},
		{"peak VmRSS", fmt.Sprintf("%.1f MB", float64(peakRSS)/1024)},
		{"peak threads", peakThreads},
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %v |\n", r.name, r.v)
	}
	return b.String()
}
