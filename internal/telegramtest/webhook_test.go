package telegramtest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// botEndpoint is a webhook receiver that answers each delivery with the
// next status of its script (200 once the script is used up) and keeps
// the secret header and the update_id of each.
type botEndpoint struct {
	mu       sync.Mutex
	statuses []int
	got      []string
}

func (b *botEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var u struct {
		ID int64 `json:"update_id"`
	}
	json.Unmarshal(body, &u)
	b.mu.Lock()
	status := http.StatusOK
	if len(b.statuses) > 0 {
		status, b.statuses = b.statuses[0], b.statuses[1:]
	}
	b.got = append(b.got, r.Header.Get(SecretHeader)+" "+jsonNumber(u.ID))
	b.mu.Unlock()
	w.WriteHeader(status)
}

func (b *botEndpoint) received() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.got...)
}

func jsonNumber(n int64) string { b, _ := json.Marshal(n); return string(b) }

// Once a webhook is set, the queued updates are POSTed to it in order
// with the secret; a delivery answered with anything but 200 is made
// again, getWebhookInfo reports the last error, getUpdates is refused
// with 409, and deleteWebhook brings polling back.
func TestWebhookDelivery(t *testing.T) {
	srv := New(t)
	bot := &botEndpoint{statuses: []int{http.StatusServiceUnavailable}}
	endpoint := httptest.NewServer(bot)
	defer endpoint.Close()

	first := srv.EnqueueJSON(`{"message":{"message_id":1,"date":1,"chat":{"id":5,"type":"private"},"text":"one"}}`)
	if a := call(t, srv, "setWebhook", map[string]any{"url": endpoint.URL + "/hook", "secret_token": "s3cret", "allowed_updates": []string{"message"}, "max_connections": 1}); !a.OK {
		t.Fatalf("setWebhook: %s", a.Description)
	}
	second := srv.EnqueueJSON(`{"message":{"message_id":2,"date":1,"chat":{"id":5,"type":"private"},"text":"two"}}`)
	if err := srv.WaitUntil(waitCtx(t), func() bool { return srv.PendingUpdates() == 0 }); err != nil {
		t.Fatal(err)
	}
	want := []string{"s3cret " + jsonNumber(first), "s3cret " + jsonNumber(first), "s3cret " + jsonNumber(second)}
	if diff := cmp.Diff(want, bot.received()); diff != "" {
		t.Errorf("deliveries (-want +got):\n%s", diff)
	}
	wantDeliveries := []Delivery{
		{UpdateID: first, Status: 503, Err: "Wrong response from the webhook: 503 Service Unavailable"},
		{UpdateID: first, Status: 200}, {UpdateID: second, Status: 200},
	}
	if diff := cmp.Diff(wantDeliveries, srv.Deliveries()); diff != "" {
		t.Errorf("Deliveries (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&Webhook{URL: endpoint.URL + "/hook", SecretToken: "s3cret", AllowedUpdates: []string{"message"}, MaxConnections: 1}, srv.Webhook()); diff != "" {
		t.Errorf("Webhook (-want +got):\n%s", diff)
	}
	var info struct {
		URL     string `json:"url"`
		Pending int    `json:"pending_update_count"`
		LastMsg string `json:"last_error_message"`
	}
	if err := json.Unmarshal(call(t, srv, "getWebhookInfo", nil).Result, &info); err != nil {
		t.Fatal(err)
	}
	if info.URL != endpoint.URL+"/hook" || info.Pending != 0 || !strings.Contains(info.LastMsg, "503") {
		t.Errorf("getWebhookInfo = %+v", info)
	}
	if a := call(t, srv, "getUpdates", nil); a.OK || a.ErrorCode != http.StatusConflict {
		t.Errorf("getUpdates with a webhook set: ok %v, error_code %d; want 409", a.OK, a.ErrorCode)
	}

	// A lost answer: the bot got it, the server delivers it again.
	srv.LoseNextAnswers(1)
	third := srv.EnqueueJSON(`{"message":{"message_id":3,"date":1,"chat":{"id":5,"type":"private"},"text":"three"}}`)
	if err := srv.WaitUntil(waitCtx(t), func() bool { return srv.PendingUpdates() == 0 }); err != nil {
		t.Fatal(err)
	}
	if d := srv.Deliveries()[3]; !d.Lost || d.Status != 200 || d.UpdateID != third {
		t.Errorf("the lost delivery is recorded as %+v", d)
	}
	if !srv.Redeliver(first) || srv.Redeliver(999) {
		t.Error("Redeliver did not queue the delivered update, or queued an unknown one")
	}
	if err := srv.WaitUntil(waitCtx(t), func() bool { return srv.PendingUpdates() == 0 }); err != nil {
		t.Fatal(err)
	}
	if got := len(bot.received()); got != 6 {
		t.Errorf("%d deliveries, want 6", got)
	}

	if a := call(t, srv, "deleteWebhook", nil); !a.OK {
		t.Fatalf("deleteWebhook: %s", a.Description)
	}
	srv.EnqueueJSON(`{"message":{"message_id":4,"date":1,"chat":{"id":5,"type":"private"},"text":"four"}}`)
	if a := call(t, srv, "getUpdates", map[string]any{"timeout": 0}); !a.OK || !strings.Contains(string(a.Result), `"four"`) {
		t.Errorf("getUpdates after deleteWebhook: ok %v, result %s", a.OK, a.Result)
	}
	if srv.Webhook() != nil {
		t.Error("the webhook is still set after deleteWebhook")
	}
}

// A secret_token Telegram would refuse is refused.
func TestSetWebhookChecksTheSecret(t *testing.T) {
	srv := New(t)
	for _, secret := range []string{"has space", strings.Repeat("x", 257)} {
		if a := call(t, srv, "setWebhook", map[string]any{"url": "https://example.com/", "secret_token": secret}); a.OK || a.ErrorCode != 400 {
			t.Errorf("setWebhook with a bad secret (%d characters): ok %v, error_code %d", len(secret), a.OK, a.ErrorCode)
		}
	}
}
