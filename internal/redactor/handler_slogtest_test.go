package redactor

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"
	"testing/slogtest"
)

// TestHandlerSlogtest holds the redacting handler to the slog.Handler
// contract, with a secret to look for so that every record takes the
// redacting path.
func TestHandlerSlogtest(t *testing.T) {
	var buf bytes.Buffer
	r := New([]string{"slogtest-secret-value"})
	newHandler := func(t *testing.T) slog.Handler {
		buf.Reset()
		return r.Handler(slog.NewJSONHandler(&buf, nil))
	}
	result := func(t *testing.T) map[string]any {
		var m map[string]any
		if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
			t.Fatalf("the handler wrote a line that is not JSON: %v", err)
		}
		return m
	}
	slogtest.Run(t, newHandler, result)
}
