package claudecode

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"

	"github.com/volcanic/telegram-agent/internal/atomicfile"
)

// sessionEntry is claude's session for one of the host's sessions.
type sessionEntry struct {
	// UUID is claude's session id.
	UUID string `json:"uuid"`
	// Started reports that a turn of it completed, so the next one resumes
	// it.
	Started bool `json:"started"`
}

// sessionStore maps the host's session ids to claude's, in a file of the
// provider home, so resuming survives a restart.
type sessionStore struct {
	path string

	mu      sync.Mutex
	entries map[string]sessionEntry
}

// openSessions reads the store at path; a missing file is an empty store,
// one that does not parse is an error (it is never overwritten).
func openSessions(path string) (*sessionStore, error) {
	s := &sessionStore{path: path, entries: map[string]sessionEntry{}}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return s, nil
	case err != nil:
		return nil, fmt.Errorf("claudecode: sessions: %w", err)
	}
	if err := json.Unmarshal(data, &s.entries); err != nil {
		return nil, fmt.Errorf("claudecode: sessions: %s does not parse: %w", path, err)
	}
	return s, nil
}

// get returns the entry of id, making a fresh one (not saved yet) when
// there is none.
func (s *sessionStore) get(id string) sessionEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.entries[id]; ok {
		return e
	}
	return sessionEntry{UUID: newUUID()}
}

// started saves e as id's session, one that later turns resume.
func (s *sessionStore) started(id string, e sessionEntry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e.Started = true
	if s.entries[id] == e {
		return nil
	}
	s.entries[id] = e
	data, err := json.Marshal(s.entries)
	if err != nil {
		return fmt.Errorf("claudecode: sessions: %w", err)
	}
	if err := atomicfile.WriteFile(s.path, data, 0o600); err != nil {
		return fmt.Errorf("claudecode: sessions: %w", err)
	}
	return nil
}

// newUUID returns a random (version 4) UUID, the form --session-id takes.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
