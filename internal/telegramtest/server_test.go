package telegramtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/google/go-cmp/cmp"
)

// startBot starts a real go-telegram/bot client polling srv, with handler as
// its default handler, and stops it when the test ends.
func startBot(t *testing.T, srv *Server, handler bot.HandlerFunc, opts ...bot.Option) *bot.Bot {
	t.Helper()
	opts = append([]bot.Option{
		bot.WithServerURL(srv.URL()),
		bot.WithDefaultHandler(handler),
		bot.WithErrorsHandler(func(err error) { t.Logf("bot error: %v", err) }),
	}, opts...)
	b, err := bot.New(srv.Token(), opts...)
	if err != nil {
		t.Fatalf("bot.New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.Start(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return b
}

// newClient returns a client for direct calls that does not poll.
func newClient(t *testing.T, srv *Server) *bot.Bot {
	t.Helper()
	b, err := bot.New(srv.Token(), bot.WithServerURL(srv.URL()), bot.WithSkipGetMe())
	if err != nil {
		t.Fatalf("bot.New: %v", err)
	}
	return b
}

// apiAnswer is the envelope of every Bot API answer.
type apiAnswer struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Parameters  struct {
		RetryAfter int `json:"retry_after"`
	} `json:"parameters"`
}

// call posts params as JSON to method and decodes the answer.
func call(t *testing.T, srv *Server, method string, params map[string]any) apiAnswer {
	t.Helper()
	body, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(srv.URL()+"/bot"+srv.Token()+"/"+method, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("post %s: %v", method, err)
	}
	defer resp.Body.Close()
	var answer apiAnswer
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
		t.Fatalf("decode answer of %s: %v", method, err)
	}
	if !answer.OK && resp.StatusCode != answer.ErrorCode {
		t.Errorf("%s: HTTP status %d, error_code %d", method, resp.StatusCode, answer.ErrorCode)
	}
	return answer
}

// hangGuard is how long a test waits for an event before it gives up: a
// guard against a hang, never a measure of speed.
const hangGuard = 30 * time.Second

func waitCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	t.Cleanup(cancel)
	return ctx
}

func TestRealClientReceivesUpdateAndReplies(t *testing.T) {
	srv := New(t)
	startBot(t, srv, func(ctx context.Context, b *bot.Bot, u *models.Update) {
		if u.Message == nil {
			return
		}
		_, err := b.SendMessage(ctx, &bot.SendMessageParams{
			ChatID:    u.Message.Chat.ID,
			Text:      "<b>echo</b>: " + u.Message.Text,
			ParseMode: models.ParseModeHTML,
		})
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("SendMessage: %v", err)
		}
	}, bot.WithNotAsyncHandlers())

	sent := srv.SendText(42, 7, "hello")
	req := srv.MustWaitFor(IsMethod("sendMessage"))

	if got, want := req.Params["chat_id"], "42"; got != want {
		t.Errorf("chat_id = %q, want %q", got, want)
	}
	if !strings.HasPrefix(req.ContentType, "multipart/form-data") {
		t.Errorf("content type = %q, want multipart/form-data", req.ContentType)
	}
	got := srv.Messages(42)
	want := []Message{{ChatID: 42, Method: "sendMessage", Text: "<b>echo</b>: hello", ParseMode: "HTML", Visible: "echo: hello"}}
	if diff := cmp.Diff(want, got, cmpMessage()); diff != "" {
		t.Errorf("Messages(42) (-want +got):\n%s", diff)
	}
	if got[0].ID <= sent.ID {
		t.Errorf("reply id %d not after the user's message id %d", got[0].ID, sent.ID)
	}
	if leaks := srv.RequestsContaining(srv.Token()); len(leaks) > 0 {
		t.Errorf("token sent outside the URL path in %d requests, first %s", len(leaks), leaks[0].Method)
	}
	for _, r := range srv.Requests() {
		if r.Token != srv.Token() || !strings.Contains(r.Path, "/bot"+srv.Token()+"/") {
			t.Errorf("request %d %s: token %q, path %q", r.Seq, r.Method, r.Token, r.Path)
		}
	}
}

