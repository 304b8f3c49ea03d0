package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLoad(t *testing.T) {
	tests := []struct {
		name string
		body string // "" means no file
		want []ServerConfig
		// errHas are what the error must name; empty means no error.
		errHas []string
	}{
		{name: "no file"},
		{name: "empty", body: `{}`},
		{
			name: "expansion",
			body: `{"mcpServers": {
				"github": {"command": "npx", "args": ["-y", "server-github", "--token-file=${GITHUB_TOKEN}"], "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}", "PLAIN": "a $HOME b"}},
				"off": {"command": "x", "env": {"T": "${NOT_SET}"}, "disabled": true}
			}}`,
			want: []ServerConfig{
				{
					Name: "github", Command: "npx",
					Args: []string{"-y", "server-github", "--token-file=" + explicitToken},
					Env:  map[string]string{"GITHUB_TOKEN": explicitToken, "PLAIN": "a $HOME b"},
				},
				{Name: "off", Command: "x", Env: map[string]string{"T": ""}, Disabled: true},
			},
		},
		{name: "unknown server key", body: `{"mcpServers": {"s": {"command": "x", "cwd": "/"}}}`, errHas: []string{`server "s"`, `unknown field "cwd"`}},
		{name: "unknown top-level key", body: `{"servers": {}}`, errHas: []string{`unknown field "servers"`}},
		{name: "missing command", body: `{"mcpServers": {"s": {"args": []}}}`, errHas: []string{`server "s"`, "no command"}},
		{name: "unset variable", body: `{"mcpServers": {"s": {"command": "x", "env": {"K": "${NOT_SET}"}}}}`, errHas: []string{`server "s"`, "env K", "NOT_SET is not set"}},
		{name: "unset variable in args", body: `{"mcpServers": {"s": {"command": "x", "args": ["${NOT_SET}"]}}}`, errHas: []string{"args[0]", "NOT_SET is not set"}},
		{name: "bad reference", body: `{"mcpServers": {"s": {"command": "x", "args": ["${A-B}"]}}}`, errHas: []string{"not a variable reference"}},
		{name: "not JSON", body: `{"mcpServers": `, errHas: []string{"invalid JSON"}},
		{
			name:   "every problem at once, no values",
			body:   `{"mcpServers": {"a": {"command": "x", "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}", "K": "${NOT_SET}"}}, "b": {}}}`,
			errHas: []string{`server "a"`, `server "b"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), DefaultFile)
			if tt.body != "" {
				if err := os.WriteFile(path, []byte(tt.body), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			cfg, err := Load(path, testLookup)
			if len(tt.errHas) > 0 {
				if err == nil {
					t.Fatal("no error")
				}
				msg := err.Error()
				checkAbsent(t, "the error", "the token", msg, explicitToken)
				for _, want := range append([]string{path}, tt.errHas...) {
					if !strings.Contains(msg, want) {
						t.Errorf("the error lacks %q: %s", want, msg)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if diff := cmp.Diff(tt.want, cfg.Servers); diff != "" {
				// The expected values are fake; safe to print.
				t.Errorf("servers (-want +got):\n%s", diff)
			}
			if tt.body == "" && cfg.Path != "" {
				t.Errorf("Path = %q for a missing file", cfg.Path)
			}
		})
	}
}

func TestDefaultPath(t *testing.T) {
	if got, want := DefaultPath("/agent"), filepath.Join("/agent", "mcp.json"); got != want {
		t.Errorf("DefaultPath = %q, want %q", got, want)
	}
}
