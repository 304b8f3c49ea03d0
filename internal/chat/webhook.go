package chat

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/volcanic/telegram-agent/internal/chat/botapi"
)

// Webhook configures webhook mode (WithWebhook): Telegram POSTs every
// update to URL, which a proxy forwards to the listener at Listen.
type Webhook struct {
	// URL is the public https URL given to setWebhook
	// (TELEGRAM_WEBHOOK_URL). Any path on the listener is served.
	URL string
	// Listen is the listener's address (TELEGRAM_WEBHOOK_LISTEN).
	Listen string
	// Secret is the secret_token Telegram sends back with every delivery
	// (TELEGRAM_WEBHOOK_SECRET, or DeriveWebhookSecret's); required.
	Secret string
}

// ErrWebhookRejected is what Run's error wraps when Telegram refuses the
// webhook (setWebhook answered a 4xx): the configuration must change.
var ErrWebhookRejected = errors.New("chat: telegram rejected the webhook")

// WebhookSecretHeader is the header Telegram sends the secret_token in.
const WebhookSecretHeader = "X-Telegram-Bot-Api-Secret-Token"

// maxWebhookBody bounds an update's body: Telegram's are a few KiB.
const maxWebhookBody = 1 << 20

// Webhook defaults: the listener's timeouts (a slow client is cut off,
// and never holds up another request, each being served on its own), and
// how often the webhook's health is checked (the heartbeat's age limit is
// 90 s: three checks).
const (
	webhookReadHeaderTimeout = 10 * time.Second
	webhookReadTimeout       = 30 * time.Second
	webhookWriteTimeout      = 30 * time.Second
	webhookIdleTimeout       = 2 * time.Minute
	webhookCheckInterval     = 30 * time.Second
	webhookShutdownGrace     = 5 * time.Second
)

// WithWebhook makes the host receive its updates by webhook instead of
// long polling. Run then listens on w.Listen, calls setWebhook with
// w.URL, w.Secret and the allowed updates, and never calls getUpdates.
func WithWebhook(w Webhook) Option {
	return func(h *Host) {
		h.source = &webhookSource{
			h: h, cfg: w,
			readHeaderTimeout: webhookReadHeaderTimeout,
			readTimeout:       webhookReadTimeout,
			checkInterval:     webhookCheckInterval,
		}
		h.journalEvery = true
	}
}

// webhookSource is the update source of webhook mode. Telegram delivers
// one update at a time (max_connections 1) and delivers it again until
// it is answered 200, so each update is journaled (fsync) before its 200,
// and a delivery of an update already taken (its id is not above the
// highest taken, or the journal held it at start-up) is answered 200
// without running it again.
type webhookSource struct {
	h   *Host
	cfg Webhook
	// readHeaderTimeout, readTimeout and checkInterval are the defaults
	// above unless a test sets them.
	readHeaderTimeout, readTimeout, checkInterval time.Duration

	// ctx is run's: taken updates are dispatched under it.
	ctx  context.Context
	take func(context.Context, []json.RawMessage) bool
	// mu serialises the taking of updates, so that they are dispatched in
	// the order they came, and guards last, the highest update id taken.
	mu   sync.Mutex
	last int64
}

// run listens, registers the webhook and checks its health until ctx
// ends; then it stops the listener, letting the requests in flight
// finish. It fails when the address cannot be listened on, when Telegram
// rejects the webhook, or when the listener stops.
func (ws *webhookSource) run(ctx context.Context, take func(context.Context, []json.RawMessage) bool) error {
	h := ws.h
	ws.ctx, ws.take = ctx, take
	ws.last = max(h.journal.ResumeOffset(time.Now())-1, 0)
	ln, err := net.Listen("tcp", ws.cfg.Listen)
	if err != nil {
		return fmt.Errorf("chat: webhook: %w", err)
	}
	srv := &http.Server{
		Handler:           ws,
		ReadHeaderTimeout: ws.readHeaderTimeout,
		ReadTimeout:       ws.readTimeout,
		WriteTimeout:      webhookWriteTimeout,
		IdleTimeout:       webhookIdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(h.logger.Handler(), slog.LevelDebug),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		stop, cancel := context.WithTimeout(context.Background(), webhookShutdownGrace)
		defer cancel()
		if err := srv.Shutdown(stop); err != nil {
			h.logger.Warn("webhook listener: requests still in flight at shutdown", "err", err)
		}
	}()
	if err := ws.register(ctx); err != nil || ctx.Err() != nil {
		return err
	}
	h.logger.Info("receiving updates by webhook", "listen", ln.Addr().String(), "url_host", hostOfURL(ws.cfg.URL),
		"allowed_users", len(h.cfg.AllowedUserIDs), "model", h.cfg.Model)
	return ws.monitor(ctx, probeAddr(ln.Addr()), served)
}

// register calls setWebhook until it succeeds: a transient failure is
// retried (after the client's own retries) until ctx ends; a refusal is
// returned, wrapping ErrWebhookRejected.
func (ws *webhookSource) register(ctx context.Context) error {
	hook := botapi.Webhook{URL: ws.cfg.URL, SecretToken: ws.cfg.Secret, AllowedUpdates: allowedUpdates(), MaxConnections: 1}
	for failures := 0; ctx.Err() == nil; failures++ {
		err := ws.h.api.SetWebhook(ctx, hook)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return nil
		}
		if c := botapi.ClassOf(err); c == botapi.Permanent || c == botapi.Forbidden {
			return fmt.Errorf("%w: %w", ErrWebhookRejected, err)
		}
		delay := ws.h.retry.Backoff(failures)
		ws.h.logger.Warn("setWebhook failed; retrying", "err", err, "delay", delay)
		ws.h.pollSleep(ctx, delay)
	}
	return nil
}

