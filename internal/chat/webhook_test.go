package chat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// testWebhookSecret is the secret_token of the tests' webhooks.
const testWebhookSecret = "test-webhook-secret_0123456789"

// withWebhookTimings sets the listener's timeouts and the health check's
// interval of a host built WithWebhook (it must come after WithWebhook).
func withWebhookTimings(readHeader, read, check time.Duration) Option {
	return func(h *Host) {
		ws := h.source.(*webhookSource)
		ws.readHeaderTimeout, ws.readTimeout, ws.checkInterval = readHeader, read, check
	}
}

// freeAddr returns a loopback address with a port nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// testWebhook returns a webhook on a free loopback port.
func testWebhook(t *testing.T) Webhook {
	addr := freeAddr(t)
	return Webhook{URL: "http://" + addr + "/telegram/hook", Listen: addr, Secret: testWebhookSecret}
}

// webhookHarness starts a host in webhook mode against tg and waits until
// the webhook is set.
func webhookHarness(t *testing.T, tg *telegramtest.Server, w Webhook, cfg harnessConfig, opts ...Option) *harness {
	t.Helper()
	cfg.tg = tg
	cfg.opts = append(append([]Option{WithWebhook(w)}, opts...), cfg.opts...)
	h := newHarness(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := tg.WaitUntil(ctx, func() bool { return tg.Webhook() != nil }); err != nil {
		t.Fatalf("the webhook was never set: %v", err)
	}
	return h
}

// waitDeliveries waits until the server has made n deliveries with
// success.
func waitDeliveries(t *testing.T, tg *telegramtest.Server, n int) []telegramtest.Delivery {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var ok []telegramtest.Delivery
	err := tg.WaitUntil(ctx, func() bool {
		ok = ok[:0]
		for _, d := range tg.Deliveries() {
			if d.Err == "" {
				ok = append(ok, d)
			}
		}
		return len(ok) >= n
	})
	if err != nil {
		t.Fatalf("waiting for %d successful deliveries: %v (deliveries %+v)", n, err, tg.Deliveries())
	}
	return ok
}

// countUserTexts counts the model requests whose last user message is text.
func countUserTexts(faux *agenttest.FauxProvider, text string) int {
	n := 0
	for _, r := range faux.Requests() {
		if lastUserText(r) == text {
			n++
		}
	}
	return n
}

// In webhook mode the bot sets the webhook with the secret, the allowed
// updates and one connection, answers what is delivered to it, and never
// calls getUpdates or deleteWebhook.
func TestWebhookReceivesUpdates(t *testing.T) {
	tg := telegramtest.New(t)
	w := testWebhook(t)
	h := webhookHarness(t, tg, w, harnessConfig{provider: echoAnswers()})
	h.tg.SendText(userID, userID, "hi")
	h.waitText(userID, "answer to hi")
	h.tg.SendText(userID, userID, "/help")
	h.waitText(userID, "/retry")

	want := &telegramtest.Webhook{URL: w.URL, SecretToken: testWebhookSecret, AllowedUpdates: allowedUpdates(), MaxConnections: 1}
	if diff := cmp.Diff(want, tg.Webhook()); diff != "" {
		t.Errorf("the webhook set (-want +got):\n%s", diff)
	}
	h.stop()
	for _, m := range []string{"getUpdates", "deleteWebhook"} {
		if n := len(tg.RequestsFor(m)); n != 0 {
			t.Errorf("%d %s calls in webhook mode, want none", n, m)
		}
	}
	if tg.Webhook() == nil {
		t.Errorf("the webhook was removed at shutdown; Telegram should keep the updates for the restart")
	}
}

// A request without the right secret is refused 401 before its body is
// read; a bad method, an oversized body and a body that is not an update
// are refused with their statuses; none of them runs anything, and a good
// delivery after them still works.
func TestWebhookRefusesBadRequests(t *testing.T) {
	tg := telegramtest.New(t)
	w := testWebhook(t)
	faux := echoAnswers()
	h := webhookHarness(t, tg, w, harnessConfig{provider: faux})
	update := func(text string) string {
		return fmt.Sprintf(`{"update_id":9001,"message":{"message_id":1,"date":1,"chat":{"id":%d,"type":"private"},"from":{"id":%d,"is_bot":false,"first_name":"U"},"text":%q}}`, userID, userID, text)
	}
	huge := update(strings.Repeat("x", maxWebhookBody))
	tests := []struct {
		name, method, secret, body string
		// chunked hides the length, so that only reading finds it too long.
		chunked bool
		want    int
	}{
		{name: "no secret", method: "POST", body: update("no secret"), want: 401},
		{name: "wrong secret", method: "POST", secret: "wrong-secret-0123456789", body: update("wrong secret"), want: 401},
		{name: "secret with a suffix", method: "POST", secret: testWebhookSecret + "x", body: update("suffix"), want: 401},
		{name: "wrong secret, bad JSON: never parsed", method: "POST", secret: "nope", body: "{not json", want: 401},
		{name: "GET", method: "GET", secret: testWebhookSecret, want: 405},
		{name: "over 1 MiB", method: "POST", secret: testWebhookSecret, body: huge, want: 413},
		{name: "over 1 MiB, chunked", method: "POST", secret: testWebhookSecret, body: huge, chunked: true, want: 413},
		{name: "bad JSON", method: "POST", secret: testWebhookSecret, body: `{"update_id":9002,`, want: 400},
		{name: "no update_id", method: "POST", secret: testWebhookSecret, body: `{"message":{}}`, want: 400},
		{name: "not an object", method: "POST", secret: testWebhookSecret, body: `[1,2]`, want: 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader = strings.NewReader(tt.body)
			if tt.chunked {
				body = io.MultiReader(body) // not a *strings.Reader: no Content-Length
			}
			req, err := http.NewRequest(tt.method, w.URL, body)
			if err != nil {
				t.Fatal(err)
			}
			if tt.secret != "" {
				req.Header.Set(WebhookSecretHeader, tt.secret)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.want)
			}
		})
	}
	h.tg.SendText(userID, userID, "after")
	h.waitText(userID, "answer to after")
	if n := len(faux.Requests()); n != 1 {
		t.Errorf("%d model requests, want 1 (only the delivery from Telegram)", n)
	}
}

