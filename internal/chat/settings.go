package chat

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/volcanic/telegram-agent/internal/atomicfile"
)

// SettingsFile is the file in the agent dir that keeps each chat's settings.
const SettingsFile = "chat-settings.json"

// chatSettings is what one chat (one target) keeps across restarts.
type chatSettings struct {
	// TimeZone is the chat's IANA zone set with /tz.
	TimeZone string `json:"time_zone,omitempty"`
	// Session is the id of the chat's current session (a new one after
	// /new); empty means the target's base id.
	Session string `json:"session,omitempty"`
	// Model is the model chosen with /model; empty means the default.
	Model string `json:"model,omitempty"`
	// Approvals are the approval rules the chat allowed for good
	// ("Always in this chat"), sorted.
	Approvals []string `json:"approvals,omitempty"`
	// ToolStatus is the chat's tool status mode chosen with /verbose;
	// empty means the operator's (TOOL_STATUS).
	ToolStatus string `json:"tool_status,omitempty"`
}

// settingsStore is chat-settings.json in memory, written through atomically.
type settingsStore struct {
	path string
	// written, when set, is told how every write of the file went.
	written func(error)
	mu      sync.Mutex
	all     map[string]chatSettings
}

// loadSettings reads the settings file; a missing file is empty, a file
// that does not parse is an error with its path and the reason (and is
// never overwritten).
func loadSettings(dir string) (*settingsStore, error) {
	s := &settingsStore{path: filepath.Join(dir, SettingsFile), all: map[string]chatSettings{}}
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("chat: settings %s: %w", s.path, err)
	}
	if err := json.Unmarshal(data, &s.all); err != nil {
		return nil, fmt.Errorf("chat: settings %s does not parse: %w", s.path, err)
	}
	if s.all == nil {
		s.all = map[string]chatSettings{}
	}
	return s, nil
}

func (s *settingsStore) get(scope string) chatSettings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.all[scope]
}

// update changes scope's settings with f and writes the file.
func (s *settingsStore) update(scope string, f func(*chatSettings)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.all[scope]
	// f may change the slice in place (a revoke deletes from it): the
	// settings kept when the write fails must not share it.
	c.Approvals = slices.Clone(c.Approvals)
	f(&c)
	old, had := s.all[scope]
	s.all[scope] = c
	data, err := json.MarshalIndent(s.all, "", "  ")
	if err == nil {
		err = os.MkdirAll(filepath.Dir(s.path), 0o700)
	}
	if err == nil {
		err = atomicfile.WriteFile(s.path, append(data, '\n'), 0o600)
		if s.written != nil {
			s.written(err)
		}
	}
	if err != nil {
		if had {
			s.all[scope] = old
		} else {
			delete(s.all, scope)
		}
		return fmt.Errorf("chat: settings: %w", err)
	}
	return nil
}
