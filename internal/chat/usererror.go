package chat

import (
	"errors"
	"fmt"
)

// userFacingError is an error whose text is also what the chat is told:
// Error adds the package prefix for the log, Text is the sentence alone.
type userFacingError struct{ text string }

func (e *userFacingError) Error() string { return "chat: " + e.text }

// userError returns an error the chat is told about with text.
func userError(text string) error { return &userFacingError{text: text} }

// userErrorf is userError with a format.
func userErrorf(format string, args ...any) error {
	return &userFacingError{text: fmt.Sprintf(format, args...)}
}

// chatText returns what the chat is told about err: a user-facing error's
// sentence, else the error's text.
func chatText(err error) string {
	var u *userFacingError
	if errors.As(err, &u) {
		return u.text
	}
	return err.Error()
}