// monitor checks the webhook's health now and every checkInterval until
// ctx ends, and touches the heartbeat after every healthy check. It
// returns the listener's error if the listener stops.
func (ws *webhookSource) monitor(ctx context.Context, probe string, served <-chan error) error {
	client := &http.Client{Timeout: 5 * time.Second}
	healthy, since := true, time.Now()
	for {
		problem := ws.check(ctx, client, probe, since)
		since = time.Now()
		switch {
		case ctx.Err() != nil:
			return nil
		case problem == "":
			ws.h.touchHeartbeat()
			if !healthy {
				ws.h.logger.Info("the webhook is healthy again")
			}
		case healthy:
			ws.h.logger.Warn("the webhook is not healthy; the heartbeat stops until it is", "reason", problem)
		}
		healthy = problem == ""
		t := time.NewTimer(ws.checkInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case err := <-served:
			t.Stop()
			return fmt.Errorf("chat: webhook listener stopped: %w", err)
		case <-t.C:
		}
	}
}

// check returns why the webhook is not alive, or "" when it is: the
// listener answers a request, getWebhookInfo succeeds and names this
// bot's URL, and Telegram reports no delivery error since the last check
// while updates wait.
func (ws *webhookSource) check(ctx context.Context, client *http.Client, probe string, since time.Time) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, probe, nil)
	if err != nil {
		return "the listener cannot be probed"
	}
	resp, err := client.Do(req)
	if err != nil {
		return "the listener does not answer"
	}
	resp.Body.Close()
	info, err := ws.h.api.GetWebhookInfo(ctx)
	switch {
	case err != nil:
		return "getWebhookInfo failed: " + err.Error()
	case !SameWebhookURL(info.URL, ws.cfg.URL):
		return "the webhook is no longer set to TELEGRAM_WEBHOOK_URL (another instance of this bot?)"
	case info.PendingUpdateCount > 0 && info.LastErrorDate != 0 && int64(info.LastErrorDate) >= since.Unix():
		return "Telegram cannot deliver the updates: " + ws.h.cfg.Redactor.Redact(info.LastErrorMessage)
	}
	return ""
}

// ServeHTTP answers one delivery. The method and the secret are checked
// before the body is read: a request without the right secret is answered
// 401 and its body never read. A body over maxWebhookBody is 413, one that
// is not an update 400; an update is journaled before its 200, and one
// that cannot be is 503, which Telegram delivers again.
func (ws *webhookSource) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if !ws.authorized(r.Header.Get(WebhookSecretHeader)) {
		w.Header().Set("Connection", "close")
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		ws.h.logger.Debug("refused a webhook request without the right secret", "remote", r.RemoteAddr)
		return
	}
	if r.ContentLength > maxWebhookBody {
		w.Header().Set("Connection", "close")
		http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxWebhookBody))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "the body could not be read", http.StatusBadRequest)
		return
	}
	var head struct {
		ID *int64 `json:"update_id"`
	}
	if err := json.Unmarshal(body, &head); err != nil || head.ID == nil || *head.ID <= 0 {
		http.Error(w, "not an update", http.StatusBadRequest)
		return
	}
	w.WriteHeader(ws.receive(*head.ID, body))
}

// authorized compares the secret sent with the configured one in constant
// time, through their digests, so that neither the content nor the length
// shows in the time taken.
func (ws *webhookSource) authorized(sent string) bool {
	got, want := sha256.Sum256([]byte(sent)), sha256.Sum256([]byte(ws.cfg.Secret))
	return sent != "" && subtle.ConstantTimeCompare(got[:], want[:]) == 1
}

// receive takes the update id (raw) unless it was taken before, and
// returns the status to answer.
func (ws *webhookSource) receive(id int64, raw []byte) int {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.ctx.Err() != nil {
		// Shutting down: Telegram delivers it again after the restart.
		return http.StatusServiceUnavailable
	}
	if id <= ws.last {
		ws.h.logger.Info("a delivery of an update already taken; answered without running it again", "update_id", id)
		return http.StatusOK
	}
	if !ws.take(ws.ctx, []json.RawMessage{raw}) {
		return http.StatusServiceUnavailable
	}
	ws.last = id
	ws.h.touchHeartbeat()
	return http.StatusOK
}

// SameWebhookURL reports whether two webhook URLs name the same
// endpoint, as getWebhookInfo may give back the URL setWebhook was given
// in another spelling: the scheme and the host in any case, a default
// port, an empty path for "/".
func SameWebhookURL(a, b string) bool {
	ua, errA := url.Parse(a)
	ub, errB := url.Parse(b)
	if errA != nil || errB != nil {
		return a == b
	}
	norm := func(u *url.URL) string {
		scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Host)
		if p := u.Port(); (scheme == "https" && p == "443") || (scheme == "http" && p == "80") {
			host = strings.ToLower(u.Hostname())
		}
		path := u.EscapedPath()
		if path == "" {
			path = "/"
		}
		return scheme + "://" + host + path + "?" + u.RawQuery
	}
	return norm(ua) == norm(ub)
}

// probeAddr returns the URL the health check requests from the listener:
// its address, with the loopback address for an unspecified one.
func probeAddr(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String() + "/"
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/"
}

// hostOfURL returns the host of a URL, for the log: the path may be
// chosen to be hard to guess.
func hostOfURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Host
}
