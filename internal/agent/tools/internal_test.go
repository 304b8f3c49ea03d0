package tools

import (
	"fmt"
	"io/fs"
	"testing"

	"github.com/google/go-cmp/cmp"
)

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
