package chat

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/jpeg"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/openai"
	"github.com/volcanic/telegram-agent/internal/openaitest"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// assertNoSecret fails when any body holds value; it names, never prints.
func assertNoSecret(t *testing.T, where, name, value string, bodies [][]byte) {
	t.Helper()
	for i, b := range bodies {
		if strings.Contains(string(b), value) {
			t.Errorf("%s: request %d carries %s (length %d)", where, i, name, len(value))
		}
	}
}

// (1) env run by the model shows no bot token, whatever variable carries it.
func TestEnvShowsNoBotToken(t *testing.T) {
	tgToken := telegramtest.DefaultToken
	environ := map[string]string{
		"PATH":                os.Getenv("PATH"),
		"TELEGRAM_BOT_TOKEN":  tgToken,
		"Telegram__BotToken":  tgToken,
		"INNOCENT_LOOKING":    tgToken,
		"OPENAI_API_KEY":      openAIKey,
		"HARMLESS_VARIABLE_X": "visible-value",
	}
	faux := agenttest.NewFauxProvider(agenttest.FauxToolCalls(agenttest.FauxCall("bash", `{"command":"env"}`)), echoTool())
	h := newHarness(t, harnessConfig{provider: faux, environ: environ})
	h.tg.SendText(userID, userID, "show me your environment")
	h.waitText(userID, "HARMLESS_VARIABLE_X=visible-value")

	reqs := faux.Requests()
	if len(reqs) != 2 {
		t.Fatalf("model requests = %d, want 2", len(reqs))
	}
	out := lastToolText(reqs[1])
	for _, name := range []string{"TELEGRAM_BOT_TOKEN", "Telegram__BotToken", "INNOCENT_LOOKING", "OPENAI_API_KEY"} {
		if strings.Contains(out, name+"=") {
			t.Errorf("env output shows %s", name)
		}
	}
	if strings.Contains(out, tgToken) || strings.Contains(out, redactor.Token) {
		t.Errorf("env output holds the token (or its redaction): the filter let it through")
	}
	assertNoSecret(t, "telegram", "the bot token", tgToken, h.tg.AllBodies())
	assertNoSecret(t, "telegram", "OPENAI_API_KEY", openAIKey, h.tg.AllBodies())
}

// (2) a bash call printing the bot token from a file shows [REDACTED] in the
// next model request (through the real go-openai adapter) and in everything
// Telegram receives.
func TestTokenFromFileIsRedacted(t *testing.T) {
	token := telegramtest.DefaultToken
	oa := openaitest.New(t, openaitest.WithScript(
		openaitest.ToolCalls(openaitest.ToolCall{Name: "bash", Arguments: `{"command":"cat secret.txt"}`}),
	), openaitest.WithResponder(func(req openaitest.ChatRequest) openaitest.Response {
		return openaitest.Text("The file says: " + req.LastMessage().Text())
	}))
	provider := openai.NewProvider(openai.Config{APIKey: openAIKey, BaseURL: oa.URL(), MaxRetries: -1})
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "secret.txt"), []byte("token="+token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, harnessConfig{provider: provider, workspace: ws})
	h.tg.SendText(userID, userID, "what is in secret.txt?")
	h.waitText(userID, "The file says: token="+redactor.Token)

	chats := oa.ChatRequests()
	if len(chats) != 2 {
		t.Fatalf("model requests = %d, want 2", len(chats))
	}
	if got := chats[1].LastMessage().Text(); !strings.Contains(got, redactor.Token) {
		t.Errorf("the tool result sent to the model does not show %s", redactor.Token)
	}
	assertNoSecret(t, "model provider", "the bot token", token, oa.AllBodies())
	assertNoSecret(t, "telegram", "the bot token", token, h.tg.AllBodies())
}

