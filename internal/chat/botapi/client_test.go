package botapi_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/chat/botapi"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// secret is a configured secret besides the bot token.
const secret = "sk-harness-0penAIkey-0042-fake"

// fastPolicy retries quickly, so that tests do not wait.
var fastPolicy = botapi.RetryPolicy{Attempts: 3, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond}

// newFake returns a fake Bot API server and a client of it whose redactor
// knows the token and secret.
func newFake(t *testing.T) (*telegramtest.Server, *botapi.Client) {
	t.Helper()
	tg := telegramtest.New(t)
	c, err := botapi.New(tg.Token(), redactor.New([]string{tg.Token(), secret}), botapi.WithBaseURL(tg.URL()), botapi.WithRetryPolicy(fastPolicy))
	if err != nil {
		t.Fatal(err)
	}
	return tg, c
}

// assertNeverShown fails when the user could have seen the secret, or any
// request carried it.
func assertNeverShown(t *testing.T, tg *telegramtest.Server) {
	t.Helper()
	for _, s := range tg.Shown() {
		if strings.Contains(s, secret) {
			t.Errorf("the user sees the secret (in a text of %d bytes)", len(s))
		}
	}
	for _, r := range tg.RequestsContaining(secret) {
		t.Errorf("%s request %d carries the secret", r.Method, r.Seq)
	}
}

func TestNewNeedsATokenAndARedactor(t *testing.T) {
	if _, err := botapi.New("", nil); err == nil || !strings.Contains(err.Error(), "token") || !strings.Contains(err.Error(), "redactor") {
		t.Errorf("New without token and redactor = %v, want both named", err)
	}
}