// cmpMessage ignores the fields a test cannot predict.
func cmpMessage() cmp.Option {
	return cmp.FilterPath(func(p cmp.Path) bool {
		switch p.Last().String() {
		case ".ID", ".Date":
			return true
		}
		return false
	}, cmp.Ignore())
}

func TestRealClientCommandsThreadsAndCallbacks(t *testing.T) {
	srv := New(t)
	var mu sync.Mutex
	var got []string
	record := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, s)
	}
	startBot(t, srv, func(ctx context.Context, b *bot.Bot, u *models.Update) {
		switch {
		case u.CallbackQuery != nil:
			record("callback " + u.CallbackQuery.Data + " on " + u.CallbackQuery.Message.Message.Text)
			if _, err := b.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: u.CallbackQuery.ID}); err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("AnswerCallbackQuery: %v", err)
			}
		case u.Message != nil:
			record("message " + u.Message.Text)
			if _, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: u.Message.Chat.ID, MessageThreadID: u.Message.MessageThreadID, Text: "in topic"}); err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("SendMessage: %v", err)
			}
		}
	}, bot.WithNotAsyncHandlers(), bot.WithMessageTextHandler("start", bot.MatchTypeCommand, func(_ context.Context, _ *bot.Bot, u *models.Update) {
		record("command " + u.Message.Text)
	}))

	srv.SendText(5, 5, "/start now")
	srv.SendText(-100, 5, "topic text", InThread(9))
	reply := srv.MustWaitFor(IsMethod("sendMessage"))
	if got := reply.Int("message_thread_id"); got != 9 {
		t.Errorf("message_thread_id = %d, want 9", got)
	}
	msgs := srv.Messages(-100)
	if len(msgs) != 1 || msgs[0].ThreadID != 9 {
		t.Fatalf("Messages(-100) = %+v, want one message in thread 9", msgs)
	}
	queryID := srv.SendCallback(-100, 5, msgs[0].ID, "yes")
	answer := srv.MustWaitFor(IsMethod("answerCallbackQuery"))
	if answer.Params["callback_query_id"] != queryID {
		t.Errorf("callback_query_id = %q, want %q", answer.Params["callback_query_id"], queryID)
	}

	mu.Lock()
	defer mu.Unlock()
	want := []string{"command /start now", "message topic text", "callback yes on in topic"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("handled updates (-want +got):\n%s", diff)
	}
}

func TestFailNextIsVisibleToTheClient(t *testing.T) {
	tests := []struct {
		name       string
		code       int
		retryAfter int
		check      func(error) bool
	}{
		{"429 with retry_after", http.StatusTooManyRequests, 7, func(err error) bool {
			var tooMany *bot.TooManyRequestsError
			return errors.As(err, &tooMany) && tooMany.RetryAfter == 7
		}},
		{"403", http.StatusForbidden, 0, func(err error) bool { return errors.Is(err, bot.ErrorForbidden) }},
		{"409", http.StatusConflict, 0, func(err error) bool { return errors.Is(err, bot.ErrorConflict) }},
		{"500", http.StatusInternalServerError, 0, func(err error) bool { return err != nil && strings.Contains(err.Error(), "500") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := New(t)
			b := newClient(t, srv)
			srv.FailNext("sendMessage", 1, tt.code, "", tt.retryAfter)
			params := &bot.SendMessageParams{ChatID: 1, Text: "hi"}

			_, err := b.SendMessage(context.Background(), params)
			if !tt.check(err) {
				t.Fatalf("first SendMessage error = %v, not the injected %d", err, tt.code)
			}
			if _, err := b.SendMessage(context.Background(), params); err != nil {
				t.Fatalf("second SendMessage: %v", err)
			}
			statuses := []int{}
			for _, r := range srv.RequestsFor("sendMessage") {
				statuses = append(statuses, r.Status)
			}
			if diff := cmp.Diff([]int{tt.code, http.StatusOK}, statuses); diff != "" {
				t.Errorf("recorded statuses (-want +got):\n%s", diff)
			}
			if got := len(srv.Messages(1)); got != 1 {
				t.Errorf("%d messages stored, want 1 (the failed send stores none)", got)
			}
		})
	}
}

