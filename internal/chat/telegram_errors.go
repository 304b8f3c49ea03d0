package chat

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/go-telegram/bot"
)

// errorClass says how the retry policy treats a failed Bot API call.
type errorClass int

const (
	// classFatal: the request itself is wrong (400, 401, 404); retrying
	// cannot help.
	classFatal errorClass = iota
	// classRateLimited: 429; wait retry_after, then retry.
	classRateLimited
	// classTransient: a 5xx answer or a network error; back off and retry.
	classTransient
	// classForbidden: 403, the user blocked the bot or left the chat; the
	// message is dropped.
	classForbidden
	// classConflict: 409, another instance polls the same token.
	classConflict
)

// APIError is a Bot API error answer: its code, Telegram's description and
// the retry_after it asked for.
type APIError struct {
	Method      string
	Code        int
	Description string
	RetryAfter  time.Duration
}

// Error returns the method, the code and Telegram's description.
func (e *APIError) Error() string {
	return fmt.Sprintf("telegram %s: %d %s", e.Method, e.Code, e.Description)
}

var libraryStatus = regexp.MustCompile(`error response from telegram for method \S+, (\d{3}) `)

// classify sorts err, as go-telegram/bot or this package's own client
// returns it, and reports the delay Telegram asked for, if any.
func classify(err error) (errorClass, time.Duration) {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return classifyCode(apiErr.Code), apiErr.RetryAfter
	}
	var tooMany *bot.TooManyRequestsError
	if errors.As(err, &tooMany) {
		return classRateLimited, time.Duration(tooMany.RetryAfter) * time.Second
	}
	switch {
	case errors.Is(err, bot.ErrorForbidden):
		return classForbidden, 0
	case errors.Is(err, bot.ErrorConflict):
		return classConflict, 0
	case errors.Is(err, bot.ErrorBadRequest), errors.Is(err, bot.ErrorUnauthorized), errors.Is(err, bot.ErrorNotFound):
		return classFatal, 0
	}
	if m := libraryStatus.FindStringSubmatch(err.Error()); m != nil {
		code, _ := strconv.Atoi(m[1])
		return classifyCode(code), 0
	}
	var urlErr *url.Error
	var netErr net.Error
	if errors.As(err, &urlErr) || errors.As(err, &netErr) || strings.Contains(err.Error(), "error do request") ||
		strings.Contains(err.Error(), "error read response body") || strings.Contains(err.Error(), "error decode response body") {
		return classTransient, 0
	}
	return classFatal, 0
}

func classifyCode(code int) errorClass {
	switch {
	case code == 429:
		return classRateLimited
	case code == 403:
		return classForbidden
	case code == 409:
		return classConflict
	case code >= 500 || code == 0:
		return classTransient
	default:
		return classFatal
	}
}

// isNotFound reports whether err is a 404 answer: the method is unknown to
// the server (sendMessageDraft on an older Bot API server).
func isNotFound(err error) bool {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return apiErr.Code == 404
	}
	return errors.Is(err, bot.ErrorNotFound)
}

// isBadRequest reports whether err is a 400 answer.
func isBadRequest(err error) bool {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return apiErr.Code == 400
	}
	return errors.Is(err, bot.ErrorBadRequest)
}

// isUnauthorized reports whether err is a 401 answer: the bot token was
// rejected.
func isUnauthorized(err error) bool {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return apiErr.Code == 401
	}
	return errors.Is(err, bot.ErrorUnauthorized)
}

// isBadMarkup reports whether Telegram rejected the HTML of a text.
func isBadMarkup(err error) bool {
	return errors.Is(err, bot.ErrorBadRequest) && strings.Contains(err.Error(), "can't parse entities")
}

// isNotModified reports whether an edit changed nothing, which Telegram
// answers with a 400 that is no failure at all.
func isNotModified(err error) bool {
	return errors.Is(err, bot.ErrorBadRequest) && strings.Contains(err.Error(), "message is not modified")
}
