package chat

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/chat/botapi"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// A Bot API server nothing listens at stops Run, once getMe's retries are
// spent, with one sentence: the host, the kind of failure and the variable
// to check, never the URL or the token.
func TestUnreachableTelegramIsOneSentence(t *testing.T) {
	h := newHarness(t, harnessConfig{provider: agenttest.NewFauxProvider()})
	addr := telegramtest.ClosedAddr(t)
	const token = "4242424242:unreachable-host-token-0052"
	dir := t.TempDir()
	host, err := New(Config{Token: token, APIURL: "http://" + addr, AllowedUserIDs: []int64{userID},
		Agent: h.agent, Redactor: redactor.New([]string{token}), AgentDir: dir, WorkspaceDir: dir},
		withRetryPolicy(botapi.RetryPolicy{Attempts: 3, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	err = host.Run(context.Background())
	want := "chat: Telegram's Bot API at " + addr + " cannot be reached (refused: nothing listens at that address and port): check TELEGRAM_API_URL (unset for api.telegram.org) and that this host can reach it"
	if diff := cmp.Diff(want, fmt.Sprint(err)); diff != "" {
		t.Errorf("Run's error (-want +got):\n%s", diff)
	}
	if strings.Contains(fmt.Sprint(err), token) {
		t.Error("Run's error holds the token")
	}
}
