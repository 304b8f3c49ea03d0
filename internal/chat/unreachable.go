package chat

import (
	"fmt"

	"github.com/volcanic/telegram-agent/internal/chat/botapi"
)

// unreachableError is Run's error when getMe never got an answer: one
// sentence naming the Bot API server's host, the kind of failure and the
// variable to check, never the URL (its path holds the token).
type unreachableError struct {
	host, kind string
}

// Error says which server could not be reached, how, and what to check.
func (e unreachableError) Error() string {
	return fmt.Sprintf("chat: Telegram's Bot API at %s cannot be reached (%s): check TELEGRAM_API_URL (unset for api.telegram.org) and that this host can reach it", e.host, networkReason(e.kind))
}

// networkReason is what a kind of network failure means to an operator.
func networkReason(kind string) string {
	switch kind {
	case botapi.NetworkDNS:
		return "DNS: the name does not resolve"
	case botapi.NetworkTLS:
		return "TLS: the handshake fails, a certificate not trusted, expired or for another name, or no TLS there"
	case botapi.NetworkRefused:
		return "refused: nothing listens at that address and port"
	case botapi.NetworkTimeout:
		return "timeout: no answer in time, a firewall or a proxy in the way"
	default:
		return "the connection fails"
	}
}