// (3) a stranger's message causes no model request, in private or in a
// group; a group message of an allowed user that is not for the bot neither.
func TestStrangerCausesNoModelRequest(t *testing.T) {
	faux := agenttest.NewFauxProvider(agenttest.FauxText("hello, allowed user"))
	h := newHarness(t, harnessConfig{provider: faux})
	h.tg.SendText(strangerID, strangerID, "hi, run env for me")
	h.tg.SendText(-500, strangerID, "/status")
	h.tg.SendText(-500, userID, "just chatting in the group")
	h.tg.SendText(userID, userID, "hi")
	h.waitText(userID, "hello, allowed user")
	if n := len(faux.Requests()); n != 1 {
		t.Errorf("model requests = %d, want 1 (the allowed user's)", n)
	}
	// The stranger is told, once, how to get access; nothing else.
	msgs := h.waitMessages(strangerID, "the stranger reply", func(msgs []telegramtest.Message) bool { return len(msgs) > 0 })
	if len(msgs) != 1 || msgs[0].Visible != strangerReply(strangerID) {
		t.Errorf("the stranger got %d messages: %s", len(msgs), describe(msgs))
	}
	if msgs := h.tg.Messages(-500); len(msgs) != 0 {
		t.Errorf("the group got %d messages: %s", len(msgs), describe(msgs))
	}
}

// Groups: a mention, a reply to the bot or a command of an allowed user is
// answered; forum topics get their own sessions.
func TestGroupMentionAndTopics(t *testing.T) {
	faux := agenttest.NewFauxProvider()
	faux.Handle(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		return agent.Response{Text: "echo: " + lastUserText(req)}, nil
	})
	h := newHarness(t, harnessConfig{provider: faux})
	name := h.tg.BotUser().Username
	h.tg.SetChat(modelsChat(-700, true))
	h.tg.SendText(-700, userID, "@"+name+" hello topic", telegramtest.InThread(5))
	h.waitText(-700, "echo: hello topic")
	h.tg.SendText(-700, userID, "@"+name+" other topic", telegramtest.InThread(9))
	h.waitText(-700, "echo: other topic")
	reqs := faux.Requests()
	if len(reqs) != 2 || len(reqs[1].Messages) != 1 {
		t.Fatalf("the second topic's session is not its own: %d requests", len(reqs))
	}
	if _, err := os.Stat(filepath.Join(h.agentDir, "sessions")); err != nil {
		t.Errorf("no transcripts: %v", err)
	}
}

// A private chat with topics (Bot API 9.3) has a session per topic, as a
// forum group has, and its answers, drafts included, go to their topic.
func TestPrivateChatTopics(t *testing.T) {
	faux := agenttest.NewFauxProvider()
	faux.Handle(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		onText("echo: ")
		return agent.Response{Text: "echo: " + lastUserText(req)}, nil
	})
	h := newHarness(t, harnessConfig{provider: faux})
	h.tg.SendText(userID, userID, "hello topic", telegramtest.InPrivateTopic(5))
	h.waitText(userID, "echo: hello topic")
	h.tg.SendText(userID, userID, "other topic", telegramtest.InPrivateTopic(9))
	h.waitText(userID, "echo: other topic")
	reqs := faux.Requests()
	if len(reqs) != 2 || len(reqs[1].Messages) != 1 {
		t.Fatalf("the second topic's session is not its own: %d requests", len(reqs))
	}
	threads := map[string]string{}
	for _, r := range h.tg.RequestsFor("sendMessage") {
		threads[r.Params["text"]] = r.Params["message_thread_id"]
	}
	if threads["echo: hello topic"] != "5" || threads["echo: other topic"] != "9" {
		t.Errorf("the answers went to threads %q, want 5 and 9", threads)
	}
	for _, r := range h.tg.RequestsFor("sendMessageDraft") {
		if th := r.Params["message_thread_id"]; th != "5" && th != "9" {
			t.Errorf("a draft went to thread %q, want its topic", th)
		}
	}
}

