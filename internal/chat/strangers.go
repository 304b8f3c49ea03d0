package chat

import (
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// strangerLogInterval is how often a user who is not allowed is logged at
// Info (per user id); in between, at Debug.
const strangerLogInterval = time.Hour

// maxStrangers bounds how many users who are not allowed the host
// remembers for the Info log's rate limit, so that messages from ever new
// user ids cannot grow the map without end.
const maxStrangers = 1000

// strangers is how the bot treats the users who are not allowed: each is
// logged, and told in a private chat how to get access, at most once per
// interval and user id.
type strangers struct {
	logger *slog.Logger
	// silent keeps the reply back (Config.SilentToStrangers).
	silent bool
	out    outlet
	mu     sync.Mutex
	// logged is when each was last logged at Info; told is when each was
	// last told how to get access.
	logged, told map[int64]time.Time
}

// note logs a message from a user who is not allowed: at Info once per
// user id and interval, so that a wrong TELEGRAM_ALLOWED_USER_IDS is plain
// to see without flooding the log.
func (s *strangers) note(userID, chatID int64) {
	s.mu.Lock()
	loud := rememberStranger(s.logged, userID, time.Now(), strangerLogInterval)
	s.mu.Unlock()
	if loud {
		s.logger.Info("message from a user not in TELEGRAM_ALLOWED_USER_IDS; ignored", "user_id", userID, "chat_id", chatID)
		return
	}
	s.logger.Debug("ignored a message from a user who is not allowed", "user_id", userID, "chat_id", chatID)
}

// strangerReplyInterval is how often a user who is not allowed gets the
// stranger reply.
const strangerReplyInterval = 24 * time.Hour

// strangerReply is what a user who is not allowed is told, with their id.
func strangerReply(userID int64) string {
	return fmt.Sprintf("This is a private bot. Your Telegram user id is %d; ask its operator to add it to TELEGRAM_ALLOWED_USER_IDS.", userID)
}

// reply tells a user who is not allowed, in a private chat, how to get
// access: once per user id a day (remembered for at most maxStrangers
// ids), never with a model call, and never when the operator silenced it
// (STRANGER_REPLY=off).
func (s *strangers) reply(userID int64, t target) {
	if s.silent {
		return
	}
	s.mu.Lock()
	reply := rememberStranger(s.told, userID, time.Now(), strangerReplyInterval)
	s.mu.Unlock()
	if reply {
		s.out.notice(t, strangerReply(userID), 0)
	}
}

// rememberStranger reports whether a message userID sent at now is acted
// on (logged at Info, replied to): the first from that id, or the first
// after interval; it then records now as the id's last one. Adding an id
// drops the entries older than the interval and, when maxStrangers remain,
// the oldest one.
func rememberStranger(seen map[int64]time.Time, userID int64, now time.Time, interval time.Duration) bool {
	last, known := seen[userID]
	if known && now.Sub(last) < interval {
		return false
	}
	if !known {
		var oldest int64
		var oldestAt time.Time
		for id, at := range seen {
			if now.Sub(at) >= interval {
				delete(seen, id)
			} else if oldestAt.IsZero() || at.Before(oldestAt) {
				oldest, oldestAt = id, at
			}
		}
		if len(seen) >= maxStrangers {
			delete(seen, oldest)
		}
	}
	seen[userID] = now
	return true
}
