package turnview

import (
	"context"
	"sync"
	"time"

	"github.com/volcanic/telegram-agent/internal/chat/markup"
)

// maxNotices bounds the notices waiting to be sent to one chat; beyond it
// a notice is dropped (and logged), since Telegram is not taking them.
const maxNotices = 50

// NoticeTimeout bounds the sending of one notice, retry_after included,
// and of what must go out as promptly (an approval request).
const NoticeTimeout = 30 * time.Second

// outbox holds each chat's notices waiting to be sent; wg tracks the
// goroutines sending them, until ctx ends.
type outbox struct {
	mu     sync.Mutex
	queue  map[string][]func(context.Context)
	wg     sync.WaitGroup
	ctx    context.Context
	cancel context.CancelFunc
}

func (b *outbox) init() {
	b.queue = make(map[string][]func(context.Context))
	b.ctx, b.cancel = context.WithCancel(context.Background())
}

// Noticer is how a notice sends: through the client of two tries, within
// the notice's time.
type Noticer struct{ o Outlet }

// Send sends m through the notice client. With m.Split, m.Text is plain
// text split into parts that fit, the first answering m.ReplyTo; the first
// part that fails ends it, logged. It returns the id of the (last) message
// sent or edited.
func (n Noticer) Send(ctx context.Context, m Message) (int, error) {
	if !m.Split {
		return n.o.send(ctx, n.o.v.quick, m)
	}
	id := 0
	for i, part := range nonBlank(markup.SplitPlain(m.Text, 0)) {
		p := m
		p.Text, p.Split = part, false
		if i > 0 {
			p.ReplyTo = 0
		}
		var err error
		if id, err = n.o.send(ctx, n.o.v.quick, p); err != nil {
			n.o.logSendError("notice", err)
			return 0, err
		}
	}
	return id, nil
}

// Say sends text, plain and split, in reply to replyTo: Send's common
// case.
func (n Noticer) Say(ctx context.Context, text string, replyTo int) error {
	_, err := n.Send(ctx, Message{Text: text, ReplyTo: replyTo, Split: true})
	return err
}

// Say returns a notice that sends text, plain and split, in reply to
// replyTo: the common notice.
func Say(text string, replyTo int) func(context.Context, Noticer) {
	return func(ctx context.Context, n Noticer) { _ = n.Say(ctx, text, replyTo) }
}

// Notice runs send for the chat off the caller's goroutine, after the
// chat's earlier notices, so that polling never waits on Telegram: a
// reply to a command, the "queued" notice, a button's answer. The notices
// of a chat go out in order, one goroutine per chat while it has any;
// each runs within NoticeTimeout, or until WaitNotices gives up, and each
// of its sends (through n) has two tries, so that an outage does not keep
// them going. Beyond maxNotices waiting a notice is dropped, logged.
func (o Outlet) Notice(send func(ctx context.Context, n Noticer)) { o.enqueue(false, send) }

// MustNotice is Notice for a notice that must go out (a report a journal
// entry waits for): it is queued even beyond maxNotices.
func (o Outlet) MustNotice(send func(ctx context.Context, n Noticer)) { o.enqueue(true, send) }

func (o Outlet) enqueue(must bool, send func(context.Context, Noticer)) {
	b, key := &o.v.out, o.t.String()
	b.mu.Lock()
	defer b.mu.Unlock()
	q, draining := b.queue[key]
	if len(q) >= maxNotices && !must {
		o.v.Logger.Warn("too many notices waiting for telegram; dropped one", "scope", key)
		return
	}
	b.queue[key] = append(q, func(ctx context.Context) { send(ctx, Noticer{o}) })
	if !draining {
		b.wg.Go(func() { b.drain(key) })
	}
}

// drain sends key's notices until none is left.
func (b *outbox) drain(key string) {
	for {
		b.mu.Lock()
		q := b.queue[key]
		if len(q) == 0 {
			delete(b.queue, key)
			b.mu.Unlock()
			return
		}
		send := q[0]
		b.queue[key] = q[1:]
		b.mu.Unlock()
		ctx, cancel := context.WithTimeout(b.ctx, NoticeTimeout)
		send(ctx)
		cancel()
	}
}

// Unordered runs send on its own goroutine, within NoticeTimeout, when it
// belongs to no chat (a press on a message the bot cannot see).
func (v *View) Unordered(send func(ctx context.Context, n Noticer)) {
	v.out.wg.Go(func() {
		ctx, cancel := context.WithTimeout(v.out.ctx, NoticeTimeout)
		defer cancel()
		send(ctx, Noticer{Outlet{v: v}})
	})
}

// Go runs f on a goroutine WaitNotices waits for: a notice's later try.
func (v *View) Go(f func()) { v.out.wg.Go(f) }

// NoticesEnded reports that WaitNotices gave up on the notices.
func (v *View) NoticesEnded() bool { return v.out.ctx.Err() != nil }

// WaitNotices waits up to grace for the notices being sent, then cancels
// the rest and waits for them to end.
func (v *View) WaitNotices(grace time.Duration) {
	b := &v.out
	done := make(chan struct{})
	go func() { b.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		b.cancel()
		<-done
	}
	b.cancel()
}
