package turnview

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/chat/botapi"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

const chatID = 1001

// newView returns a view over a fake Telegram, whose client tries a call
// up to six times.
func newView(t *testing.T) (*View, *telegramtest.Server) {
	t.Helper()
	tg := telegramtest.New(t)
	api, err := botapi.New(tg.Token(), redactor.New(nil), botapi.WithBaseURL(tg.URL()),
		botapi.WithRetryPolicy(botapi.RetryPolicy{Attempts: 6, BaseDelay: time.Millisecond, MaxDelay: 10 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	v := New(api, Settings{EditInterval: time.Millisecond})
	t.Cleanup(func() { v.WaitNotices(time.Second) })
	return v, tg
}

// TestVerbsTries holds each verb to its tries: Answer every one the retry
// policy gives, Notice two, Preview one, against a Telegram that fails
// sendMessage with a 500 a number of times first.
func TestVerbsTries(t *testing.T) {
	send := map[string]func(o Outlet, text string) error{
		"Answer": func(o Outlet, text string) error {
			_, err := o.Answer(context.Background(), Message{Text: text})
			return err
		},
		"Notice": func(o Outlet, text string) error {
			var err error
			var wg sync.WaitGroup
			wg.Add(1)
			o.Notice(func(ctx context.Context, n Noticer) { defer wg.Done(); err = n.Say(ctx, text, 0) })
			wg.Wait()
			return err
		},
		"Preview": func(o Outlet, text string) error {
			_, err := o.Preview(context.Background(), nil, Message{Text: text})
			return err
		},
	}
	tests := []struct {
		verb     string
		failures int
		// want is whether the message arrives.
		want bool
	}{
		{"Answer", 3, true},
		{"Notice", 1, true},
		{"Notice", 2, false},
		{"Preview", 0, true},
		{"Preview", 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.verb, func(t *testing.T) {
			v, tg := newView(t)
			if tt.failures > 0 {
				tg.FailNext("sendMessage", tt.failures, 500, "", 0)
			}
			err := send[tt.verb](v.To(Target{ChatID: chatID}), "hello")
			if got := len(tg.Messages(chatID)) == 1; got != tt.want || (err == nil) != tt.want {
				t.Errorf("after %d failures: arrived %v (err %v), want %v", tt.failures, got, err, tt.want)
			}
			if n := len(tg.RequestsFor("sendMessage")); n != min(tt.failures+1, map[string]int{"Answer": 6, "Notice": 2, "Preview": 1}[tt.verb]) {
				t.Errorf("after %d failures: %d tries", tt.failures, n)
			}
		})
	}
}

// TestPreviewGate checks that a 429 closes a gate for its retry_after: the
// next preview through it is dropped untried, one through another gate
// goes out.
func TestPreviewGate(t *testing.T) {
	v, tg := newView(t)
	o := v.To(Target{ChatID: chatID})
	var held, other Gate
	tg.FailNext("sendMessage", 1, 429, "", 60)
	ctx := context.Background()
	if _, err := o.Preview(ctx, &held, Message{Text: "one"}); botapi.ClassOf(err) != botapi.RateLimited {
		t.Fatalf("first preview: %v, want a 429", err)
	}
	if _, err := o.Preview(ctx, &held, Message{Text: "two"}); !errors.Is(err, ErrHeld) {
		t.Errorf("preview through the closed gate: %v, want ErrHeld", err)
	}
	if _, err := o.Preview(ctx, &other, Message{Text: "three"}); err != nil {
		t.Errorf("preview through another gate: %v", err)
	}
	if n := len(tg.RequestsFor("sendMessage")); n != 2 {
		t.Errorf("%d sendMessage requests, want 2 (the held one untried)", n)
	}
}

// failing fails the first n requests whose body holds match with a
// transport error, and passes the rest on.
type failing struct {
	match string
	mu    sync.Mutex
	n     int
}

func (f *failing) RoundTrip(r *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return nil, err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	f.mu.Lock()
	fail := f.n > 0 && bytes.Contains(body, []byte(f.match))
	if fail {
		f.n--
	}
	f.mu.Unlock()
	if fail {
		return nil, errors.New("connection reset")
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestAnswerMarksAFailedPart splits a long answer in two whose second part
// fails every try at first: the chat is told the answer was cut there,
// and the part follows at the end, marked as late.
func TestAnswerMarksAFailedPart(t *testing.T) {
	tg := telegramtest.New(t)
	api, err := botapi.New(tg.Token(), redactor.New(nil), botapi.WithBaseURL(tg.URL()),
		botapi.WithHTTPClient(&http.Client{Transport: &failing{match: "bbbb", n: 3}}),
		botapi.WithRetryPolicy(botapi.RetryPolicy{Attempts: 3, BaseDelay: time.Millisecond, MaxDelay: 10 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	o := New(api, Settings{}).To(Target{ChatID: chatID})
	text := strings.Repeat("a", 4000) + "\n" + strings.Repeat("b", 100)
	if _, err := o.Answer(context.Background(), Message{Text: text, Split: true}); err != nil {
		t.Fatalf("Answer: %v", err)
	}
	var got []string
	for _, m := range tg.Messages(chatID) {
		got = append(got, string([]rune(m.Visible)[:min(len([]rune(m.Visible)), 24)]))
	}
	want := []string{strings.Repeat("a", 24), "⚠️ The answer was cut he", "(part 2 of 2, sent late)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the chat (-want +got):\n%s", diff)
	}
}