func TestRetryAfterOnTheWire(t *testing.T) {
	srv := New(t)
	srv.FailNext("sendChatAction", 2, http.StatusTooManyRequests, "", 3)
	for range 2 {
		answer := call(t, srv, "sendChatAction", map[string]any{"chat_id": 1, "action": "typing"})
		if answer.OK || answer.ErrorCode != 429 || answer.Parameters.RetryAfter != 3 || answer.Description != "Too Many Requests: retry after 3" {
			t.Errorf("answer = %+v, want 429 with retry_after 3", answer)
		}
	}
	if answer := call(t, srv, "sendChatAction", map[string]any{"chat_id": 1, "action": "typing"}); !answer.OK {
		t.Errorf("third sendChatAction = %+v, want ok", answer)
	}
}

func TestMethodsOnTheWire(t *testing.T) {
	tests := []struct {
		name        string
		setup       func(*Server)
		method      string
		params      map[string]any
		wantOK      bool
		wantCode    int
		wantDescSub string
	}{
		{name: "draft", method: "sendMessageDraft", params: map[string]any{"chat_id": 1, "draft_id": 3, "text": "<i>thinking</i>", "parse_mode": "HTML"}, wantOK: true},
		{name: "draft disabled", setup: func(s *Server) { s.DisableMethod("sendMessageDraft") }, method: "sendMessageDraft", params: map[string]any{"chat_id": 1, "draft_id": 3, "text": "x"}, wantCode: 404, wantDescSub: "Not Found"},
		{name: "draft id zero", method: "sendMessageDraft", params: map[string]any{"chat_id": 1, "text": "x"}, wantCode: 400, wantDescSub: "draft_id"},
		{name: "method names are case-insensitive", method: "SENDMESSAGE", params: map[string]any{"chat_id": 1, "text": "x"}, wantOK: true},
		{name: "unknown method", method: "sendTelepathy", params: map[string]any{}, wantCode: 404},
		{name: "invalid HTML", method: "sendMessage", params: map[string]any{"chat_id": 1, "text": "<b>open", "parse_mode": "HTML"}, wantCode: 400, wantDescSub: "can't parse entities"},
		{name: "bare ampersand", method: "sendMessage", params: map[string]any{"chat_id": 1, "text": "AT&T", "parse_mode": "HTML"}, wantCode: 400, wantDescSub: "can't parse entities"},
		{name: "plain text needs no escaping", method: "sendMessage", params: map[string]any{"chat_id": 1, "text": "AT&T <b>"}, wantOK: true},
		{name: "rejected HTML", setup: func(s *Server) { s.RejectHTML("secret sauce") }, method: "sendMessage", params: map[string]any{"chat_id": 1, "text": "<b>secret sauce</b>", "parse_mode": "HTML"}, wantCode: 400, wantDescSub: "can't parse entities"},
		{name: "rejected HTML sent plain", setup: func(s *Server) { s.RejectHTML("secret sauce") }, method: "sendMessage", params: map[string]any{"chat_id": 1, "text": "secret sauce"}, wantOK: true},
		{name: "empty text", method: "sendMessage", params: map[string]any{"chat_id": 1, "text": "<b> </b>", "parse_mode": "HTML"}, wantCode: 400, wantDescSub: "message text is empty"},
		{name: "too long", method: "sendMessage", params: map[string]any{"chat_id": 1, "text": strings.Repeat("😀", 2049)}, wantCode: 400, wantDescSub: "message is too long"},
		{name: "4096 UTF-16 units fit", method: "sendMessage", params: map[string]any{"chat_id": 1, "text": "<b>" + strings.Repeat("😀", 2048) + "</b>", "parse_mode": "HTML"}, wantOK: true},
		{name: "missing chat", method: "sendMessage", params: map[string]any{"text": "x"}, wantCode: 400, wantDescSub: "chat_id is empty"},
		{name: "edit unknown message", method: "editMessageText", params: map[string]any{"chat_id": 1, "message_id": 99, "text": "x"}, wantCode: 400, wantDescSub: "message to edit not found"},
		{name: "delete unknown message", method: "deleteMessage", params: map[string]any{"chat_id": 1, "message_id": 99}, wantCode: 400, wantDescSub: "message to delete not found"},
		{name: "chat action", method: "sendChatAction", params: map[string]any{"chat_id": 1, "action": "typing"}, wantOK: true},
		{name: "unknown file", method: "getFile", params: map[string]any{"file_id": "nope"}, wantCode: 400, wantDescSub: "invalid file_id"},
		{name: "custom handler", setup: func(s *Server) {
			s.Handle("getChat", func(r Request) (any, *APIError) { return models.ChatFullInfo{ID: r.Int("chat_id")}, nil })
		}, method: "getChat", params: map[string]any{"chat_id": 5}, wantOK: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := New(t)
			if tt.setup != nil {
				tt.setup(srv)
			}
			answer := call(t, srv, tt.method, tt.params)
			if answer.OK != tt.wantOK || (!tt.wantOK && answer.ErrorCode != tt.wantCode) || !strings.Contains(answer.Description, tt.wantDescSub) {
				t.Errorf("answer = %+v, want ok %v, code %d, description containing %q", answer, tt.wantOK, tt.wantCode, tt.wantDescSub)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 || reqs[0].Status != max(tt.wantCode, 200) && tt.wantOK {
				t.Errorf("recorded %+v, want one request", reqs)
			}
		})
	}
}

