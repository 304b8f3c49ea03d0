package botapi_test

import (
	"bytes"
	"compress/gzip"
	"image"
	"image/png"
	"testing"

	"github.com/volcanic/telegram-agent/internal/chat/botapi"
)

func pngBytes(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func gzipBytes(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestContentType(t *testing.T) {
	pdf := []byte("%PDF-1.7\n1 0 obj\n<<>>\nendobj\n")
	csv := []byte("name,amount\nrent,1200\n")
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"report.csv", csv, "text/csv; charset=utf-8"},
		{"REPORT.CSV", csv, "text/csv; charset=utf-8"},
		{"chart.png", pngBytes(t), "image/png"},
		{"chart", pngBytes(t), "image/png"},
		// A name that claims text for bytes that are not: the bytes win.
		{"chart.txt", pngBytes(t), "image/png"},
		{"invoice.pdf", pdf, "application/pdf"},
		{"invoice", pdf, "application/pdf"},
		{"notes.md", []byte("# Notes\n"), "text/markdown; charset=utf-8"},
		{"data.json", []byte(`{"a":1}`), "application/json"},
		{"logs.tar.gz", gzipBytes(t), "application/gzip"},
		{"sheet.xlsx", []byte("PK\x03\x04rest of a zip"), "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"},
		{"notes", []byte("just words\n"), "text/plain; charset=utf-8"},
		{"blob.bin", []byte{0, 1, 2, 3, 0xff}, "application/octet-stream"},
		{"blob", []byte{0, 1, 2, 3, 0xff}, "application/octet-stream"},
	}
	for _, tt := range tests {
		if got := botapi.ContentType(tt.name, tt.data); got != tt.want {
			t.Errorf("ContentType(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}
