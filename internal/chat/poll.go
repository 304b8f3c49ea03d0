package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/go-telegram/bot/models"
)

// HeartbeatFile is the file in the agent dir that polling touches after
// every successful getUpdates (the healthcheck reads its age).
const HeartbeatFile = "heartbeat"

// allowedUpdates returns the update types the host asks for.
func allowedUpdates() []string { return []string{"message", "callback_query"} }

// getUpdates asks for the updates from offset on, waiting up to timeout.
// It returns each update's raw JSON, for the journal.
func (h *Host) getUpdates(ctx context.Context, offset int64, timeout time.Duration) ([]json.RawMessage, error) {
	body, _ := json.Marshal(map[string]any{
		"offset":          offset,
		"timeout":         int(timeout / time.Second),
		"allowed_updates": allowedUpdates(),
	})
	ctx, cancel := context.WithTimeout(ctx, timeout+30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.cfg.APIURL+"/bot"+h.cfg.Token+"/getUpdates", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("chat: getUpdates: %w", h.scrub(err))
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := h.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("chat: getUpdates: %w", h.scrub(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("chat: getUpdates: %w", h.scrub(err))
	}
	var r struct {
		OK          bool              `json:"ok"`
		Result      []json.RawMessage `json:"result"`
		ErrorCode   int               `json:"error_code"`
		Description string            `json:"description"`
		Parameters  struct {
			RetryAfter int `json:"retry_after"`
		} `json:"parameters"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, &APIError{Method: "getUpdates", Code: resp.StatusCode, Description: "answer is not JSON"}
	}
	if !r.OK {
		code := r.ErrorCode
		if code == 0 {
			code = resp.StatusCode
		}
		return nil, &APIError{Method: "getUpdates", Code: code, Description: r.Description, RetryAfter: time.Duration(r.Parameters.RetryAfter) * time.Second}
	}
	return r.Result, nil
}

// scrub removes the token from an error that carries the request URL.
func (h *Host) scrub(err error) error {
	return redactedError{msg: h.cfg.Redactor.Redact(replaceAll(err.Error(), h.cfg.Token, "<token>")), err: err}
}

// redactedError shows a redacted message but keeps the chain for errors.Is.
type redactedError struct {
	msg string
	err error
}

func (e redactedError) Error() string { return e.msg }
func (e redactedError) Unwrap() error { return e.err }

// poll runs the getUpdates loop until ctx is done. Each batch is journaled
// before its updates are acknowledged (by the next request's offset); the
// heartbeat is touched after every successful call whose batch was
// journaled. Polling starts after
// the highest update of a recent journal, so an update the bot journaled
// but died before acknowledging is not delivered again. It never gives up
// on an error: a 429 waits retry_after, a 409 (another instance polls the
// same token) logs a clear error and backs off, anything else backs off.
func (h *Host) poll(ctx context.Context) {
	offset := h.journal.resumeOffset(time.Now())
	if offset > 0 {
		h.logger.Debug("polling from after the last journaled update", "offset", offset)
	}
	failures := 0
	for ctx.Err() == nil {
		raws, err := h.getUpdates(ctx, offset, h.pollTimeout)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			class, after := classify(err)
			delay := h.retry.backoff(failures)
			switch class {
			case classRateLimited:
				delay = max(after, time.Second)
				h.logger.Warn("getUpdates rate limited", "retry_after", delay)
			case classConflict:
				h.logger.Error("getUpdates conflict: another instance is polling this bot token; stop it (or remove its webhook). Backing off", "err", err, "delay", delay)
			case classFatal:
				h.logger.Error("getUpdates failed", "err", err, "delay", delay)
			default:
				h.logger.Warn("getUpdates failed", "err", err, "delay", delay)
			}
			failures++
			h.pollSleep(ctx, delay)
			continue
		}
		failures = 0
		offset = h.received(ctx, raws, offset)
	}
}

// received handles the answer of a successful getUpdates and returns the
// next offset. The heartbeat is touched only when the batch was accepted
// (journaled): while messages cannot be accepted, the healthcheck must go
// unhealthy.
func (h *Host) received(ctx context.Context, raws []json.RawMessage, offset int64) int64 {
	if len(raws) == 0 {
		h.touchHeartbeat()
		return offset
	}
	next, ok := h.accept(ctx, raws, offset)
	if ok {
		h.touchHeartbeat()
	}
	return next
}

// touchHeartbeat sets the heartbeat file's time to now.
func (h *Host) touchHeartbeat() {
	path := filepath.Join(h.cfg.AgentDir, HeartbeatFile)
	now := time.Now()
	if err := os.Chtimes(path, now, now); err != nil {
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			h.logger.Warn("heartbeat", "err", err)
		}
	}
}

// accept decodes a batch, journals the messages that start turns, then
// dispatches every update, and returns the next offset and true. When the
// journal cannot be written, it returns the offset unchanged (so Telegram
// sends the batch again) and false.
func (h *Host) accept(ctx context.Context, raws []json.RawMessage, offset int64) (int64, bool) {
	type decoded struct {
		raw json.RawMessage
		upd *models.Update
		in  *inbound
	}
	batch := make([]decoded, 0, len(raws))
	var entries []journalEntry
	next := offset
	now := time.Now().Unix()
	for _, raw := range raws {
		var u models.Update
		if err := json.Unmarshal(raw, &u); err != nil {
			h.logger.Warn("an update does not parse; skipped", "err", err)
			var idOnly struct {
				ID int64 `json:"update_id"`
			}
			if json.Unmarshal(raw, &idOnly) == nil && idOnly.ID >= next {
				next = idOnly.ID + 1
			}
			continue
		}
		if u.ID >= next {
			next = u.ID + 1
		}
		if h.journal.seen(u.ID) {
			// Journaled before a restart that came before its
			// acknowledgement: it was reported as interrupted (or has
			// run), so it does not run again.
			h.logger.Info("skipped an update that was journaled before the restart", "update_id", u.ID)
			continue
		}
		d := decoded{raw: raw, upd: &u}
		if d.in = h.classifyUpdate(&u); d.in != nil && d.in.startsTurn {
			entries = append(entries, journalEntry{ID: u.ID, State: statePending, Scope: d.in.target.String(), Update: raw, At: now})
		}
		batch = append(batch, d)
	}
	if err := h.journal.write(entries...); err != nil {
		h.logger.Error("inbound journal cannot be written; the updates stay unacknowledged", "err", err)
		sleep(ctx, time.Second)
		return offset, false
	}
	for _, d := range batch {
		if d.in != nil {
			h.dispatch(ctx, d.in)
		} else if d.upd.CallbackQuery != nil {
			h.handleCallback(d.upd.CallbackQuery)
		}
	}
	return next, true
}

func replaceAll(s, old, repl string) string {
	if old == "" {
		return s
	}
	return string(bytes.ReplaceAll([]byte(s), []byte(old), []byte(repl)))
}