func TestWrongTokenIsUnauthorized(t *testing.T) {
	srv := New(t, WithToken("111:right-token"))
	_, err := bot.New("222:wrong-token", bot.WithServerURL(srv.URL()))
	if !errors.Is(err, bot.ErrorUnauthorized) {
		t.Fatalf("bot.New with a wrong token: %v, want unauthorized", err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Token != "222:wrong-token" || reqs[0].Status != http.StatusUnauthorized {
		t.Errorf("recorded %+v, want one 401 getMe with the wrong token", reqs)
	}
}

func TestEditDeleteAndVisibleText(t *testing.T) {
	srv := New(t)
	b := newClient(t, srv)
	ctx := context.Background()
	first, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 3, Text: "draft…"})
	if err != nil {
		t.Fatal(err)
	}
	second, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 3, Text: "to delete"})
	if err != nil {
		t.Fatal(err)
	}
	edit := &bot.EditMessageTextParams{ChatID: 3, MessageID: first.ID, Text: "final &lt;answer&gt; <code>x</code>", ParseMode: models.ParseModeHTML}
	edited, err := b.EditMessageText(ctx, edit)
	if err != nil {
		t.Fatalf("EditMessageText: %v", err)
	}
	if edited.Text != "final <answer> x" {
		t.Errorf("edited text in the answer = %q", edited.Text)
	}
	if _, err := b.EditMessageText(ctx, edit); err == nil || !strings.Contains(err.Error(), "message is not modified") {
		t.Errorf("editing to the same text: %v, want message is not modified", err)
	}
	if _, err := b.DeleteMessage(ctx, &bot.DeleteMessageParams{ChatID: 3, MessageID: second.ID}); err != nil {
		t.Fatalf("DeleteMessage: %v", err)
	}
	got := srv.Messages(3)
	want := []Message{{ID: first.ID, ChatID: 3, Method: "sendMessage", Text: edit.Text, ParseMode: "HTML", Visible: "final <answer> x", Edits: 1}}
	if diff := cmp.Diff(want, got, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Date" }, cmp.Ignore())); diff != "" {
		t.Errorf("Messages(3) (-want +got):\n%s", diff)
	}
}

