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
	if !red.HasSecrets() {
		return w, nil
	}
	rw := red.NewWriter(w)
	return rw, rw
}
