package scheduler

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/volcanic/telegram-agent/internal/atomicfile"
	"github.com/volcanic/telegram-agent/internal/redactor"
)

// fileVersion is the version of the jobs.json format this package writes.
const fileVersion = 1

// jobsFile is the JSON form of jobs.json.
type jobsFile struct {
	Version int   `json:"version"`
	Jobs    []Job `json:"jobs"`
}

// loadJobs reads the jobs kept at path; a missing file holds none. A file
// that does not parse, or holds a job that makes no sense, is an error
// naming path and the reason (the caller must then leave the file alone).
func loadJobs(path string) ([]Job, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("scheduler: reading %s: %w", path, err)
	}
	var f jobsFile
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("scheduler: %s does not parse: %w", path, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("scheduler: %s does not parse: unexpected data after the JSON object", path)
	}
	if f.Version != fileVersion {
		return nil, fmt.Errorf("scheduler: %s: unsupported version %d (want %d)", path, f.Version, fileVersion)
	}
	seen := make(map[string]bool, len(f.Jobs))
	for i, j := range f.Jobs {
		if err := checkStored(j); err != nil {
			return nil, fmt.Errorf("scheduler: %s: job %d (%q): %w", path, i, j.ID, err)
		}
		if seen[j.ID] {
			return nil, fmt.Errorf("scheduler: %s: job id %q appears twice", path, j.ID)
		}
		seen[j.ID] = true
	}
	return f.Jobs, nil
}

// checkStored reports what is wrong with a job read from the file.
func checkStored(j Job) error {
	switch {
	case j.ID == "":
		return errors.New("no id")
	case j.Target == "":
		return errors.New("no target chat")
	case j.Prompt == "":
		return errors.New("no prompt")
	}
	if j.OneShot() {
		return nil
	}
	if _, err := parseSchedule(j.Schedule, time.UTC); err != nil {
		return err
	}
	return nil
}

// redactJob returns j with every known secret replaced in what the model
// or a script wrote: its name, prompt, script and last outcome. jobs.json is
// state the agent can read, so it holds only what could leave.
func redactJob(red *redactor.Redactor, j Job) Job {
	j.Name, j.Prompt, j.Script = red.Redact(j.Name), red.Redact(j.Prompt), red.Redact(j.Script)
	j.LastOutcome = red.Redact(j.LastOutcome)
	return j
}

// saveJobs writes jobs to path with atomicfile.WriteFile, creating its
// directory when missing.
func saveJobs(path string, jobs []Job) error {
	if jobs == nil {
		jobs = []Job{}
	}
	data, err := json.MarshalIndent(jobsFile{Version: fileVersion, Jobs: jobs}, "", "  ")
	if err != nil {
		return fmt.Errorf("scheduler: encoding jobs: %w", err)
	}
	data = append(data, '\n')
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("scheduler: creating %s: %w", dir, err)
	}
	if err := atomicfile.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("scheduler: saving jobs: %w", err)
	}
	return nil
}