// FailNext(FileDownload, ...) fails the next downloads with the code; the
// ones after it are served again.
func TestFailedDownload(t *testing.T) {
	srv := New(t)
	srv.AddFile("doc-1", "documents/report.txt", []byte("report body"))
	srv.FailNext(FileDownload, 1, http.StatusBadGateway, "", 0)
	url := srv.URL() + "/file/bot" + srv.Token() + "/documents/report.txt"
	var got []int
	for range 2 {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatalf("download: %v", err)
		}
		resp.Body.Close()
		got = append(got, resp.StatusCode)
	}
	if diff := cmp.Diff([]int{http.StatusBadGateway, http.StatusOK}, got); diff != "" {
		t.Errorf("download answers (-want +got):\n%s", diff)
	}
	var recorded []int
	for _, r := range srv.RequestsFor(FileDownload) {
		recorded = append(recorded, r.Status)
	}
	if diff := cmp.Diff([]int{http.StatusBadGateway, http.StatusOK}, recorded); diff != "" {
		t.Errorf("recorded download statuses (-want +got):\n%s", diff)
	}
}

func TestFilesUploadsAndDownloads(t *testing.T) {
	srv := New(t)
	b := newClient(t, srv)
	ctx := context.Background()

	srv.AddFile("doc-1", "documents/report.txt", []byte("report body"))
	voice := srv.SendVoice(8, 8, []byte("OggS fake audio"))
	for _, tt := range []struct {
		fileID string
		want   string
	}{
		{"doc-1", "report body"},
		{voice.Voice.FileID, "OggS fake audio"},
	} {
		t.Run(tt.fileID, func(t *testing.T) {
			file, err := b.GetFile(ctx, &bot.GetFileParams{FileID: tt.fileID})
			if err != nil {
				t.Fatalf("GetFile: %v", err)
			}
			resp, err := http.Get(b.FileDownloadLink(file))
			if err != nil {
				t.Fatalf("download: %v", err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil || resp.StatusCode != http.StatusOK || string(body) != tt.want {
				t.Errorf("download = %d %q (%v), want 200 %q", resp.StatusCode, body, err, tt.want)
			}
		})
	}
	downloads := srv.RequestsFor(FileDownload)
	if len(downloads) != 2 || downloads[0].Params["file_path"] != "documents/report.txt" {
		t.Errorf("downloads recorded = %+v", downloads)
	}

	_, err := b.SendDocument(ctx, &bot.SendDocumentParams{
		ChatID:    8,
		Document:  &models.InputFileUpload{Filename: "out.txt", Data: strings.NewReader("uploaded")},
		Caption:   "<b>here</b>",
		ParseMode: models.ParseModeHTML,
	})
	if err != nil {
		t.Fatalf("SendDocument: %v", err)
	}
	msgs := srv.Messages(8)
	if len(msgs) != 1 || msgs[0].File == nil || string(msgs[0].File.Content) != "uploaded" || msgs[0].File.Filename != "out.txt" || msgs[0].Visible != "here" {
		t.Errorf("Messages(8) = %+v, want the uploaded document", msgs)
	}
	if got := srv.RequestsContaining("uploaded"); len(got) != 1 || got[0].Method != "sendDocument" {
		t.Errorf("RequestsContaining(uploaded) = %+v", got)
	}
}

func TestCommandsRoundTrip(t *testing.T) {
	srv := New(t)
	b := newClient(t, srv)
	ctx := context.Background()
	want := []models.BotCommand{{Command: "new", Description: "Start over"}, {Command: "stop", Description: "Stop the agent"}}
	if _, err := b.SetMyCommands(ctx, &bot.SetMyCommandsParams{Commands: want}); err != nil {
		t.Fatalf("SetMyCommands: %v", err)
	}
	if diff := cmp.Diff(want, srv.Commands()); diff != "" {
		t.Errorf("Commands() (-want +got):\n%s", diff)
	}
	got, err := b.GetMyCommands(ctx, &bot.GetMyCommandsParams{})
	if err != nil || !cmp.Equal(want, got) {
		t.Errorf("GetMyCommands = %v, %v", got, err)
	}
	if _, err := b.DeleteMyCommands(ctx, &bot.DeleteMyCommandsParams{}); err != nil {
		t.Fatalf("DeleteMyCommands: %v", err)
	}
	if got := srv.Commands(); got != nil {
		t.Errorf("Commands() after delete = %v", got)
	}
}

func TestRequestsContainingSeesThroughJSONEscaping(t *testing.T) {
	srv := New(t)
	secret := "s3cr3t<&>value"
	call(t, srv, "sendMessage", map[string]any{"chat_id": 1, "text": "leak: " + secret})
	if bytes.Contains(srv.AllBodies()[0], []byte(secret)) {
		t.Fatal("test premise: JSON escaping should hide the raw secret from a byte scan")
	}
	if got := srv.RequestsContaining(secret); len(got) != 1 {
		t.Errorf("RequestsContaining found %d requests, want 1", len(got))
	}
}

func TestGetUpdatesLongPoll(t *testing.T) {
	srv := New(t)

	t.Run("timeout with nothing queued", func(t *testing.T) {
		// Nothing is queued and the server stays open, so the only way
		// the poll can end with an empty batch is its own timeout.
		got := make(chan apiAnswer, 1)
		go func() { got <- call(t, srv, "getUpdates", map[string]any{"timeout": 1}) }()
		req, err := srv.WaitFor(waitCtx(t), IsMethod("getUpdates"))
		if err != nil {
			t.Fatal(err)
		}
		if timeout := req.Int("timeout"); timeout != 1 {
			t.Errorf("the server saw timeout %d, want 1", timeout)
		}
		var answer apiAnswer
		select {
		case answer = <-got:
		case <-time.After(hangGuard):
			t.Fatalf("the empty poll with timeout 1 did not return within %s", hangGuard)
		}
		if !answer.OK || string(answer.Result) != "[]" {
			t.Errorf("answer = %+v, want ok and []", answer)
		}
		if n := srv.PendingUpdates(); n != 0 {
			t.Errorf("PendingUpdates = %d, want 0", n)
		}
	})

	t.Run("blocks until an update is queued", func(t *testing.T) {
		got := make(chan apiAnswer, 1)
		before := len(srv.RequestsFor("getUpdates"))
		go func() { got <- call(t, srv, "getUpdates", map[string]any{"timeout": 30}) }()
		if _, err := srv.WaitForCount(waitCtx(t), before+1, IsMethod("getUpdates")); err != nil {
			t.Fatal(err)
		}
		id := srv.EnqueueJSON(`{"message":{"message_id":1,"date":1,"chat":{"id":1,"type":"private"},"text":"raw"}}`)
		answer := <-got
		var updates []models.Update
		if err := json.Unmarshal(answer.Result, &updates); err != nil {
			t.Fatal(err)
		}
		if len(updates) != 1 || updates[0].ID != id || updates[0].Message.Text != "raw" {
			t.Errorf("updates = %+v, want the queued one with id %d", updates, id)
		}
	})

	t.Run("offset confirms", func(t *testing.T) {
		next := srv.Enqueue(models.Update{Message: &models.Message{ID: 2, Chat: models.Chat{ID: 1}, Text: "second"}})
		var updates []models.Update
		answer := call(t, srv, "getUpdates", map[string]any{"offset": next})
		if err := json.Unmarshal(answer.Result, &updates); err != nil {
			t.Fatal(err)
		}
		if len(updates) != 1 || updates[0].ID != next {
			t.Errorf("updates = %+v, want only %d", updates, next)
		}
		call(t, srv, "getUpdates", map[string]any{"offset": next + 1})
		if got := srv.PendingUpdates(); got != 0 {
			t.Errorf("PendingUpdates = %d after confirming all", got)
		}
	})
}

func TestCloseReleasesLongPolls(t *testing.T) {
	srv := New(t)
	// The poll asks for a minute; the hang guard is half that, so an
	// answer within the guard is Close's doing.
	done := make(chan string, 1)
	go func() {
		resp, err := http.Post(srv.URL()+"/bot"+srv.Token()+"/getUpdates", "application/json", strings.NewReader(`{"timeout":60}`))
		if err != nil {
			done <- "error"
			return
		}
		defer resp.Body.Close()
		var answer apiAnswer
		if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
			done <- "error"
			return
		}
		done <- string(answer.Result)
	}()
	if _, err := srv.WaitFor(waitCtx(t), IsMethod("getUpdates")); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	select {
	case got := <-done:
		if got != "[]" && got != "error" {
			t.Errorf("the released poll answered %s, want [] or a closed connection", got)
		}
	case <-time.After(hangGuard):
		t.Fatal("Close did not release the long poll")
	}
	if _, err := srv.WaitFor(context.Background(), IsMethod("sendMessage")); err == nil {
		t.Error("WaitFor on a closed server without a match returned no error")
	}
}

func TestWaitForHonoursContext(t *testing.T) {
	srv := New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := srv.WaitFor(ctx, IsMethod("sendMessage"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WaitFor error = %v, want deadline exceeded", err)
	}
}

// WaitUntil returns once its condition holds, checking it again after
// every change of the server's state, and fails when the context ends or
// the server closes first.
func TestWaitUntil(t *testing.T) {
	tests := []struct {
		name    string
		act     func(srv *Server)
		ctx     func(t *testing.T) context.Context
		wantErr error
	}{
		{"an update queued after the wait began", func(srv *Server) { srv.SendText(42, 7, "hello") }, waitCtx, nil},
		{"the server closed", func(srv *Server) { srv.Close() }, waitCtx, errClosed},
		{"the context cancelled", nil, func(t *testing.T) context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := New(t)
			waiting := make(chan struct{})
			var once sync.Once
			cond := func() bool {
				once.Do(func() { close(waiting) })
				return srv.PendingUpdates() > 0
			}
			errc := make(chan error, 1)
			go func() { errc <- srv.WaitUntil(tt.ctx(t), cond) }()
			<-waiting
			if tt.act != nil {
				tt.act(srv)
			}
			select {
			case err := <-errc:
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("WaitUntil = %v, want %v", err, tt.wantErr)
				}
			case <-time.After(hangGuard):
				t.Fatal("WaitUntil did not return")
			}
		})
	}
}

// TestPendingFailures counts the queued failures of a method down as its
// requests take them, and those of one method only.
func TestPendingFailures(t *testing.T) {
	srv := New(t)
	b := newClient(t, srv)
	srv.FailNext("sendMessage", 2, http.StatusBadGateway, "", 0)
	srv.FailNext("getUpdates", 1, http.StatusConflict, "", 0)
	params := &bot.SendMessageParams{ChatID: 1, Text: "hi"}
	var got []int
	for range 3 {
		got = append(got, srv.PendingFailures("sendMessage"))
		_, _ = b.SendMessage(context.Background(), params)
	}
	got = append(got, srv.PendingFailures("sendMessage"), srv.PendingFailures("getUpdates"))
	if diff := cmp.Diff([]int{2, 1, 0, 0, 1}, got); diff != "" {
		t.Errorf("pending failures (sendMessage before each of 3 sends and after, then getUpdates) (-want +got):\n%s", diff)
	}
}
