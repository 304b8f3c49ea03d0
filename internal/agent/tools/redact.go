package tools

import (
	"io"

	"github.com/volcanic/telegram-agent/internal/redactor"
)

// redactStream returns w behind red's streaming redaction, and the
// redactor.Writer to close when the stream ends. With a redactor that
// redacts nothing it returns w itself and a nil Writer, so output costs
// nothing extra.
func redactStream(red *redactor.Redactor, w io.Writer) (io.Writer, *redactor.Writer) {
	if redactsNothing(red) {
		return w, nil
	}
	rw := red.NewWriter(w)
	return rw, rw
}

// redactsNothing reports whether red has no pattern to look for. It relies
// on redactor.Redactor.RedactPartial leaving out a trailing run that is the
// beginning of a pattern: every pattern begins with some byte, and is
// longer than one, so a redactor with a pattern drops at least one of the
// 256 one-byte strings, and one without returns each of them unchanged.
func redactsNothing(red *redactor.Redactor) bool {
	if red == nil {
		return true
	}
	var b [1]byte
	for i := range 256 {
		b[0] = byte(i)
		if s := string(b[:]); red.RedactPartial(s) != s {
			return false
		}
	}
	return true
}
