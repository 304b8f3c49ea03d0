package prompt

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// Operator instruction files: SystemFile in the agent dir, AgentsFile in
// the workspace root.
const (
	SystemFile = "SYSTEM.md"
	AgentsFile = "AGENTS.md"
)

// MaxInstructionBytes bounds what one instruction file adds to the prompt;
// the rest is cut with a note.
const MaxInstructionBytes = 64 << 10

// Builder builds the system prompt of every turn: [Build]'s text followed by
// the operator's instructions, SYSTEM.md from the agent dir and AGENTS.md
// from the workspace root, when they exist. The files are cached by
// modification time and size, so an edit shows from the next turn on. A
// missing file is fine; one that cannot be read, or is not a regular file
// (a FIFO would block every turn), is logged (once per problem) and left
// out. Its methods are safe for concurrent use.
type Builder struct {
	agentDir  string
	workspace string
	logger    *slog.Logger
	// view, when set, is how AGENTS.md is opened (see WithView).
	view *sandbox.View

	mu    sync.Mutex
	files map[string]instructionFile
}

// instructionFile is the cached state of one instruction file.
type instructionFile struct {
	modTime time.Time
	size    int64
	text    string
	// problem is the last problem logged for the file ("" when it read).
	problem string
}

// Option configures a Builder.
type Option func(*Builder)

// WithView makes the builder open the workspace's AGENTS.md through the
// agent sandbox's view, as the agent's file tools open files: the agent may
// write that file, and the bot reads it into every chat's system prompt,
// so a symbolic link there to a file the view hides (the agent dir, the
// bot's home, /run/secrets) must not be followed by the bot on the agent's
// behalf. nil (AGENT_SANDBOX=off) opens it as the bot's user.
func WithView(v *sandbox.View) Option { return func(b *Builder) { b.view = v } }

// NewBuilder returns a builder for the agent dir and the workspace. A nil
// logger discards.
func NewBuilder(agentDir, workspace string, logger *slog.Logger, opts ...Option) *Builder {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	b := &Builder{agentDir: agentDir, workspace: workspace, logger: logger, files: make(map[string]instructionFile)}
	for _, o := range opts {
		o(b)
	}
	return b
}

// SystemPrompt returns the system prompt for a turn of the session info
// describes, offering the tools named tools.
func (b *Builder) SystemPrompt(info agent.SessionInfo, tools []string) string {
	var sb strings.Builder
	sb.WriteString(Build(Info{
		Now: info.Now, TimeZone: info.TimeZone, Workspace: b.workspace, AgentDir: b.agentDir,
		Tools: tools, Model: info.Model,
	}))
	sections := []struct{ title, dir, name string }{
		{"Operator instructions", b.agentDir, SystemFile},
		{"Workspace instructions", b.workspace, AgentsFile},
	}
	for _, sec := range sections {
		if sec.dir == "" {
			continue
		}
		open := openFile
		if sec.name == AgentsFile && b.view != nil {
			open = b.view.OpenFile
		}
		text := b.instructions(filepath.Join(sec.dir, sec.name), open)
		if text == "" {
			continue
		}
		fmt.Fprintf(&sb, "\n\n## %s (%s)\n%s", sec.title, sec.name, text)
	}
	return sb.String()
}

// Prompt is [Builder.SystemPrompt] with the tools info names; it fits
// agent.WithSystemPrompt.
func (b *Builder) Prompt(info agent.SessionInfo) string {
	return b.SystemPrompt(info, info.Tools)
}

// openFile opens a file as the bot's user.
func openFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag, perm)
}

// instructions returns the trimmed text of the instruction file at path,
// opened with open, "" when it is missing, empty, unreadable or not a
// regular file.
func (b *Builder) instructions(path string, open func(string, int, os.FileMode) (*os.File, error)) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	cached, seen := b.files[path]
	// O_NONBLOCK: opening a FIFO for reading would wait for a writer,
	// holding every turn's prompt; it is refused below instead.
	f, err := open(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		delete(b.files, path)
		return ""
	}
	if err != nil {
		b.fail(path, cached, err)
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		b.fail(path, cached, err)
		return ""
	case fi.IsDir():
		b.fail(path, cached, errors.New("it is a directory"))
		return ""
	case !fi.Mode().IsRegular():
		b.fail(path, cached, errors.New("it is not a regular file"))
		return ""
	}
	if seen && cached.problem == "" && cached.modTime.Equal(fi.ModTime()) && cached.size == fi.Size() {
		return cached.text
	}
	text, cut, err := readInstructions(f)
	if err != nil {
		b.fail(path, cached, fmt.Errorf("reading %s: %w", path, err))
		return ""
	}
	if cut {
		b.logger.Warn("prompt: instruction file is longer than the limit; the rest is left out", "path", path, "limit_bytes", MaxInstructionBytes)
		text += fmt.Sprintf("\n[... the rest of %s is cut: it is longer than %d bytes]", filepath.Base(path), MaxInstructionBytes)
	}
	b.files[path] = instructionFile{modTime: fi.ModTime(), size: fi.Size(), text: text}
	return text
}

// fail logs a problem with the file at path unless it was the last one
// logged for it, and remembers it.
func (b *Builder) fail(path string, cached instructionFile, err error) {
	problem := err.Error()
	if cached.problem != problem {
		b.logger.Warn("prompt: cannot read an instruction file; leaving it out", "path", path, "err", err)
	}
	b.files[path] = instructionFile{problem: problem}
}

// readInstructions reads at most MaxInstructionBytes of f (cut at a
// character boundary), trimmed; cut reports that there was more.
func readInstructions(f *os.File) (text string, cut bool, err error) {
	data, err := io.ReadAll(io.LimitReader(f, MaxInstructionBytes+1))
	if err != nil {
		return "", false, err
	}
	if len(data) > MaxInstructionBytes {
		data, cut = data[:MaxInstructionBytes], true
		for range utf8.UTFMax - 1 {
			if r, size := utf8.DecodeLastRune(data); r != utf8.RuneError || size != 1 {
				break
			}
			data = data[:len(data)-1]
		}
	}
	return strings.TrimSpace(strings.ToValidUTF8(string(data), "\uFFFD")), cut, nil
}
