package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// TestBinaryUnreachableTelegram starts the built bot against Bot API
// servers it cannot reach (nothing listening; a TLS certificate it does
// not trust): once getMe's retries are spent (about 30 to 60 s, so the two
// run side by side) it exits 1 with one sentence naming the host, the
// kind of failure and TELEGRAM_API_URL, and no line of its log holds the
// token or a Bot API URL.
func TestBinaryUnreachableTelegram(t *testing.T) {
	botBinary(t)
	refused := telegramtest.ClosedAddr(t)
	untrusted := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(untrusted.Close)
	tests := []struct{ name, url, want string }{
		{"refused", "http://" + refused, "Telegram's Bot API at " + refused + " cannot be reached (refused: "},
		{"TLS", untrusted.URL, "Telegram's Bot API at " + strings.TrimPrefix(untrusted.URL, "https://") + " cannot be reached (TLS: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tg := telegramtest.New(t)
			env := procEnv(tg, "http://127.0.0.1:1/v1", t.TempDir(), t.TempDir(), "TELEGRAM_API_URL="+tt.url)
			p := startBot(t, env)
			select {
			case <-p.exited:
			case <-time.After(90 * time.Second):
				t.Fatal("the bot did not give up on an unreachable Telegram within 90 s")
			}
			if code := p.cmd.ProcessState.ExitCode(); code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			log := p.log()
			var last string
			for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
				if strings.Contains(line, "chat host stopped") {
					last = line
				}
				if strings.Contains(line, tg.Token()) || strings.Contains(line, "/bot") {
					t.Errorf("a log line holds the token or a Bot API URL: %s", strings.ReplaceAll(line, tg.Token(), "<the token>"))
				}
			}
			if !strings.Contains(last, tt.want) || !strings.Contains(last, "check TELEGRAM_API_URL") {
				t.Errorf("the last error does not say %q and the variable to check: %s", tt.want, last)
			}
		})
	}
}