// (4) /stop kills a running sleep 1000 and its process group.
func TestStopKillsProcessGroup(t *testing.T) {
	faux := agenttest.NewFauxProvider(
		agenttest.FauxToolCalls(agenttest.FauxCall("bash", `{"command":"echo $$ > pgid; sleep 1000 & echo $! > sleep.pid; wait","timeout":3000}`)),
	)
	faux.Handle(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		return agent.Response{Text: "after stop"}, nil
	})
	h := newHarness(t, harnessConfig{provider: faux})
	h.tg.SendText(userID, userID, "sleep a long time")
	var pgid, sleepPID int
	waitFor(t, "the sleep to start", func() bool {
		pgid = readInt(filepath.Join(h.workspace, "pgid"))
		sleepPID = readInt(filepath.Join(h.workspace, "sleep.pid"))
		return pgid > 0 && sleepPID > 0
	})
	status := h.waitText(userID, "bash: echo")
	if !strings.Contains(status.ReplyMarkup, callbackStop) {
		t.Errorf("the status message has no Stop button: %s", status.ReplyMarkup)
	}
	h.tg.SendText(userID, userID, "/stop")
	h.waitText(userID, "Stopped the running turn")
	waitFor(t, "the process group to die", func() bool { return !groupAlive(pgid) && !processAlive(sleepPID) })
	// The status message lost its Stop button.
	h.waitMessages(userID, "the Stop button removed", func(msgs []telegramtest.Message) bool {
		for _, m := range msgs {
			if strings.Contains(m.Visible, "bash: echo") {
				return !strings.Contains(m.ReplyMarkup, callbackStop)
			}
		}
		return false
	})
}

// (6) a 429 is retried after retry_after.
func TestRateLimitIsRetried(t *testing.T) {
	faux := agenttest.NewFauxProvider(agenttest.FauxText("answer after the rate limit"))
	h := newHarness(t, harnessConfig{provider: faux})
	h.tg.FailNext("sendMessage", 1, 429, "", 1)
	h.tg.SendText(userID, userID, "hi")
	h.waitText(userID, "answer after the rate limit")
	reqs := h.tg.RequestsFor("sendMessage")
	if len(reqs) < 2 || reqs[0].Status != 429 {
		t.Fatalf("want a 429 then a retry; got %d sendMessage requests", len(reqs))
	}
	if gap := reqs[1].Time.Sub(reqs[0].Time); gap < 900*time.Millisecond {
		t.Errorf("retried after %v, before retry_after (1s)", gap)
	}
}

// Transient failures and a 409 on getUpdates do not kill polling.
func TestPollingSurvivesErrors(t *testing.T) {
	faux := agenttest.NewFauxProvider(agenttest.FauxText("still polling"))
	tg := telegramtest.New(t)
	tg.FailNext("getUpdates", 1, 409, "", 0)
	tg.FailNext("getUpdates", 1, 502, "", 0)
	tg.FailNext("getUpdates", 1, 429, "", 1)
	h := newHarness(t, harnessConfig{provider: faux, tg: tg})
	h.tg.SendText(userID, userID, "are you there?")
	h.waitText(userID, "still polling")
	if _, err := os.Stat(filepath.Join(h.agentDir, HeartbeatFile)); err != nil {
		t.Errorf("no heartbeat: %v", err)
	}
}

// (7) a voice note is transcribed through a fake transcription endpoint;
// the transcript is shown and goes to the agent.
func TestVoiceNoteIsTranscribed(t *testing.T) {
	oa := openaitest.New(t, openaitest.WithTranscripts(openaitest.Transcript{Text: "remind me to water the plants"}))
	faux := agenttest.NewFauxProvider(agenttest.FauxText("noted"))
	h := newHarness(t, harnessConfig{provider: faux, opts: []Option{WithTranscriber(openai.NewTranscriber(openai.TranscriberConfig{APIKey: openAIKey, BaseURL: oa.URL(), Model: "whisper-1"}))}})
	h.tg.SendVoice(userID, userID, []byte("OggS fake audio"))
	h.waitText(userID, "🎤 remind me to water the plants")
	h.waitText(userID, "noted")
	// The model is told the words were heard, in which language.
	if got := lastUserText(faux.Requests()[0]); !strings.Contains(got, "[Voice note, transcribed from English]\nremind me to water the plants") {
		t.Errorf("the agent got %q", got)
	}
	tr := oa.TranscriptionRequests()
	if len(tr) != 1 || string(tr[0].File) != "OggS fake audio" || tr[0].Model != "whisper-1" {
		t.Errorf("transcription requests: %+v", len(tr))
	}
}

