package mcp

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestToolNames(t *testing.T) {
	long := strings.Repeat("x", 80)
	tests := []struct {
		name  string
		tools []remoteTool
		want  map[remoteTool]string
	}{
		{
			name:  "plain",
			tools: []remoteTool{{"github", "create_issue"}, {"pw", "browser-click"}},
			want: map[remoteTool]string{
				{"github", "create_issue"}: "mcp__github__create_issue",
				{"pw", "browser-click"}:    "mcp__pw__browser-click",
			},
		},
		{
			name:  "replaced characters",
			tools: []remoteTool{{"my server", "get.env/v2"}, {"é", "ok"}},
			want: map[remoteTool]string{
				{"my server", "get.env/v2"}: "mcp__my_server__get_env_v2",
				{"é", "ok"}:                 "mcp_____ok",
			},
		},
		{
			name:  "collision",
			tools: []remoteTool{{"a", "get.env"}, {"a", "get_env"}, {"a", "other"}},
			want: map[remoteTool]string{
				{"a", "get.env"}: "mcp__a__get_env_" + hashOf("a", "get.env"),
				{"a", "get_env"}: "mcp__a__get_env_" + hashOf("a", "get_env"),
				{"a", "other"}:   "mcp__a__other",
			},
		},
		{
			name:  "too long",
			tools: []remoteTool{{"s", long}},
			want: map[remoteTool]string{
				{"s", long}: ("mcp__s__" + long)[:55] + "_" + hashOf("s", long),
			},
		},
	}
	valid := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := toolNames(tt.tools)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
			rev := slices.Clone(tt.tools)
			slices.Reverse(rev)
			if diff := cmp.Diff(got, toolNames(rev)); diff != "" {
				t.Errorf("names depend on order (-first +reversed):\n%s", diff)
			}
			for _, n := range got {
				if !valid.MatchString(n) {
					t.Errorf("invalid name %q", n)
				}
			}
		})
	}
}

// hashOf is the disambiguating suffix of a tool's name.
func hashOf(server, tool string) string {
	n := hashedName("", remoteTool{server, tool})
	return n[1:]
}
