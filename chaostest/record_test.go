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
	// voice marks a voice note (its transcript names the tag).
	voice bool
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

// outcome is what a chat shows about one message.
type outcome struct {
	// answers counts the complete answers; first is when the first came.
	answers int
	first   time.Time
	// failed: answered with an error the user sees (cut included).
	failed bool
	// cut: the answer a kill may have cut short, told so.
	cut bool
	// reported: reported as interrupted by a restart; reports counts
	// the reports (a crash during its /retry reports it again).
	reported bool
	reports  int
	// retryable: the latest report came after any refusal, so /retry
	// runs the message (a refusal after it, by a full queue, is final).
	retryable bool
	// refused: refused by a full queue, with the busy answer.
	refused bool
	// diskFull: failed because the bot's disk was full, told so.
	diskFull bool
}

// told reports whether the user has been told something final about the
// message: an answer, an error, a report, a refusal.
func (o outcome) told() bool {
	return o.answers > 0 || o.failed || o.reported || o.refused
}

// outcomeOf reads msgs, the bot's messages in m's chat, for tag's outcome.
func outcomeOf(msgs []telegramtest.Message, tag string, m sentMessage) outcome {
	var o outcome
	for _, b := range msgs {
		if isAnswer(b.Visible, tag) {
			o.answers++
			if o.first.IsZero() {
				o.first = b.Date
			}
			continue
		}
		if b.ReplyTo != m.id {
			continue
		}
		switch {
		case strings.Contains(b.Visible, "interrupted by a restart"):
			o.reported, o.retryable = true, true
			o.reports++
		case strings.Contains(b.Visible, "while the answer to this message was being sent"):
			o.cut, o.failed = true, true
		case strings.Contains(b.Visible, "so I did not take this one"):
			o.refused, o.retryable = true, false
		case isFailure(b.Visible):
			o.failed = true
			o.diskFull = o.diskFull || strings.Contains(b.Visible, "disk is full")
		}
	}
	return o
}

// status is what the chats show about the sent messages.
type status struct {
	sent, voice int
	// answers counts, per tag, the complete answers to it.
	answers map[string]int
	// voiceAnswered counts the voice notes answered.
	voiceAnswered int
	// failed are the messages answered with an error the user sees.
	failed int
	// reported are the messages reported as interrupted by a restart.
	reported int
	// cut are the messages whose answer a kill may have cut short, told so.
	cut int
	// refused are the messages a full queue refused, told so.
	refused int
	// diskFull are the failed messages whose error named the full disk.
	diskFull int
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
		o := outcomeOf(msgs, tag, m)
		st.answers[tag] = o.answers
		answered := o.answers > 0
		if m.voice {
			st.voice++
			if answered {
				st.voiceAnswered++
			}
		}
		switch {
		case answered:
			st.latencies = append(st.latencies, o.first.Sub(m.at))
		case o.failed:
			st.failed++
			if o.cut {
				st.cut++
			}
			if o.diskFull {
				st.diskFull++
			}
		case o.refused && !o.reported:
			st.refused++
		}
		if o.reported {
			st.reported++
			if !answered && !o.failed && o.retryable {
				st.waitingReported = append(st.waitingReported, tag)
				st.reportsIn[m.chat]++
			}
		}
		if !o.told() {
			if m.stopper {
				st.stopped++
			} else {
				st.lostTags = append(st.lostTags, tag)
			}
		}
	}
	return st
}

// runtimeSummary is what the bot's "runtime stats" lines say over the run.
type runtimeSummary struct {
	samples                         int
	firstGoroutines, lastGoroutines int
	peakGoroutines                  int
	peakHeap                        int
}

func summarize(samples []statsSample) runtimeSummary {
	rs := runtimeSummary{samples: len(samples)}
	for i, s := range samples {
		if i == 0 {
			rs.firstGoroutines = s.goroutines
		}
		rs.lastGoroutines = s.goroutines
		rs.peakGoroutines = max(rs.peakGoroutines, s.goroutines)
		rs.peakHeap = max(rs.peakHeap, s.heap)
	}
	return rs
}

// tableInput is what the table shows beside the chats' status.
type tableInput struct {
	seed     uint64
	restarts [numKillKinds]int
	// restartTotal is the restarts when they are not told by kind.
	restartTotal         int
	peakRSS, peakThreads int
	// diskPhases counts the disk-full phases the run went through.
	diskPhases                  int
	runtime                     runtimeSummary
	compactions, transcriptions int
	contextWindow               int
	firstPrompt, peakPrompt     int
}

// tableWith prints the run's figures.
func (st *status) tableWith(in tableInput) string {
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
	restarts, kinds := 0, []string{}
	for k, n := range in.restarts {
		restarts += n
		kinds = append(kinds, fmt.Sprintf("%d %s", n, killKind(k)))
	}
	restartText := fmt.Sprintf("%d (%s)", restarts, strings.Join(kinds, ", "))
	if restarts == 0 {
		restartText = fmt.Sprint(in.restartTotal)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| seed | %d |\n|---|---|\n", in.seed)
	rows := []struct {
		name string
		v    any
	}{
		{"messages sent", st.sent},
		{"of them voice notes (answered)", fmt.Sprintf("%d (%d)", st.voice, st.voiceAnswered)},
		{"answered", answered},
		{"answered with an error (model, transcription or Telegram fault, full disk)", st.failed - st.cut},
		{"of them told the disk was full", st.diskFull},
		{"interrupted and reported (then /retry)", st.reported},
		{"answer being sent when killed, told so", st.cut},
		{"refused by a full queue, told so", st.refused},
		{"dropped by /stop (told once, in its answer)", st.stopped},
		{"lost (must be 0)", len(st.lostTags)},
		{"duplicated (must be 0)", dup},
		{"p50 time to answer", pct(0.50)},
		{"p99 time to answer", pct(0.99)},
		{"restarts", restartText},
		{"disk-full phases (healthcheck unhealthy, then healthy again)", in.diskPhases},
		{"prompt tokens (MODEL_CONTEXT_WINDOW; first request, peak)", fmt.Sprintf("%d; %d, %d", in.contextWindow, in.firstPrompt, in.peakPrompt)},
		{"compaction summaries asked of the model", in.compactions},
		{"transcriptions asked", in.transcriptions},
		{"peak VmRSS", fmt.Sprintf("%.1f MB", float64(in.peakRSS)/1024)},
		{"peak threads", in.peakThreads},
		{"goroutines (runtime stats lines: first, last, peak)", fmt.Sprintf("%d lines: %d, %d, %d", in.runtime.samples, in.runtime.firstGoroutines, in.runtime.lastGoroutines, in.runtime.peakGoroutines)},
		{"peak live heap", fmt.Sprintf("%.1f MB", float64(in.runtime.peakHeap)/(1<<20))},
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %v |\n", r.name, r.v)
	}
	return b.String()
}
