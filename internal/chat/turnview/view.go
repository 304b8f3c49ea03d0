package turnview

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/volcanic/telegram-agent/internal/chat/botapi"
)

// Settings is what a View needs besides its Bot API client; the host fills
// it.
type Settings struct {
	// Logger logs what Telegram did not take (nil: discard).
	Logger *slog.Logger
	// EditInterval is the least time between two previews of a streamed
	// answer, or two updates of a status message.
	EditInterval time.Duration
	// Statuses records the status messages open now (nil: none kept).
	Statuses *StatusLog
	// Shutdown ends when the host starts shutting down: an answer being
	// delivered then gets shutdownFinishGrace more (see FinishContext).
	Shutdown context.Context
	// Background counts the goroutines a shutdown waits for, among them
	// the closing of the status messages (see Turn.Finish).
	Background *sync.WaitGroup
}

// View holds what every chat's outlet shares: the Bot API client under its
// three lifetimes, the notices waiting per chat, and whether the server
// takes drafts.
type View struct {
	Settings
	// api has the whole retry policy (Answer); quick two tries (Notice);
	// preview one (Preview).
	api, quick, preview *botapi.Client
	noDrafts            atomic.Bool
	out                 outbox
}

// New returns the view of api's chats. Call WaitNotices when the host
// shuts down.
func New(api *botapi.Client, s Settings) *View {
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	if s.Shutdown == nil {
		s.Shutdown = context.Background()
	}
	if s.Background == nil {
		s.Background = new(sync.WaitGroup)
	}
	v := &View{Settings: s, api: api, quick: api.WithAttempts(2), preview: api.WithAttempts(1)}
	v.out.init()
	return v
}

// Target is a chat, or a forum topic of one (ThreadID not 0).
type Target struct {
	ChatID   int64
	ThreadID int
}

// String returns the target's scope: "<chatID>", or "<chatID>:<threadID>"
// for a topic.
func (t Target) String() string {
	if t.ThreadID != 0 {
		return strconv.FormatInt(t.ChatID, 10) + ":" + strconv.Itoa(t.ThreadID)
	}
	return strconv.FormatInt(t.ChatID, 10)
}

// ParseTarget reads a scope String wrote.
func ParseTarget(s string) (Target, error) {
	chat, thread, hasThread := strings.Cut(s, ":")
	id, err := strconv.ParseInt(chat, 10, 64)
	if err != nil || id == 0 {
		return Target{}, fmt.Errorf("chat: %q is not a chat target (<chatID> or <chatID>:<threadID>)", s)
	}
	t := Target{ChatID: id}
	if hasThread {
		if t.ThreadID, err = strconv.Atoi(thread); err != nil || t.ThreadID <= 0 {
			return Target{}, fmt.Errorf("chat: %q is not a chat target (<chatID> or <chatID>:<threadID>)", s)
		}
	}
	return t, nil
}

// Outlet is one chat's way out: the three verbs (Answer, Notice, Preview)
// and what is built on them. It is a small value; make one where needed.
type Outlet struct {
	v *View
	t Target
}

// To returns t's outlet.
func (v *View) To(t Target) Outlet { return Outlet{v: v, t: t} }

// private reports a private chat (a user's id is positive, a group's
// negative): drafts are for private chats, and there a first message needs
// no sentence to show.
func (o Outlet) private() bool { return o.t.ChatID > 0 }

// draftsUnsupported reports that the server answered sendMessageDraft 404.
func (v *View) draftsUnsupported() bool { return v.noDrafts.Load() }

func (v *View) markDraftsUnsupported() { v.noDrafts.Store(true) }

// logSendError logs a failed send: a 403 (the user blocked the bot) drops
// the message.
func (o Outlet) logSendError(what string, err error) {
	if botapi.ClassOf(err) == botapi.Forbidden {
		o.v.Logger.Warn("telegram refused the message (the user blocked the bot or left); dropped", "what", what, "scope", o.t.String(), "err", err)
		return
	}
	o.v.Logger.Error("sending to telegram failed", "what", what, "scope", o.t.String(), "err", err)
}

// LogSendError is logSendError for a caller that sends on its own.
func (o Outlet) LogSendError(what string, err error) { o.logSendError(what, err) }

// logSkipped logs a status update Telegram did not take, which the next
// one or the final state replaces: at Warn, with the retry_after of a 429.
func (o Outlet) logSkipped(what string, err error) {
	attrs := []any{"what", what, "scope", o.t.String(), "err", err}
	if botapi.ClassOf(err) == botapi.RateLimited {
		attrs = append(attrs, "retry_after", botapi.RetryAfter(err))
	}
	o.v.Logger.Warn("telegram did not take a status update; a later one replaces it", attrs...)
}