// Everything sent is redacted: texts, edits, drafts, button texts, callback
// answers, command descriptions, captions and file names.
func TestEverythingSentIsRedacted(t *testing.T) {
	tg, c := newFake(t)
	ctx := t.Context()
	kb := &models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{{{Text: "run " + secret, CallbackData: "x"}}}}
	m, err := c.SendMessage(ctx, botapi.Message{ChatID: 1, Text: "the key is " + secret, Buttons: kb})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.EditMessageText(ctx, botapi.Edit{ChatID: 1, MessageID: m.ID, Text: "<b>" + secret + "</b>", ParseMode: models.ParseModeHTML}); err != nil {
		t.Fatal(err)
	}
	if err := c.SendMessageDraft(ctx, botapi.Draft{ChatID: 1, ID: 7, Text: "draft " + secret}); err != nil {
		t.Fatal(err)
	}
	if err := c.AnswerCallbackQuery(ctx, "q1", "toast "+secret); err != nil {
		t.Fatal(err)
	}
	if err := c.SetMyCommands(ctx, []models.BotCommand{{Command: "x", Description: "shows " + secret}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendDocument(ctx, botapi.Upload{ChatID: 1, FileName: secret + ".txt", Data: []byte("content"), Caption: "caption " + secret}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendPhoto(ctx, botapi.Upload{ChatID: 1, FileName: "p.png", Data: []byte("png"), Caption: "<i>" + secret + "</i>", ParseMode: models.ParseModeHTML}); err != nil {
		t.Fatal(err)
	}
	assertNeverShown(t, tg)
	if got := tg.Messages(1)[0].Visible; got != redactor.Token {
		t.Errorf("the edited message shows %q, want the token alone", got)
	}
}

// The user sees what Telegram shows: a secret that tags or entities split
// is redacted as the visible text holds it, and the message goes out as
// its redacted visible text, plain.
func TestVisibleTextIsRedacted(t *testing.T) {
	half := len(secret) / 2
	tests := []struct {
		name, html string
	}{
		{"split by tags", "key: " + secret[:6] + "<b>" + secret[6:half] + "</b>" + secret[half:] + " ok"},
		{"split by an entity", "key: " + secret[:6] + "&#" + fmt.Sprint(int(secret[6])) + ";" + secret[7:] + " ok"},
		{"in a link's address", `<a href="https://e.com/` + secret[:5] + "&#" + fmt.Sprint(int(secret[5])) + ";" + secret[6:] + `">the link</a>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg, c := newFake(t)
			ctx := t.Context()
			m, err := c.SendMessage(ctx, botapi.Message{ChatID: 1, Text: tt.html, ParseMode: models.ParseModeHTML})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.EditMessageText(ctx, botapi.Edit{ChatID: 1, MessageID: m.ID, Text: tt.html + "!", ParseMode: models.ParseModeHTML}); err != nil {
				t.Fatal(err)
			}
			if err := c.SendMessageDraft(ctx, botapi.Draft{ChatID: 1, ID: 1, Text: tt.html, ParseMode: models.ParseModeHTML}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.SendDocument(ctx, botapi.Upload{ChatID: 1, FileName: "f.txt", Data: []byte("x"), Caption: tt.html, ParseMode: models.ParseModeHTML}); err != nil {
				t.Fatal(err)
			}
			assertNeverShown(t, tg)
			if got := tg.Messages(1)[0]; got.ParseMode != "" {
				t.Errorf("the rebuilt message was sent in parse mode %q, want plain", got.ParseMode)
			}
		})
	}
}

// HTML whose visible text holds no secret goes out as it is.
func TestHTMLWithoutSecretsIsKept(t *testing.T) {
	tg, c := newFake(t)
	const html = "<b>bold</b> &amp; <code>code</code>"
	if _, err := c.SendMessage(t.Context(), botapi.Message{ChatID: 1, Text: html, ParseMode: models.ParseModeHTML}); err != nil {
		t.Fatal(err)
	}
	got := tg.Messages(1)[0]
	if diff := cmp.Diff([]string{html, "HTML"}, []string{got.Text, got.ParseMode}); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// A partial text (a streamed preview) never shows a secret's beginning:
// the HTML is cut before the visible run that could begin one, formatting
// kept.
func TestPartialHoldsBackABeginning(t *testing.T) {
	tg, c := newFake(t)
	ctx := t.Context()
	// Ten bytes of the secret: fewer than a fragment, so they are the
	// beginning of a match, not one.
	text := "<b>so far</b> the key is " + secret[:4] + "<i>" + secret[4:10] + "</i>"
	if err := c.SendMessageDraft(ctx, botapi.Draft{ChatID: 1, ID: 1, Text: text, ParseMode: models.ParseModeHTML}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendMessage(ctx, botapi.Message{ChatID: 1, Text: text, ParseMode: models.ParseModeHTML, Partial: true}); err != nil {
		t.Fatal(err)
	}
	for _, r := range tg.RequestsFor("sendMessageDraft") {
		if diff := cmp.Diff([]string{"<b>so far</b> the key is ", "HTML"}, []string{r.Params["text"], r.Params["parse_mode"]}); diff != "" {
			t.Errorf("the draft (-want +got):\n%s", diff)
		}
	}
	if got := tg.Messages(1)[0].Visible; got != "so far the key is " {
		t.Errorf("the partial message shows %q", got)
	}
}

// A failed call is an *Error classified by Telegram's error_code and
// description, with retry_after; a 429 is retried after it.
func TestErrorsAreClassified(t *testing.T) {
	tests := []struct {
		name        string
		code        int
		description string
		retryAfter  int
		class       botapi.Class
		badMarkup   bool
	}{
		{"rate limited", 429, "", 2, botapi.RateLimited, false},
		{"server error", 502, "", 0, botapi.Transient, false},
		{"forbidden", 403, "", 0, botapi.Forbidden, false},
		{"conflict", 409, "", 0, botapi.Conflict, false},
		{"bad markup", 400, "Bad Request: can't parse entities: unsupported start tag", 0, botapi.Permanent, true},
		{"bad request", 400, "Bad Request: chat not found", 0, botapi.Permanent, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg, c := newFake(t)
			tg.FailNext("sendMessage", 1, tt.code, tt.description, tt.retryAfter)
			_, err := c.WithAttempts(1).SendMessage(t.Context(), botapi.Message{ChatID: 1, Text: "hi"})
			var e *botapi.Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want a *botapi.Error", err)
			}
			type got struct {
				Class      botapi.Class
				Code       int
				RetryAfter time.Duration
				BadMarkup  bool
			}
			want := got{tt.class, tt.code, time.Duration(tt.retryAfter) * time.Second, tt.badMarkup}
			if diff := cmp.Diff(want, got{botapi.ClassOf(err), botapi.CodeOf(err), botapi.RetryAfter(err), botapi.IsBadMarkup(err)}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// Under the retry policy a 5xx and a 429 are retried, and the message is
// sent once.
func TestSendIsRetried(t *testing.T) {
	tg, c := newFake(t)
	c.SetWait(func(_ context.Context, d time.Duration) bool { return true })
	tg.FailNext("sendMessage", 1, 502, "", 0)
	tg.FailNext("sendMessage", 1, 429, "", 1)
	if _, err := c.SendMessage(t.Context(), botapi.Message{ChatID: 1, Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	if n := len(tg.Messages(1)); n != 1 {
		t.Errorf("%d messages, want 1", n)
	}
}

// An upload is retried like any other send: the multipart body goes out
// whole again.
func TestUploadIsRetried(t *testing.T) {
	tg, c := newFake(t)
	tg.FailNext("sendDocument", 1, 502, "", 0)
	m, err := c.SendDocument(t.Context(), botapi.Upload{ChatID: 1, ThreadID: 3, FileName: "report.txt", Data: []byte("the content"), Caption: "here", ReplyTo: 9})
	if err != nil {
		t.Fatal(err)
	}
	if m.Document == nil || m.Document.FileName != "report.txt" {
		t.Errorf("the answer does not describe the document: %+v", m.Document)
	}
	msgs := tg.Messages(1)
	if len(msgs) != 1 || msgs[0].File == nil {
		t.Fatalf("messages = %+v, want one with the file", msgs)
	}
	type sent struct {
		Name, Content, Caption string
		Thread, ReplyTo        int
	}
	want := sent{"report.txt", "the content", "here", 3, 9}
	got := sent{msgs[0].File.Filename, string(msgs[0].File.Content), msgs[0].Visible, msgs[0].ThreadID, msgs[0].ReplyTo}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if n := len(tg.RequestsFor("sendDocument")); n != 2 {
		t.Errorf("%d sendDocument requests, want 2", n)
	}
}

// An edit that changes nothing is no failure.
func TestEditNotModified(t *testing.T) {
	_, c := newFake(t)
	ctx := t.Context()
	m, err := c.SendMessage(ctx, botapi.Message{ChatID: 1, Text: "same"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.EditMessageText(ctx, botapi.Edit{ChatID: 1, MessageID: m.ID, Text: "same"}); err != nil || got != nil {
		t.Errorf("EditMessageText = %v, %v, want nil, nil", got, err)
	}
}

// Files are downloaded within a limit; getUpdates returns the raw updates.
func TestDownloadAndUpdates(t *testing.T) {
	tg, c := newFake(t)
	ctx := t.Context()
	tg.AddFile("f1", "documents/a.txt", []byte("0123456789"))
	f, err := c.GetFile(ctx, "f1")
	if err != nil {
		t.Fatal(err)
	}
	data, err := c.Download(ctx, f.FilePath, 0)
	if err != nil || string(data) != "0123456789" {
		t.Errorf("Download = %q, %v", data, err)
	}
	if _, err := c.Download(ctx, f.FilePath, 5); !botapi.IsFileTooLarge(err) || !errors.Is(err, botapi.ErrFileTooLarge) {
		t.Errorf("Download over the limit = %v, want ErrFileTooLarge", err)
	}
	tg.SendText(1, 1, "hello")
	raws, err := c.GetUpdates(ctx, 0, time.Second, []string{"message"})
	if err != nil || len(raws) != 1 || !strings.Contains(string(raws[0]), "hello") {
		t.Errorf("GetUpdates = %d updates, %v", len(raws), err)
	}
}

// No error of the client holds the bot token: not its text, not its %+v
// or %#v form, not anything its Unwrap chain returns, whether the call got
// no answer (the transport's error quotes the URL, which holds the token)
// or Telegram's description quoted it.
func TestErrorsNeverCarryTheToken(t *testing.T) {
	const token = "4242:errors-never-carry-this-token"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close() // nothing listens: every call fails with the URL in its error

	tg := telegramtest.New(t, telegramtest.WithToken(token))
	tg.FailNext("getMe", 1, 400, "Bad Request: no such method /bot"+token+"/getMe", 0)
	tests := []struct {
		name, base string
	}{
		{"no answer", closed},
		{"a description that quotes it", tg.URL()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := botapi.New(token, redactor.New(nil), botapi.WithBaseURL(tt.base), botapi.WithRetryPolicy(botapi.RetryPolicy{Attempts: 1}))
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.GetMe(t.Context())
			if err == nil {
				t.Fatal("getMe succeeded")
			}
			secretPart := strings.Split(token, ":")[1]
			depth := 0
			for e := err; e != nil; e = errors.Unwrap(e) {
				for _, form := range []string{e.Error(), fmt.Sprintf("%v", e), fmt.Sprintf("%+v", e), fmt.Sprintf("%#v", e)} {
					if strings.Contains(form, secretPart) {
						t.Errorf("error %d of the chain (%T) carries the token in a form of %d bytes", depth, e, len(form))
					}
				}
				depth++
			}
			if _, ok := errors.AsType[*botapi.Error](err); !ok {
				t.Errorf("err is a %T, want a *botapi.Error", err)
			}
		})
	}
}
