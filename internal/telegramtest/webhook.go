package telegramtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/go-telegram/bot/models"
)

// SecretHeader is the header in which Telegram sends a webhook's
// secret_token with every delivery.
const SecretHeader = "X-Telegram-Bot-Api-Secret-Token"

// deliveryTimeout bounds one delivery: how long the server waits for the
// bot's answer before it counts the delivery as failed, as Telegram does.
const deliveryTimeout = 30 * time.Second

// Webhook is the webhook the bot registered with setWebhook.
type Webhook struct {
	URL            string
	SecretToken    string
	AllowedUpdates []string
	MaxConnections int
}

// Delivery is one POST of an update to the webhook, as the server made it.
type Delivery struct {
	// UpdateID is the update delivered.
	UpdateID int64
	// Status is the bot's HTTP status (0 when no answer came).
	Status int
	// Err says why the delivery failed ("" when the bot answered 200 and
	// the answer was not lost).
	Err string
	// Lost reports an answer the server dropped (LoseNextAnswers).
	Lost bool
}

// webhookState is the server's webhook; the fields are guarded by s.mu.
type webhookState struct {
	hook       *Webhook
	lastErrAt  time.Time
	lastErrMsg string
	deliveries []Delivery
	lose       int
	// delivered holds the updates delivered with success, for Redeliver.
	delivered map[int64]json.RawMessage
	// running reports that the delivery loop was started; stop ends it and
	// done is closed when it has.
	running bool
	stop    context.CancelFunc
	done    chan struct{}
}

// Webhook returns the webhook set with setWebhook, or nil when none is (as
// at start, and after deleteWebhook).
func (s *Server) Webhook() *Webhook {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hook.hook == nil {
		return nil
	}
	w := *s.hook.hook
	w.AllowedUpdates = append([]string(nil), w.AllowedUpdates...)
	return &w
}

// Deliveries returns every delivery made to the webhook so far, in order.
func (s *Server) Deliveries() []Delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Delivery(nil), s.hook.deliveries...)
}

// LoseNextAnswers makes the server drop the bot's answer to the next n
// deliveries (0: none from now on), as when the connection breaks before
// the answer arrives: the bot got the update, but the server counts the
// delivery as failed and delivers the update again.
func (s *Server) LoseNextAnswers(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hook.lose = n
}

// Redeliver queues again an update the webhook answered with success, as
// Telegram does when it did not see the answer in time; it reports
// whether there was one with that id.
func (s *Server) Redeliver(updateID int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	raw, ok := s.hook.delivered[updateID]
	if ok {
		s.queueLocked(updateID, raw)
	}
	return ok
}

// webhookConflict is getUpdates' answer while a webhook is set.
func webhookConflict() *APIError {
	return &APIError{Code: http.StatusConflict, Description: "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"}
}

// setWebhook registers the webhook and starts delivering the queued
// updates to it; an empty url removes it, as Telegram does.
func setWebhook(s *Server, r *Request) (any, *APIError) {
	url := r.Params["url"]
	if url == "" {
		s.hook.hook = nil
		return true, nil
	}
	w := &Webhook{URL: url, SecretToken: r.Params["secret_token"], MaxConnections: int(r.Int("max_connections"))}
	if r.Has("allowed_updates") {
		if err := r.DecodeParam("allowed_updates", &w.AllowedUpdates); err != nil {
			return nil, badRequest("can't parse allowed_updates")
		}
	}
	for _, c := range w.SecretToken {
		if c != '_' && c != '-' && (c < '0' || c > '9') && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') {
			return nil, badRequest("secret token contains unallowed characters")
		}
	}
	if len(w.SecretToken) > 256 {
		return nil, badRequest("secret token is too long")
	}
	s.hook.hook = w
	if !s.hook.running {
		s.hook.running = true
		ctx, cancel := context.WithCancel(context.Background())
		s.hook.stop, s.hook.done = cancel, make(chan struct{})
		go s.deliver(ctx, s.hook.done)
	}
	return true, nil
}

