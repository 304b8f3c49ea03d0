package chat

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/volcanic/telegram-agent/internal/chat/botapi"
	"github.com/volcanic/telegram-agent/internal/chat/ledger"
)

// The Host's test seams: what production never configures.

// withHTTPClient sets the HTTP client of the Bot API calls.
func withHTTPClient(c *http.Client) Option { return func(h *Host) { h.httpClient = c } }

// withRetryPolicy sets how failed Bot API calls are retried.
func withRetryPolicy(p botapi.RetryPolicy) Option { return func(h *Host) { h.retry = p } }

// withEditInterval sets the least time between two updates of a streamed
// answer or of a status message (default 1s).
func withEditInterval(d time.Duration) Option { return func(h *Host) { h.editInterval = d } }

// withPollTimeout sets the long-poll timeout of getUpdates (default 50s).
func withPollTimeout(d time.Duration) Option { return func(h *Host) { h.pollTimeout = d } }

// withShutdownGrace sets how long Run waits for cancelled turns to end at
// shutdown (default 5s).
func withShutdownGrace(d time.Duration) Option { return func(h *Host) { h.shutdownGrace = d } }

// withPollSleep replaces how polling waits out its back-off.
func withPollSleep(f func(ctx context.Context, d time.Duration) bool) Option {
	return func(h *Host) { h.pollSleep = f }
}

// withReportPause sets the first pause before a report that did not go out
// is sent again (default 3s).
func withReportPause(d time.Duration) Option { return func(h *Host) { h.reportPause = d } }

// withJournal configures the inbound journal (its test seams).
func withJournal(opts ...ledger.Option) Option {
	return func(h *Host) { h.journalOpts = append(h.journalOpts, opts...) }
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
