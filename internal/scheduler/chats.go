package scheduler

import "context"

// Chats is what the scheduler needs of the front end, handed to
// [Scheduler.Start]: the chat host, which main builds after the agent that
// activates the scheduler. A target is a chat's scope string, the same
// string the chat host gives its sessions as agent.SessionOptions.Scope
// (and tools see as call.Context.Scope).
type Chats interface {
	// Prompt queues a turn in the target chat's session, behind a running
	// turn, like a user message; the answer is sent to the chat marked as
	// coming from the job (label, e.g. "⏰ Job morning-summary"). A nil
	// error means the chat holds the prompt durably (a restart reports it);
	// an error, that the chat did not take it (a full queue, a journal that
	// cannot be written).
	Prompt(ctx context.Context, target, label, prompt string) error
	// Notify sends text to the target chat without a model call.
	Notify(ctx context.Context, target, text string) error
	// Refused reports whether err, returned by Notify, is a refusal for
	// good: the user blocked the bot, the chat is gone, the target is no
	// chat; sending again cannot help. A passing failure (Telegram down
	// or asking to wait, no answer, the shutdown) is no refusal.
	Refused(err error) bool
	// TimeZone returns the target chat's IANA zone (/tz, else
	// DEFAULT_TIMEZONE), "" for the host's own.
	TimeZone(target string) string
}
