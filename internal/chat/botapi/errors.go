package botapi

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Error is a failed Bot API call: Telegram's answer (its error_code,
// description and retry_after), or the reason no answer came (Code 0). Its
// text never holds the bot token, and its Unwrap returns only
// context.Canceled, context.DeadlineExceeded or ErrFileTooLarge.
type Error struct {
	// Method is the Bot API method, or "download" for a file download.
	Method string
	// Code is Telegram's error_code (or the HTTP status of an answer that
	// is not JSON); 0 when no answer came.
	Code int
	// Description is Telegram's description, or what went wrong on the way.
	Description string
	// RetryAfter is the wait a 429 asks for.
	RetryAfter time.Duration
	// Network, for a call that got no answer (Code 0), is why: one of
	// NetworkDNS, NetworkTLS, NetworkRefused, NetworkTimeout or
	// NetworkOther; "" when the call's own context ended it. Host is then
	// the server's host (never the URL, whose path holds the token).
	Network, Host string

	cause error
}

// ErrFileTooLarge is in the chain of a download or a getFile refused for
// the file's size.
var ErrFileTooLarge = errors.New("botapi: the file is too large")

// Error returns the method, the code and the description.
func (e *Error) Error() string {
	if e.Code == 0 {
		return fmt.Sprintf("telegram %s: %s", e.Method, e.Description)
	}
	return fmt.Sprintf("telegram %s: %d %s", e.Method, e.Code, e.Description)
}

// Unwrap returns the context error that ended the call, or ErrFileTooLarge,
// or nil; never the transport's error, whose URL holds the token.
func (e *Error) Unwrap() error { return e.cause }

// Class says how a failed call is treated.
type Class int

const (
	// Permanent: the request itself is wrong (400, 401, 404, ...);
	// retrying cannot help.
	Permanent Class = iota
	// RateLimited: 429; wait RetryAfter, then retry.
	RateLimited
	// Transient: a 5xx answer or no answer at all; back off and retry.
	Transient
	// Forbidden: 403, the user blocked the bot or left the chat; the
	// message is dropped.
	Forbidden
	// Conflict: 409, another instance polls the same token (or a webhook
	// is set).
	Conflict
)

// Class sorts e by its code.
func (e *Error) Class() Class {
	switch {
	case e.Code == 429:
		return RateLimited
	case e.Code == 403:
		return Forbidden
	case e.Code == 409:
		return Conflict
	case e.Code >= 500:
		return Transient
	case e.Code == 0:
		if e.cause == ErrFileTooLarge {
			return Permanent
		}
		return Transient
	default:
		return Permanent
	}
}

// ClassOf returns the class of err: that of its *Error, Permanent for any
// other error.
func ClassOf(err error) Class {
	var e *Error
	if errors.As(err, &e) {
		return e.Class()
	}
	return Permanent
}

// Refused reports whether err, from a send, is a refusal for good, which
// sending again cannot help: an answer of the Permanent (400, 404) or
// Forbidden (403, the user blocked the bot) class, or an error that is no
// *Error (a front end returns one before any call, for a target that is
// no chat). A 429, a 409, a 5xx, no answer and a context's end are none.
// The scheduler asks it, through the chat host, of a notice that failed.
func Refused(err error) bool {
	var e *Error
	if errors.As(err, &e) {
		class := e.Class()
		return class == Permanent || class == Forbidden
	}
	return err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// RetryAfter returns the wait a 429 in err asks for, or 0.
func RetryAfter(err error) time.Duration {
	var e *Error
	if errors.As(err, &e) && e.Code == 429 {
		return e.RetryAfter
	}
	return 0
}

// CodeOf returns the error_code of err's *Error, or 0.
func CodeOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

// IsBadMarkup reports whether Telegram rejected the HTML of a text (400
// "can't parse entities").
func IsBadMarkup(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == 400 && strings.Contains(e.Description, "can't parse entities")
}

// IsFileTooLarge reports whether a file could not be had for its size: the
// client's limit, or getFile's 400 "file is too big".
func IsFileTooLarge(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	return e.cause == ErrFileTooLarge || (e.Code == 400 && strings.Contains(e.Description, "file is too big"))
}

// notModified reports whether an edit changed nothing, which Telegram
// answers with a 400 that is no failure at all.
func notModified(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == 400 && strings.Contains(e.Description, "message is not modified")
}