// A delivery of an update already taken, whether Telegram lost the 200
// or delivers it again after it, runs once: a message, and a command.
func TestWebhookDuplicateDeliveryRunsOnce(t *testing.T) {
	tg := telegramtest.New(t)
	faux := echoAnswers()
	h := webhookHarness(t, tg, testWebhook(t), harnessConfig{provider: faux})

	tg.LoseNextAnswers(1)
	tg.SendText(userID, userID, "once")
	h.waitText(userID, "answer to once")
	first := waitDeliveries(t, tg, 1)[0]
	if !tg.Redeliver(first.UpdateID) {
		t.Fatal("nothing to redeliver")
	}
	waitDeliveries(t, tg, 2)
	// A later update, once answered, shows the duplicates were handled.
	tg.SendText(userID, userID, "/status")
	h.waitText(userID, "test-model")
	tg.Redeliver(waitDeliveries(t, tg, 3)[2].UpdateID)
	tg.SendText(userID, userID, "last")
	h.waitText(userID, "answer to last")

	if n := countUserTexts(faux, "once"); n != 1 {
		t.Errorf("the message ran %d times, want once", n)
	}
	var lost, statuses int
	for _, d := range tg.Deliveries() {
		if d.Lost {
			lost++
		}
		if strings.Contains(d.Err, "Wrong response") {
			statuses++
		}
	}
	if lost != 1 || statuses != 0 {
		t.Errorf("%d lost answers and %d non-200 answers, want 1 and 0: %+v", lost, statuses, tg.Deliveries())
	}
	statusReplies := 0
	for _, m := range tg.Messages(userID) {
		if strings.Contains(m.Visible, "test-model") {
			statusReplies++
		}
	}
	if statusReplies != 1 {
		t.Errorf("/status answered %d times, want once", statusReplies)
	}
}