// Photos go to the model as images; documents are saved under inbox/.
func TestPhotoAndDocument(t *testing.T) {
	faux := agenttest.NewFauxProvider(agenttest.FauxText("nice photo"), agenttest.FauxText("got the file"), agenttest.FauxText("got it again"))
	h := newHarness(t, harnessConfig{provider: faux})
	// A JPEG with a comment segment after its start: the model gets the
	// photo re-encoded from its pixels, without the comment.
	var photo bytes.Buffer
	if err := jpeg.Encode(&photo, image.NewGray(image.Rect(0, 0, 8, 6)), nil); err != nil {
		t.Fatal(err)
	}
	const comment = "a comment the model must not get"
	withComment := append([]byte{0xff, 0xd8, 0xff, 0xfe, 0, byte(len(comment) + 2)}, comment...)
	withComment = append(withComment, photo.Bytes()[2:]...)
	h.tg.SendPhoto(userID, userID, withComment, "look")
	h.waitText(userID, "nice photo")
	req := faux.Requests()[0]
	last := req.Messages[len(req.Messages)-1]
	var img *agent.Content
	for i := range last.Content {
		if last.Content[i].Type == agent.ImageContent {
			img = &last.Content[i]
		}
	}
	if img == nil || img.MIMEType != "image/jpeg" {
		t.Fatalf("the photo did not reach the model as an image")
	}
	if cfg, err := jpeg.DecodeConfig(bytes.NewReader(img.Data)); err != nil || cfg.Width != 8 || cfg.Height != 6 {
		t.Errorf("the image the model got is not the 8×6 photo (%v)", err)
	}
	if bytes.Contains(img.Data, []byte(comment)) {
		t.Error("the image the model got keeps the photo's comment")
	}
	h.tg.SendDocument(userID, userID, "../../etc/Report 2026.pdf", []byte("pdf body"), "")
	h.waitText(userID, "got the file")
	h.tg.SendDocument(userID, userID, "../../etc/Report 2026.pdf", []byte("pdf body 2"), "")
	h.waitText(userID, "got it again")
	for _, name := range []string{"Report_2026.pdf", "Report_2026-1.pdf"} {
		if _, err := os.Stat(filepath.Join(h.workspace, inboxDir, name)); err != nil {
			t.Errorf("inbox: %v", err)
		}
	}
	if got := lastUserText(faux.Requests()[1]); !strings.Contains(got, "inbox/Report_2026.pdf") {
		t.Errorf("the agent was not given the path: %q", got)
	}
}

// (10) messages sent during a turn are queued (the user is told) and run
// afterwards, in order.
func TestMessagesDuringATurnRunInOrder(t *testing.T) {
	release := make(chan struct{})
	faux := agenttest.NewFauxProvider(agenttest.FauxFunc(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		onText("working on one")
		select {
		case <-release:
		case <-ctx.Done():
			return agent.Response{}, ctx.Err()
		}
		return agent.Response{Text: "answer to one"}, nil
	}))
	faux.Handle(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		return agent.Response{Text: "answer to " + lastUserText(req)}, nil
	})
	h := newHarness(t, harnessConfig{provider: faux})
	h.tg.SendText(userID, userID, "one")
	waitFor(t, "the first turn", func() bool { return len(faux.Requests()) == 1 })
	h.tg.SendText(userID, userID, "two")
	h.tg.SendText(userID, userID, "three")
	// Two queued messages make one notice, edited to count them.
	h.waitMessages(userID, "one queued notice for both", func(msgs []telegramtest.Message) bool {
		var queued []string
		for _, m := range msgs {
			if strings.Contains(m.Visible, "Queued") {
				queued = append(queued, m.Visible)
			}
		}
		return len(queued) == 1 && queued[0] == "⏳ Queued: 2 messages; I will get to them after the current turn."
	})
	close(release)
	h.waitText(userID, "answer to three")
	var order []string
	for _, m := range h.tg.Messages(userID) {
		if strings.HasPrefix(m.Visible, "answer to") {
			order = append(order, m.Visible)
		}
	}
	if strings.Join(order, "|") != "answer to one|answer to two|answer to three" {
		t.Errorf("answers in the wrong order: %q", order)
	}
}

func readInt(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	var n int
	fmt.Sscan(strings.TrimSpace(string(data)), &n)
	return n
}
