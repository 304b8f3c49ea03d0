package chat

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-telegram/bot/models"
	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/redactor"
)

// /start greets; an unknown command is answered without a model call; a
// text that merely starts with a slash is a message; a command for another
// bot in a group is ignored.
func TestCommandsForNewUsers(t *testing.T) {
	faux := agenttest.NewFauxProvider()
	faux.Handle(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		return agent.Response{Text: "echo: " + lastUserText(req)}, nil
	})
	h := newHarness(t, harnessConfig{provider: faux})
	h.tg.SendText(userID, userID, "/start")
	h.waitText(userID, "Hi! I'm your agent")
	h.tg.SendText(userID, userID, "/bogus")
	h.waitText(userID, "Unknown command. /help lists what I understand.")
	h.tg.SendText(userID, userID, "/etc/hosts looks odd")
	h.waitText(userID, "echo: /etc/hosts looks odd")
	h.tg.SetChat(models.Chat{ID: -800, Type: models.ChatTypeSupergroup, Title: "Team"})
	h.tg.SendText(-800, userID, "/status@some_other_bot")
	h.tg.SendText(-800, userID, "/bogus")
	h.waitText(-800, "Unknown command.")
	if n := len(h.tg.Messages(-800)); n != 1 {
		t.Errorf("the group got %d messages, want 1 (the command for another bot is ignored): %s", n, describe(h.tg.Messages(-800)))
	}
	if n := len(faux.Requests()); n != 1 {
		t.Errorf("model requests = %d, want 1 (commands never reach the model)", n)
	}
}

// A user who is not allowed is logged at Info once, with the id.
func TestStrangerIsLoggedOnce(t *testing.T) {
	var logs syncBuffer
	h := newHarness(t, harnessConfig{provider: agenttest.NewFauxProvider(agenttest.FauxText("hello")), opts: []Option{WithLogger(bufferLogger(&logs))}})
	h.tg.SendText(strangerID, strangerID, "hi")
	h.tg.SendText(strangerID, strangerID, "hi again")
	h.tg.SendText(userID, userID, "hi")
	h.waitText(userID, "hello")
	want := "level=INFO msg=\"message from a user not in TELEGRAM_ALLOWED_USER_IDS; ignored\" user_id=2002"
	if n := strings.Count(logs.String(), want); n != 1 {
		t.Errorf("the stranger was logged at Info %d times, want 1", n)
	}
}

// A token Telegram rejects stops Run with ErrUnauthorized and a message
// that says what to do.
func TestRejectedTokenIsUnauthorized(t *testing.T) {
	h := newHarness(t, harnessConfig{provider: agenttest.NewFauxProvider()})
	dir := t.TempDir()
	host, err := New(Config{Token: "4242424242:wrong-token-wrong-token", APIURL: h.tg.URL(), AllowedUserIDs: []int64{userID},
		Agent: h.agent, Redactor: redactor.New(nil), AgentDir: dir, WorkspaceDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	err = host.Run(context.Background())
	if !errors.Is(err, ErrUnauthorized) {
		t.Errorf("Run = %v, want ErrUnauthorized", err)
	}
	// One sentence, not the advice followed by ErrUnauthorized's own words.
	want := "chat: telegram rejected TELEGRAM_BOT_TOKEN (401 Unauthorized): check the token with @BotFather"
	if diff := cmp.Diff(want, fmt.Sprint(err)); diff != "" {
		t.Errorf("Run's error (-want +got):\n%s", diff)
	}
}
