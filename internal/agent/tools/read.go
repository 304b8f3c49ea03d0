package tools

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/imagesafe"
	"github.com/volcanic/telegram-agent/internal/redactor"
)

// sniffLen is how much of a file read inspects to tell images and binary
// files from text.
const sniffLen = 8 * 1024

// readTool reads files: numbered text lines, or an image.
type readTool struct {
	// files is how the tool opens files (WithView).
	files    fileAccess
	maxLines int
	maxBytes int
}

// NewRead returns the read tool {path, offset?, limit?}. Text comes back as
// numbered lines from offset (1-based), at most limit lines and never more
// than DefaultMaxLines lines or DefaultMaxBytes bytes, with a note saying
// how to read on. PNG, JPEG, GIF and WebP files come back as image content.
// Binary files, folders, missing and unreadable files are error results.
func NewRead() agent.Tool { return newRead(fileAccess{}) }

// newRead returns the read tool opening files through files.
func newRead(files fileAccess) agent.Tool {
	r := &readTool{files: files, maxLines: DefaultMaxLines, maxBytes: DefaultMaxBytes}
	return agent.NewTool(readSpec(), r.execute)
}

// readArgs are the read tool's arguments.
type readArgs struct {
	Path   string `json:"path" jsonschema:"Path of the file, relative to the workspace or absolute."`
	Offset *int   `json:"offset,omitempty" jsonschema:"Line number to start from, 1-based."`
	Limit  *int   `json:"limit,omitempty" jsonschema:"Maximum number of lines to read."`
}

// execute reads one file.
func (r *readTool) execute(ctx context.Context, call *agent.Call, args readArgs) (agent.Result, error) {
	path, err := resolvePath(call.Context, args.Path)
	if err != nil {
		return agent.ErrorResult(err.Error()), nil
	}
	offset, limit := 1, 0
	if args.Offset != nil {
		if *args.Offset < 1 {
			return agent.ErrorResult(fmt.Sprintf("offset must be 1 or more (lines are numbered from 1), not %d", *args.Offset)), nil
		}
		offset = *args.Offset
	}
	if args.Limit != nil {
		if *args.Limit < 1 {
			return agent.ErrorResult(fmt.Sprintf("limit must be 1 or more, not %d", *args.Limit)), nil
		}
		limit = *args.Limit
	}
	f, err := r.files.open(path)
	if err != nil {
		return agent.ErrorResult(describeFileError(path, err)), nil
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return agent.ErrorResult(describeFileError(path, err)), nil
	}
	if info.IsDir() {
		return agent.ErrorResult(fmt.Sprintf("%s is a directory, not a file; list it with bash (ls)", path)), nil
	}
	br := bufio.NewReaderSize(f, 64*1024)
	head, err := br.Peek(sniffLen)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return agent.ErrorResult(describeFileError(path, err)), nil
	}
	if mimeType, ok := imagesafe.Sniff(head); ok {
		return readImage(path, mimeType, info.Size(), br, call.Context.Redactor())
	}
	if imageExtension(path) && len(head) > 0 {
		return agent.ErrorResult(fmt.Sprintf("%s has an image extension but is not a PNG, JPEG, GIF or WebP image", path)), nil
	}
	if looksBinary(head, len(head) < sniffLen) {
		return agent.ErrorResult(fmt.Sprintf("%s looks like a binary file (%s); inspect it with bash (file, xxd, strings)", path, formatSize(info.Size()))), nil
	}
	return r.readText(ctx, path, br, offset, limit)
}

// readImage returns the image in br as image content: decoded strictly,
// re-encoded from its pixels (which drops trailing bytes and metadata) and
// scaled down to what the provider takes, by imagesafe. A file that does
// not decode, or whose re-encoding still holds a secret red knows, is an
// error result saying why; what the result holds, and so what the
// transcript keeps, is the re-encoded image, never the file.
func readImage(path, mimeType string, size int64, br io.Reader, red *redactor.Redactor) (agent.Result, error) {
	if size > maxImageBytes {
		return agent.ErrorResult(fmt.Sprintf("%s is a %s image of %s, larger than the %s read returns", path, mimeType, formatSize(size), formatSize(maxImageBytes))), nil
	}
	data, err := io.ReadAll(io.LimitReader(br, maxImageBytes+1))
	if err != nil {
		return agent.ErrorResult(describeFileError(path, err)), nil
	}
	img, err := imagesafe.Sanitize(data, red)
	if err != nil {
		return agent.ErrorResult(fmt.Sprintf("%s: %v", path, err)), nil
	}
	note := fmt.Sprintf("Read image file %s [%s, %s]", path, img.MIMEType, formatSize(int64(len(img.Data))))
	if img.Scaled {
		note = fmt.Sprintf("Read image file %s [%s, %s, scaled down to %d×%d]", path, img.MIMEType, formatSize(int64(len(img.Data))), img.Width, img.Height)
	}
	return agent.Result{
		Content: []agent.Content{agent.Text(note), agent.Image(img.MIMEType, img.Data)},
		Details: map[string]any{"path": path, "mime_type": img.MIMEType, "bytes": len(img.Data), "width": img.Width, "height": img.Height},
	}, nil
}

