package ledger

import (
	"context"
	"log/slog"
	"time"

	"github.com/volcanic/telegram-agent/internal/backoff"
)

// PauseMax bounds the pause between two tries of a report.
const PauseMax = time.Minute

// Send makes one try at sending text in reply to replyTo (0: none).
type Send func(ctx context.Context, text string, replyTo int) error

// Outlet is how a Reporter reaches one chat.
type Outlet interface {
	// Post runs try after the chat's earlier notices, in order, with a
	// context that bounds that one try and the send to make it with; a
	// report is never dropped for a full outbox, since each stands for an
	// entry the journal holds.
	Post(try func(ctx context.Context, send Send))
	// String names the chat (its scope) for the log.
	String() string
}

// Reporter sends the notices a chat must get because a journal entry
// waits for them: the report of an interrupted message, the busy answer
// of a refused one, the replies of a command, the word that an answer did
// not arrive. A try that fails for a passing reason (a 5xx, a 429, no
// answer) is made again after a pause that doubles from Pause up to
// PauseMax, for as long as Life lasts: a restart, which reports the entry
// anew, may never come. One refused for good (a 403: the user blocked the
// bot; a 400) is left for the next start-up, and so is one the end of
// Outbox cuts.
type Reporter struct {
	// Passing reports whether a failed try may succeed later.
	Passing func(error) bool
	// Pause is the first pause before a try again.
	Pause time.Duration
	// Life is the host's: the pauses end with it, and no try follows.
	Life context.Context
	// Ended reports that the outlets' tries were given up (the last grace
	// of a shutdown ended): a failed try is not made again.
	Ended func() bool
	// Go runs a pause's goroutine in a group the host waits for at
	// shutdown.
	Go     func(func())
	Logger *slog.Logger
}

// Report sends text to out in reply to replyTo until it goes out, and
// then calls sent. needed, when set, is asked before each try: a report
// no longer needed is dropped.
func (r *Reporter) Report(out Outlet, text string, replyTo int, needed func() bool, sent func()) {
	r.try(out, text, replyTo, needed, sent, 0)
}

func (r *Reporter) try(out Outlet, text string, replyTo int, needed func() bool, sent func(), try int) {
	out.Post(func(ctx context.Context, send Send) {
		if needed != nil && !needed() {
			return
		}
		err := send(ctx, text, replyTo)
		switch {
		case err == nil:
			sent()
			return
		case r.Ended():
			return
		case ctx.Err() == nil && !r.Passing(err):
			r.Logger.Warn("a report was refused; it is sent again after the next start-up", "scope", out.String())
			return
		}
		pause := backoff.Policy{Base: r.Pause, Max: PauseMax}.Delay(try)
		// Called from the outbox's goroutine, which the group counts:
		// adding to it cannot race its Wait at shutdown.
		r.Go(func() {
			if backoff.Sleep(r.Life, pause) {
				r.try(out, text, replyTo, needed, sent, try+1)
			}
		})
	})
}
