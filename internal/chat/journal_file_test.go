package chat

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/agenttest"
)

// The heartbeat is touched after a poll only when its batch was accepted:
// while the journal cannot be written, the healthcheck goes unhealthy.
func TestHeartbeatOnlyWhenJournaled(t *testing.T) {
	message := func(from int64) json.RawMessage {
		raw, _ := json.Marshal(map[string]any{"update_id": 41, "message": map[string]any{"message_id": 1, "date": 0,
			"chat": map[string]any{"id": from, "type": "private"}, "from": map[string]any{"id": from, "first_name": "u"}, "text": "hi"}})
		return raw
	}
	tests := []struct {
		name          string
		raws          []json.RawMessage
		journalBroken bool
		wantHeartbeat bool
		wantOffset    int64
	}{
		{"an empty poll", nil, false, true, 40},
		{"a stranger's message, nothing to journal", []json.RawMessage{message(strangerID)}, false, true, 42},
		{"a message the journal cannot take", []json.RawMessage{message(userID)}, true, false, 40},
		{"an empty poll while the journal is broken: nothing waits to be accepted", nil, true, true, 40},
	}
	h := newHarness(t, harnessConfig{provider: agenttest.NewFauxProvider()})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			host, err := New(Config{Token: h.tg.Token(), AllowedUserIDs: []int64{userID}, Agent: h.agent, Redactor: h.host.cfg.Redactor,
				AgentDir: dir, WorkspaceDir: dir}, withHTTPClient((&memAPI{sent: make(chan string, 16)}).client()))
			if err != nil {
				t.Fatal(err)
			}
			defer host.journal.Close()
			if tt.journalBroken {
				host.journal.Close()
			}
			ctx, cancel := context.WithCancel(t.Context())
			cancel() // no pause after a failed journal write
			got, _ := pollSource{host}.received(ctx, host.take, tt.raws, 40)
			_, statErr := os.Stat(filepath.Join(dir, HeartbeatFile))
			if statErr != nil && !errors.Is(statErr, fs.ErrNotExist) {
				t.Fatal(statErr)
			}
			if diff := cmp.Diff(tt.wantHeartbeat, statErr == nil); diff != "" {
				t.Errorf("heartbeat written (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantOffset, got); diff != "" {
				t.Errorf("next offset (-want +got):\n%s", diff)
			}
		})
	}
}
