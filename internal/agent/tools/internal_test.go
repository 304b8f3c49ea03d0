package tools

import (
	"fmt"
	"io/fs"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSniffImage(t *testing.T) {
	tests := []struct {
		name string
		head string
		want string
	}{
		{name: "png", head: "\x89PNG\r\n\x1a\n....", want: "image/png"},
		{name: "jpeg", head: "\xff\xd8\xff\xe0..JFIF", want: "image/jpeg"},
		{name: "gif87a", head: "GIF87a....", want: "image/gif"},
		{name: "gif89a", head: "GIF89a....", want: "image/gif"},
		{name: "webp", head: "RIFF\x10\x00\x00\x00WEBPVP8 ", want: "image/webp"},
		{name: "wav is not an image", head: "RIFF\x10\x00\x00\x00WAVEfmt ", want: ""},
		{name: "text", head: "hello", want: ""},
		{name: "empty", head: "", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := sniffImage([]byte(tt.head))
			if diff := cmp.Diff(tt.want, got); diff != "" || ok != (tt.want != "") {
				t.Errorf("sniffImage = %q, %v (-want +got):\n%s", got, ok, diff)
			}
		})
	}
}

func TestDescribeFileError(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{name: "permission", err: &fs.PathError{Op: "open", Path: "/x", Err: fs.ErrPermission}, want: "Permission denied: /x"},
		{name: "missing", err: fmt.Errorf("wrapped: %w", fs.ErrNotExist), want: "File not found: /x"},
		{name: "other", err: fmt.Errorf("disk on fire"), want: "/x: disk on fire"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, describeFileError("/x", tt.err)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestLooksBinary(t *testing.T) {
	tests := []struct {
		name     string
		head     string
		complete bool
		want     bool
	}{
		{name: "text", head: "hello\n", complete: true},
		{name: "NUL", head: "a\x00b", complete: true, want: true},
		{name: "latin-1", head: "caf\xe9\n", complete: true, want: true},
		{name: "a character cut by the sniff", head: "caf\xc3", complete: false},
		{name: "a cut character at the end of the file", head: "caf\xc3", complete: true, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := looksBinary([]byte(tt.head), tt.complete); got != tt.want {
				t.Errorf("looksBinary = %v, want %v", got, tt.want)
			}
		})
	}
}
