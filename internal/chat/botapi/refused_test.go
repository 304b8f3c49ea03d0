package botapi_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/volcanic/telegram-agent/internal/chat/botapi"
)

// TestRefused sorts the errors a send returns into refusals for good,
// which the scheduler does not try again, and passing failures.
func TestRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"403, the user blocked the bot", &botapi.Error{Method: "sendMessage", Code: 403, Description: "Forbidden: bot was blocked by the user"}, true},
		{"400, chat not found", &botapi.Error{Method: "sendMessage", Code: 400, Description: "Bad Request: chat not found"}, true},
		{"wrapped 403", fmt.Errorf("sending: %w", &botapi.Error{Method: "sendMessage", Code: 403}), true},
		{"a target that is no chat", errors.New(`chat: "x" is not a chat target (<chatID> or <chatID>:<threadID>)`), true},
		{"429", &botapi.Error{Method: "sendMessage", Code: 429, Description: "Too Many Requests"}, false},
		{"502", &botapi.Error{Method: "sendMessage", Code: 502, Description: "Bad Gateway"}, false},
		{"no answer", &botapi.Error{Method: "sendMessage", Description: "connection refused"}, false},
		{"409", &botapi.Error{Method: "sendMessage", Code: 409}, false},
		{"the shutdown", context.Canceled, false},
		{"a deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), false},
		{"no error", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := botapi.Refused(tc.err); got != tc.want {
				t.Errorf("Refused(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}
