package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCheckHeartbeat(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	tests := []struct {
		name    string
		age     time.Duration // negative: no file
		wantErr string
	}{
		{name: "fresh", age: 5 * time.Second},
		{name: "just under the limit", age: 89 * time.Second},
		{name: "stale", age: 3 * time.Minute, wantErr: "heartbeat is 3m0s old"},
		{name: "missing", age: -1, wantErr: "no heartbeat"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-"))
			if tt.age >= 0 {
				if err := os.WriteFile(path, nil, 0o600); err != nil {
					t.Fatal(err)
				}
				mtime := now.Add(-tt.age)
				if err := os.Chtimes(path, mtime, mtime); err != nil {
					t.Fatal(err)
				}
			}
			err := checkHeartbeat(path, now, heartbeatMaxAge)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("checkHeartbeat = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("checkHeartbeat = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}
