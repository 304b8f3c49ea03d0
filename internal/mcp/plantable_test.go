package mcp

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPlantable checks which servers' commands or scripts lie where the
// agent writes: the workspace (relative paths are read there) and the
// sandbox's temporary directory, and not the system's.
func TestPlantable(t *testing.T) {
	ws, tmp := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	tool := filepath.Join(ws, "bin", "mcp-tool")
	if err := os.WriteFile(tool, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "linked-tool")
	if err := os.Symlink(tool, link); err != nil {
		t.Fatal(err)
	}
	writable := []string{ws, tmp}
	tests := []struct {
		name string
		sc   ServerConfig
		want string
	}{
		{"npx from the registry", ServerConfig{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-github"}}, ""},
		{"python -m of an installed module", ServerConfig{Command: "python3", Args: []string{"-m", "mcp_server_fetch"}}, ""},
		{"a script outside the view", ServerConfig{Command: "node", Args: []string{"/opt/mcp/server.js"}}, ""},
		{"a relative script, read in the workspace", ServerConfig{Command: "node", Args: []string{"server.js"}}, "server.js"},
		{"a script in the workspace", ServerConfig{Command: "python3", Args: []string{"-u", filepath.Join(ws, "srv.py")}}, filepath.Join(ws, "srv.py")},
		{"a script in the temporary directory", ServerConfig{Command: "bash", Args: []string{filepath.Join(tmp, "run")}}, filepath.Join(tmp, "run")},
		{"a command in the workspace", ServerConfig{Command: tool}, tool},
		{"a link to a command in the workspace", ServerConfig{Command: link}, link},
		{"a hosted server", ServerConfig{URL: "https://mcp.example/x"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := plantable(tt.sc, writable); got != tt.want {
				t.Errorf("plantable = %q, want %q", got, tt.want)
			}
		})
	}
	if got := plantable(ServerConfig{Command: "node", Args: []string{"server.js"}}, nil); got != "" {
		t.Errorf("with no writable directories named, plantable = %q, want none", got)
	}
}