// After a restart, a delivery of an update the journal holds (a message
// and a command, answered before the restart) is answered 200 and not run
// again.
func TestWebhookRedeliveryAfterRestartRunsOnce(t *testing.T) {
	tg := telegramtest.New(t)
	w := testWebhook(t)
	faux := echoAnswers()
	dir, ws := t.TempDir(), t.TempDir()
	h := webhookHarness(t, tg, w, harnessConfig{provider: faux, agentDir: dir, workspace: ws})
	tg.SendText(userID, userID, "before the restart")
	h.waitText(userID, "answer to before the restart")
	tg.SendText(userID, userID, "/help")
	h.waitText(userID, helpIntro[:20])
	delivered := waitDeliveries(t, tg, 2)
	h.stop()

	for _, d := range delivered {
		tg.Redeliver(d.UpdateID)
	}
	h2 := webhookHarness(t, tg, w, harnessConfig{provider: faux, agentDir: dir, workspace: ws})
	waitDeliveries(t, tg, 4)
	tg.SendText(userID, userID, "after the restart")
	h2.waitText(userID, "answer to after the restart")
	if n := countUserTexts(faux, "before the restart"); n != 1 {
		t.Errorf("the message ran %d times, want once", n)
	}
	helps := 0
	for _, m := range tg.Messages(userID) {
		if strings.Contains(m.Visible, helpIntro[:20]) {
			helps++
		}
	}
	if helps != 1 {
		t.Errorf("/help answered %d times, want once", helps)
	}
}

// A client that sends its headers or its body slowly does not hold up
// Telegram's deliveries, and is cut off by the listener's timeouts.
func TestWebhookSlowClientsDoNotBlock(t *testing.T) {
	tg := telegramtest.New(t)
	w := testWebhook(t)
	h := webhookHarness(t, tg, w, harnessConfig{provider: echoAnswers()},
		withWebhookTimings(300*time.Millisecond, 600*time.Millisecond, time.Minute))
	slowHeaders := dialSlow(t, w.Listen, "POST /telegram/hook HTTP/1.1\r\nHost: x\r\nContent-Type: appl")
	slowBody := dialSlow(t, w.Listen, "POST /telegram/hook HTTP/1.1\r\nHost: x\r\n"+WebhookSecretHeader+": "+testWebhookSecret+
		"\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"update_id\":")

	h.tg.SendText(userID, userID, "while they dawdle")
	h.waitText(userID, "answer to while they dawdle")
	for name, conn := range map[string]net.Conn{"slow headers": slowHeaders, "slow body": slowBody} {
		// The server closes the connection (after its timeout, and maybe an
		// error status); the read guard only keeps a broken test from
		// hanging.
		conn.SetReadDeadline(time.Now().Add(15 * time.Second))
		_, err := io.Copy(io.Discard, conn)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Errorf("%s: the server never closed the connection", name)
		}
	}
}

// dialSlow connects to addr and sends the start of a request, never the
// rest.
func dialSlow(t *testing.T, addr, start string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := conn.Write([]byte(start)); err != nil {
		t.Fatal(err)
	}
	return conn
}

// Switching from webhook mode back to polling deletes the webhook before
// the first getUpdates, and the updates waiting are then polled.
func TestWebhookToPollingDeletesTheWebhook(t *testing.T) {
	tg := telegramtest.New(t)
	faux := echoAnswers()
	dir, ws := t.TempDir(), t.TempDir()
	h := webhookHarness(t, tg, testWebhook(t), harnessConfig{provider: faux, agentDir: dir, workspace: ws})
	tg.SendText(userID, userID, "by webhook")
	h.waitText(userID, "answer to by webhook")
	h.stop()
	tg.SendText(userID, userID, "while switching")

	tg.FailNext("deleteWebhook", 2, 502, "", 0)
	h2 := newHarness(t, harnessConfig{provider: faux, tg: tg, agentDir: dir, workspace: ws})
	h2.waitText(userID, "answer to while switching")
	var order []string
	for _, r := range tg.Requests() {
		if r.Method == "deleteWebhook" || r.Method == "getUpdates" {
			order = append(order, fmt.Sprintf("%s %d", r.Method, r.Status))
		}
	}
	if len(order) < 4 {
		t.Fatalf("requests %q, want three deleteWebhook, then getUpdates", order)
	}
	if diff := cmp.Diff([]string{"deleteWebhook 502", "deleteWebhook 502", "deleteWebhook 200", "getUpdates 200"}, order[:4]); diff != "" {
		t.Errorf("the requests of the switch (-want +got):\n%s", diff)
	}
	if tg.Webhook() != nil {
		t.Error("the webhook is still set")
	}
	if n := countUserTexts(faux, "while switching"); n != 1 {
		t.Errorf("the message sent while switching ran %d times, want once", n)
	}
}
