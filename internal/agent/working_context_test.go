package agent

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestCutIndex(t *testing.T) {
	u := Message{Role: RoleUser}
	as := Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "1"}}}
	r := Message{Role: RoleTool, ToolCallID: "1"}
	a := Message{Role: RoleAssistant}
	tests := []struct {
		name string
		msgs []Message
		keep int
		want int
	}{
		{"empty", nil, 1, 0},
		{"one turn", []Message{u, a}, 1, 0},
		{"fewer turns than kept", []Message{u, a, u, a}, 3, 0},
		{"keep one", []Message{u, as, r, a, u, a}, 1, 4},
		{"keep two", []Message{u, a, u, as, r, a, u, as, r}, 2, 2},
		{"keep below one means one", []Message{u, a, u, a}, 0, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cutIndex(tt.msgs, tt.keep)
			if got != tt.want {
				t.Fatalf("cutIndex = %d, want %d", got, tt.want)
			}
			if got > 0 && tt.msgs[got].Role != RoleUser {
				t.Errorf("cut before a %s message", tt.msgs[got].Role)
			}
		})
	}
}

func TestShortenText(t *testing.T) {
	numbered := func(n int, width int) string {
		var lines []string
		for i := range n {
			lines = append(lines, strings.Repeat("x", width-4)+string(rune('a'+i%26))+"end")
		}
		return strings.Join(lines, "\n")
	}
	tests := []struct {
		name      string
		in        string
		wantSame  bool
		wantParts []string
	}{
		{"short", "one\ntwo", true, nil},
		{"just at the limit", strings.Repeat("a", oldResultMaxBytes), true, nil},
		{"many lines", numbered(300, 20), false, []string{"lines (", "cut to save context"}},
		{"one long line", strings.Repeat("b", 10000), false, []string{"1 lines (8400 bytes)"}},
		{"multibyte", strings.Repeat("é", 3000), false, []string{"cut to save context"}},
		{"trailing newline", numbered(300, 20) + "\n", false, []string{"cut to save context"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := shortenText(tt.in, "older tool result")
			if tt.wantSame {
				if diff := cmp.Diff(tt.in, got); diff != "" {
					t.Errorf("shortened a short text (-want +got):\n%s", diff)
				}
				return
			}
			if len(got) > 2*oldResultPartBytes+200 || !utf8.ValidString(got) {
				t.Errorf("got %d bytes (valid UTF-8: %v), want a short valid text", len(got), utf8.ValidString(got))
			}
			lines := strings.Split(strings.TrimRight(tt.in, "\n"), "\n")
			if !strings.HasPrefix(got, lines[0][:10]) || !strings.HasSuffix(strings.TrimRight(got, "\n"), lines[len(lines)-1][len(lines[len(lines)-1])-10:]) {
				t.Error("the first or last line is lost")
			}
			for _, part := range tt.wantParts {
				if !strings.Contains(got, part) {
					t.Errorf("shortened text lacks %q", part)
				}
			}
		})
	}
}
