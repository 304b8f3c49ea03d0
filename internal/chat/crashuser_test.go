package chat

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-telegram/bot/models"

	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// crashUser is the user of a crash-point run: the messages they sent, and
// how many times they said /retry.
type crashUser struct {
	tg   *telegramtest.Server
	sent []models.Message
	// words are what each sent message says (a voice note's transcript).
	words   []string
	later   []string // sent once the chat shows a first answer
	retries int
	// help reports that the user sent /help, which must be answered (at
	// least once: a kill after it ran, before it was marked done, runs it
	// again).
	help bool
	// job, when set, is a scheduled prompt the first generation's
	// scheduler fires while the first message runs, so that it waits
	// behind the messages queued, then runs; jobs are the ones the bot
	// took (Prompt returned nil, the journal on the disk holding it), each
	// of which must have an outcome as a message must.
	job *crashJob
	// mu guards jobs: fire runs on a turn's goroutine.
	mu   sync.Mutex
	jobs []crashJob
}

// takenJobs returns the jobs the bot took.
func (u *crashUser) takenJobs() []crashJob {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.jobs)
}

// crashJob is a scheduled prompt of a crash run: its label and its text.
type crashJob struct{ label, text string }

// answer is the chat's answer to the job: labelled.
func (j crashJob) answer() string { return j.label + "\n\nran: " + j.text }

// outcome of one message, as the chat shows it.
type crashOutcome struct {
	answers, reports     int
	firstAnswer          int // message id of the first answer
	lastReport           int // message id of the latest report
	cut, refused, failed bool
}

func (o crashOutcome) final() bool { return o.answers > 0 || o.cut || o.refused || o.failed }

// name is what item i (a message, then a job) is called in a failure
// message.
func (u *crashUser) name(i int) string {
	if i < len(u.words) {
		return u.words[i]
	}
	return u.takenJobs()[i-len(u.words)].label
}

func (o crashOutcome) String() string {
	return fmt.Sprintf("answers=%d reports=%d cut=%v refused=%v failed=%v", o.answers, o.reports, o.cut, o.refused, o.failed)
}

// outcomes reads the chat for each sent message's outcome.
func (u *crashUser) outcomes() []crashOutcome {
	msgs := u.tg.Messages(userID)
	out := make([]crashOutcome, len(u.sent))
	for i, m := range u.sent {
		o := &out[i]
		for _, b := range msgs {
			if b.Visible == "ran: "+u.words[i] {
				o.answers++
				if o.firstAnswer == 0 {
					o.firstAnswer = b.ID
				}
				continue
			}
			if b.ReplyTo != m.ID {
				continue
			}
			switch {
			case strings.Contains(b.Visible, "interrupted by a restart"):
				o.reports++
				o.lastReport = b.ID
			case strings.Contains(b.Visible, "while the answer to this message was being sent"):
				o.cut = true
			case strings.Contains(b.Visible, "so I did not take this one"):
				o.refused = true
			case strings.HasPrefix(b.Visible, "⚠️"):
				o.failed = true
			}
		}
	}
	for _, j := range u.takenJobs() {
		var o crashOutcome
		for _, b := range msgs {
			switch {
			case b.Visible == j.answer():
				o.answers++
				if o.firstAnswer == 0 {
					o.firstAnswer = b.ID
				}
			case !strings.Contains(b.Visible, "“"+j.label+"”") && !strings.HasPrefix(b.Visible, j.label+"\n\n"):
			case strings.Contains(b.Visible, "was interrupted by a restart"):
				o.reports++
				o.lastReport = b.ID
			case strings.Contains(b.Visible, "was being sent"):
				o.cut = true
			case strings.Contains(b.Visible, "queue is full"):
				o.refused = true
			case strings.Contains(b.Visible, "⚠️") && !strings.Contains(b.Visible, "The bot is restarting"):
				o.failed = true
			}
		}
		out = append(out, o)
	}
	return out
}

// describe lists the outcomes for a failure message.
func (u *crashUser) describe(os []crashOutcome) string {
	var b strings.Builder
	for i, o := range os {
		if i >= len(u.sent) {
			fmt.Fprintf(&b, "\n  %q (scheduled prompt): %v", u.name(i), o)
			continue
		}
		fmt.Fprintf(&b, "\n  %q (message %d): %v", u.words[i], u.sent[i].ID, o)
	}
	fmt.Fprintf(&b, "\n  the chat: %s", describe(u.tg.Messages(userID)))
	return b.String()
}

// act does what the user does on seeing the chat: the later messages once
// a first answer shows, /retry once more reports came than /retry was
// said. It reports whether every message has its outcome.
func (u *crashUser) act() bool {
	os := u.outcomes()
	reports, answered, open := 0, false, false
	for _, o := range os {
		reports += o.reports
		answered = answered || o.answers > 0
		if !o.final() {
			open = true
		}
	}
	if answered && len(u.later) > 0 {
		for _, text := range u.later {
			u.sent, u.words = append(u.sent, u.tg.SendText(userID, userID, text)), append(u.words, text)
		}
		u.later = nil
		return false
	}
	if open && reports > u.retries {
		u.retries = reports
		u.tg.SendText(userID, userID, "/retry")
	}
	return !open && len(u.later) == 0 && (!u.help || countVisible(u.tg.Messages(userID), helpIntro[:30]) > 0)
}

// newCrashUser returns the user of a crash run: three messages sent at
// once (one runs, two wait behind it, the last a voice note) with /help
// among them, a scheduled prompt fired while the first one runs (it
// waits behind them), and a fourth message once an answer shows.
func newCrashUser(t *testing.T) *crashUser {
	tg := telegramtest.New(t)
	u := &crashUser{tg: tg, later: []string{"crash m4"}, job: &crashJob{label: "⏰ Job crash", text: "crash p1"}}
	for _, text := range []string{"crash m1", "/help", "crash m2"} {
		m := tg.SendText(userID, userID, text)
		if text == "/help" {
			u.help = true
			continue
		}
		u.sent, u.words = append(u.sent, m), append(u.words, text)
	}
	u.sent, u.words = append(u.sent, tg.SendVoice(userID, userID, []byte(voicePrefix+"crash m3"))), append(u.words, voiceText("crash m3", ""))
	return u
}

// voicePrefix opens the audio of a crash test's voice note; the words
// follow.
const voicePrefix = "OggS "

// wordsTranscriber transcribes a crash test's voice note: its words.
type wordsTranscriber struct{}

func (wordsTranscriber) Transcribe(_ context.Context, _ string, audio []byte) (string, string, error) {
	words, ok := strings.CutPrefix(string(audio), voicePrefix)
	if !ok {
		return "", "", errors.New("not a crash test's voice note")
	}
	return words, "", nil
}
