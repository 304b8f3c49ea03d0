package main

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/chat"
	"github.com/volcanic/telegram-agent/internal/openaitest"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// webhookEnv returns the variables of webhook mode on a free loopback
// port, and the webhook's URL. Plain http is accepted because
// TELEGRAM_API_URL names the fake, not Telegram.
func webhookEnv(t *testing.T) ([]string, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	url := "http://" + addr + "/telegram"
	return []string{"TELEGRAM_WEBHOOK_URL=" + url, "TELEGRAM_WEBHOOK_LISTEN=" + addr}, url
}

// waitTG waits until cond holds, checking after every change of the fake's
// state.
func waitTG(t *testing.T, tg *telegramtest.Server, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := tg.WaitUntil(ctx, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// The built binary in webhook mode: it sets the webhook with the secret
// derived from the token (never logged), answers what Telegram delivers,
// refuses a request without the secret, never polls, keeps the webhook at
// SIGTERM; started again without TELEGRAM_WEBHOOK_URL, it deletes the
// webhook before it polls.
func TestBinaryWebhookThenPolling(t *testing.T) {
	tg := telegramtest.New(t)
	oa := openaitest.New(t, openaitest.WithResponder(func(req openaitest.ChatRequest) openaitest.Response {
		text, _ := unstamped(req.LastMessage().Text())
		return openaitest.Text("echo: " + text)
	}))
	agentDir, ws := t.TempDir(), t.TempDir()
	hookEnv, url := webhookEnv(t)
	p := startBot(t, procEnv(tg, oa.URL(), agentDir, ws, hookEnv...))
	p.waitLog("receiving updates by webhook")
	hook := tg.Webhook()
	if hook == nil || hook.URL != url {
		t.Fatalf("the webhook set is %+v, want the URL of TELEGRAM_WEBHOOK_URL", hook)
	}
	secret := chat.DeriveWebhookSecret(tg.Token())
	if hook.SecretToken != secret {
		t.Errorf("the secret_token is not the one derived from the token (length %d, want %d)", len(hook.SecretToken), len(secret))
	}
	tg.SendText(procUser, procUser, "by webhook")
	waitMessage(t, tg, procUser, "echo: by webhook")
	if _, err := os.Stat(filepath.Join(agentDir, HeartbeatFile)); err != nil {
		t.Errorf("heartbeat: %v", err)
	}
	resp, err := http.Post(url, "application/json", strings.NewReader(`{"update_id":77}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a request without the secret got %d, want 401", resp.StatusCode)
	}
	if code, _ := p.terminate(); code != 0 {
		t.Errorf("exit %d", code)
	}
	if n := len(tg.RequestsFor("getUpdates")); n != 0 {
		t.Errorf("%d getUpdates calls in webhook mode", n)
	}
	if strings.Contains(p.log(), secret) {
		t.Errorf("the log holds the webhook secret")
	}
	if tg.Webhook() == nil {
		t.Fatal("the webhook was deleted at shutdown")
	}

	tg.SendText(procUser, procUser, "while switching")
	p2 := startBot(t, procEnv(tg, oa.URL(), agentDir, ws))
	waitMessage(t, tg, procUser, "echo: while switching")
	var order []string
	for _, r := range tg.Requests() {
		if r.Method == "deleteWebhook" || r.Method == "getUpdates" {
			order = append(order, r.Method)
		}
	}
	if len(order) < 2 || order[0] != "deleteWebhook" || order[1] != "getUpdates" {
		t.Errorf("the requests of the switch begin %q, want deleteWebhook then getUpdates", order[:min(len(order), 3)])
	}
	if code, _ := p2.terminate(); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// kill -9 after an update is journaled, before Telegram saw its 200:
// Telegram delivers it again to the restarted bot, which answers 200
// without running it again, tells the chat it was interrupted, and runs
// it on /retry.
func TestBinaryWebhookKillBeforeTheAnswer(t *testing.T) {
	tg := telegramtest.New(t)
	oa := openaitest.New(t, openaitest.WithScript(
		openaitest.Text("never arrives").Fail(openaitest.FailStall, 0),
		openaitest.Text("the answer after the retry"),
	))
	agentDir, ws := t.TempDir(), t.TempDir()
	hookEnv, _ := webhookEnv(t)
	env := procEnv(tg, oa.URL(), agentDir, ws, append(hookEnv, "TELEGRAM_WEBHOOK_SECRET=operator-chosen-secret_0123")...)
	p := startBot(t, env)
	p.waitLog("receiving updates by webhook")
	if hook := tg.Webhook(); hook == nil || hook.SecretToken != "operator-chosen-secret_0123" {
		t.Fatal("the webhook is not set with TELEGRAM_WEBHOOK_SECRET")
	}

	// Every answer is lost until the kill: Telegram never sees a 200.
	tg.LoseNextAnswers(1 << 30)
	tg.SendText(procUser, procUser, "an important message")
	if _, err := oa.WaitForRequests(1, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	waitTG(t, tg, "a lost answer", func() bool {
		for _, d := range tg.Deliveries() {
			if d.Lost && d.Status == http.StatusOK {
				return true
			}
		}
		return false
	})
	p.cmd.Process.Kill()
	<-p.exited
	tg.LoseNextAnswers(0)
	if tg.PendingUpdates() != 1 {
		t.Fatalf("%d updates wait for delivery, want the message", tg.PendingUpdates())
	}

	startBot(t, env)
	waitMessage(t, tg, procUser, "interrupted by a restart")
	waitTG(t, tg, "the redelivery", func() bool { return tg.PendingUpdates() == 0 })
	tg.SendText(procUser, procUser, "/retry")
	waitMessage(t, tg, procUser, "the answer after the retry")
	var runs int
	for _, r := range oa.ChatRequests() {
		if strings.Contains(r.LastMessage().Text(), "an important message") {
			runs++
		}
	}
	if runs != 2 {
		t.Errorf("the message reached the model %d times, want twice: once before the kill, once for /retry", runs)
	}
	if n := len(tg.RequestsFor("getUpdates")); n != 0 {
		t.Errorf("%d getUpdates calls in webhook mode", n)
	}
}