// looksBinary reports whether head is the start of a file that is not text:
// it holds a NUL byte or is not UTF-8. complete says head is the whole
// file; otherwise it may end inside a character, which is not held against
// it.
func looksBinary(head []byte, complete bool) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	if !complete {
		for i := len(head) - 1; i >= 0 && i >= len(head)-utf8.UTFMax; i-- {
			if utf8.RuneStart(head[i]) {
				if !utf8.FullRune(head[i:]) {
					head = head[:i]
				}
				break
			}
		}
	}
	return !utf8.Valid(head)
}

// readText returns numbered lines of the text in br, from line offset, at
// most limit lines (0: no limit of the caller's) and within the tool's
// line and byte limits. It reads the rest of the file only to count its
// lines.
func (r *readTool) readText(ctx context.Context, path string, br *bufio.Reader, offset, limit int) (agent.Result, error) {
	maxLines := r.maxLines
	if limit > 0 {
		maxLines = min(limit, maxLines)
	}
	var out strings.Builder
	lineNo, shown, shownBytes := 0, 0, 0
	full := false // a limit stopped the listing
	longLine := 0 // a first line longer than the byte limit
	for {
		if lineNo%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return agent.Result{}, err
			}
		}
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A long line: read it whole, but keep only what can be shown.
			rest, rerr := readLongLine(ctx, br, line, r.maxBytes+1)
			if cerr := ctx.Err(); cerr != nil {
				return agent.Result{}, cerr
			}
			line, err = rest, rerr
		}
		if len(line) == 0 && err != nil {
			if !errors.Is(err, io.EOF) {
				return agent.ErrorResult(describeFileError(path, err)), nil
			}
			break
		}
		lineNo++
		if lineNo < offset || full {
			if err != nil {
				break
			}
			continue
		}
		text := strings.TrimSuffix(strings.TrimSuffix(string(line), "\n"), "\r")
		switch {
		case shown >= maxLines:
			full = true
		case shown == 0 && len(text) > r.maxBytes:
			cut := r.maxBytes
			for cut > 0 && !utf8.RuneStart(text[cut]) {
				cut--
			}
			fmt.Fprintf(&out, "%6d\t%s\n", lineNo, text[:cut])
			shown, shownBytes, longLine, full = 1, cut, lineNo, true
		case shownBytes+len(text)+1 > r.maxBytes:
			full = true
		default:
			fmt.Fprintf(&out, "%6d\t%s\n", lineNo, text)
			shown++
			shownBytes += len(text) + 1
		}
		if err != nil {
			break
		}
	}
	total := lineNo
	if offset > max(total, 1) {
		return agent.ErrorResult(fmt.Sprintf("offset %d is beyond the end of %s (%d lines)", offset, path, total)), nil
	}
	if total == 0 {
		return agent.Result{Content: []agent.Content{agent.Text(fmt.Sprintf("%s is empty", path))}, Details: map[string]any{"path": path, "total_lines": 0}}, nil
	}
	last := offset + shown - 1
	details := map[string]any{"path": path, "total_lines": total, "first_line": offset, "last_line": last}
	switch {
	case longLine > 0:
		details["truncated"] = true
		fmt.Fprintf(&out, "\n[Line %d is longer than %s and was cut; read it with bash, e.g. sed -n '%dp' %s | cut -c1-%d]", longLine, formatSize(int64(r.maxBytes)), longLine, shellQuote(path), r.maxBytes*2)
		if last < total {
			fmt.Fprintf(&out, "\n[Use offset=%d to read on]", last+1)
		}
	case last < total && limit > 0 && shown == limit:
		fmt.Fprintf(&out, "\n[%d more lines in the file. Use offset=%d to read on]", total-last, last+1)
	case last < total:
		details["truncated"] = true
		fmt.Fprintf(&out, "\n[Output truncated at %d lines or %s: showing lines %d-%d of %d. Use offset=%d to read on]", r.maxLines, formatSize(int64(r.maxBytes)), offset, last, total, last+1)
	}
	return agent.Result{Content: []agent.Content{agent.Text(out.String())}, Details: details}, nil
}

// readLongLine finishes a line longer than br's buffer, of which first is
// the start. It keeps at most keep bytes of it and discards the rest; it
// stops when ctx is done.
func readLongLine(ctx context.Context, br *bufio.Reader, first []byte, keep int) ([]byte, error) {
	line := append([]byte(nil), first[:min(len(first), keep)]...)
	for {
		// A line can be as long as the file: a sparse one of a terabyte
		// costs the agent one truncate, and reading it would hold the turn
		// past /stop.
		if err := ctx.Err(); err != nil {
			return line, err
		}
		chunk, err := br.ReadSlice('\n')
		if room := keep - len(line); room > 0 {
			line = append(line, chunk[:min(len(chunk), room)]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == nil && (len(line) == 0 || line[len(line)-1] != '\n') {
			line = append(line, '\n')
		}
		return line, err
	}
}

// shellQuote quotes s for a bash command line.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
