package turnview

import (
	"strings"
	"testing"
	"time"
)

// A group's first streamed message needs an edit interval since the answer
// began and a sentence, a line or 80 characters of text.
func TestWorthAFirstMessage(t *testing.T) {
	tests := []struct {
		name  string
		since time.Duration
		text  string
		want  bool
	}{
		{"a word", time.Hour, "Sure", false},
		{"a few words", time.Hour, "Sure, here is", false},
		{"a sentence", time.Hour, "Sure, here is the answer.", true},
		{"a sentence and more", time.Hour, "Sure. Here is", true},
		{"a line", time.Hour, "Sure\nhere", true},
		{"80 characters", time.Hour, strings.Repeat("word ", 17), true},
		{"a sentence too early", 0, "Sure, here is the answer.", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &segment{o: Outlet{v: &View{Settings: Settings{EditInterval: time.Minute}}}, started: time.Now().Add(-tt.since)}
			if got := s.worthAFirstMessage(tt.text); got != tt.want {
				t.Errorf("worthAFirstMessage(%q) = %v, want %v", tt.text, got, tt.want)
			}
		})
	}
}