// deleteWebhook removes the webhook; drop_pending_updates drops the queue.
func deleteWebhook(s *Server, r *Request) (any, *APIError) {
	s.hook.hook = nil
	if r.Params["drop_pending_updates"] == "true" {
		s.updates = nil
	}
	return true, nil
}

func getWebhookInfo(s *Server, _ *Request) (any, *APIError) {
	info := models.WebhookInfo{PendingUpdateCount: len(s.updates)}
	if w := s.hook.hook; w != nil {
		info.URL, info.MaxConnections, info.AllowedUpdates = w.URL, w.MaxConnections, w.AllowedUpdates
		if !s.hook.lastErrAt.IsZero() {
			info.LastErrorDate, info.LastErrorMessage = int(s.hook.lastErrAt.Unix()), s.hook.lastErrMsg
		}
	}
	return info, nil
}

// stopDelivering ends the delivery loop and waits for it.
func (s *Server) stopDelivering() {
	s.mu.Lock()
	stop, done := s.hook.stop, s.hook.done
	s.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// deliver POSTs the queued updates to the webhook one at a time, in
// order, until ctx ends: an update leaves the queue when the bot answers
// 200; any other answer, or none, is recorded as the webhook's last error
// and the update is delivered again after the retry delay.
func (s *Server) deliver(ctx context.Context, done chan struct{}) {
	defer close(done)
	client := &http.Client{Timeout: deliveryTimeout}
	for {
		s.mu.Lock()
		changed, hook := s.changed, s.hook.hook
		var next *queuedUpdate
		if hook != nil && len(s.updates) > 0 {
			u := s.updates[0]
			next = &u
		}
		s.mu.Unlock()
		if next == nil {
			select {
			case <-ctx.Done():
				return
			case <-changed:
				continue
			}
		}
		d := s.post(ctx, client, *hook, *next)
		if ctx.Err() != nil {
			return
		}
		s.mu.Lock()
		s.hook.deliveries = append(s.hook.deliveries, d)
		if d.Err == "" {
			s.dequeueLocked(next.id)
			if s.hook.delivered == nil {
				s.hook.delivered = map[int64]json.RawMessage{}
			}
			s.hook.delivered[next.id] = next.raw
		} else {
			s.hook.lastErrAt, s.hook.lastErrMsg = time.Now(), d.Err
		}
		s.notifyLocked()
		s.mu.Unlock()
		if d.Err != "" {
			t := time.NewTimer(s.cfg.webhookRetry)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	}
}

// post makes one delivery of u to the webhook.
func (s *Server) post(ctx context.Context, client *http.Client, hook Webhook, u queuedUpdate) Delivery {
	d := Delivery{UpdateID: u.id}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hook.URL, bytes.NewReader(u.raw))
	if err != nil {
		d.Err = "Bad webhook: invalid URL"
		return d
	}
	req.Header.Set("Content-Type", "application/json")
	if hook.SecretToken != "" {
		req.Header.Set(SecretHeader, hook.SecretToken)
	}
	resp, err := client.Do(req)
	if err != nil {
		// Telegram's own words, which never quote the URL.
		d.Err = "Connection failed"
		switch {
		case strings.Contains(err.Error(), "connection refused"):
			d.Err = "Connection refused"
		case errors.Is(err, context.DeadlineExceeded), strings.Contains(err.Error(), "Timeout"):
			d.Err = "Read timeout expired"
		}
		return d
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	d.Status = resp.StatusCode
	s.mu.Lock()
	if s.hook.lose > 0 {
		s.hook.lose--
		d.Lost = true
	}
	s.mu.Unlock()
	switch {
	case d.Lost:
		d.Err = "Read timeout expired"
	case resp.StatusCode != http.StatusOK:
		d.Err = fmt.Sprintf("Wrong response from the webhook: %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	return d
}

// dequeueLocked removes the first queued update with id; s.mu must be held.
func (s *Server) dequeueLocked(id int64) {
	for i, u := range s.updates {
		if u.id == id {
			s.updates = append(s.updates[:i:i], s.updates[i+1:]...)
			return
		}
	}
}
