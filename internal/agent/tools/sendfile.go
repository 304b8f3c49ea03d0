package tools

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/imagesafe"
	"github.com/volcanic/telegram-agent/internal/redactor"
)

// SendFileName is the send_file tool's name, part of the contract with the
// model.
const SendFileName = "send_file"

// The Bot API's upload limits.
const (
	// MaxPhotoBytes is the largest file sent as a photo; a bigger image
	// goes as a document.
	MaxPhotoBytes = 10 << 20
	// MaxDocumentBytes is the largest file the Bot API accepts as an
	// upload; a bigger one is refused.
	MaxDocumentBytes = 50 << 20
	// maxCaptionUnits is the Bot API's limit of a caption, in UTF-16
	// code units (an emoji outside the BMP counts twice).
	maxCaptionUnits = 1024
)

// OutgoingFile is a file ready to go to a chat. Its name, caption and, for
// a text file, its content are redacted already.
type OutgoingFile struct {
	Name    string
	Data    []byte
	Caption string
	// Photo asks for a photo (a PNG, JPEG or WebP image of at most
	// MaxPhotoBytes); otherwise it goes as a document.
	Photo bool
}

// FileSender delivers a file to the chat that scope names (the session's
// scope). The chat host implements it, retrying like its other sends, on
// the front end it prompts each turn with ([agent.WithFrontEnd]), where
// send_file finds it by type assertion. It reports whether the file went
// out as a photo (a photo Telegram refuses, for its dimensions say, may
// go as a document instead).
type FileSender interface {
	SendFile(ctx context.Context, scope string, f OutgoingFile) (photo bool, err error)
}

// noSender is send_file's result in a turn with no chat to send to: its
// front end is no FileSender, or its session has no scope.
const noSender = "send_file: sending files is not available in this turn: it has no chat to send a file to"

// sendFileTool sends files from the agent's view to the chat.
type sendFileTool struct {
	// files is how the tool opens files: the view of WithView, as read.
	files fileAccess
	// inspectLimit bounds what a file's containers may expand to.
	inspectLimit int
}

// NewSendFile returns the send_file tool {path, caption?, as_photo?}: the
// file goes to the session's chat through the [FileSender] of the turn's
// front end ([agent.FrontEnd]; a turn without one gets an error result
// that says sending files is not available), as a photo when it is a
// PNG, JPEG or WebP image of at most MaxPhotoBytes and as_photo is not
// false, else as a document of at most MaxDocumentBytes. A text file goes
// out redacted; a binary file that holds a secret, in any form the
// redactor knows, is refused (the file itself is never changed), and so is
// a gzip, zip, PDF or PNG that holds one in its compressed content, or
// whose content cannot be checked within bounds. The file
// name and the caption are redacted too. Of opts, WithView confines it to
// the sandbox's view, as it does read: what read may not open, send_file
// does not send.
func NewSendFile(opts ...BashOption) agent.Tool {
	cfg := defaultBashConfig()
	for _, o := range opts {
		o(&cfg)
	}
	t := &sendFileTool{files: fileAccess{view: cfg.view}, inspectLimit: cfg.inspectLimit}
	return agent.NewTool(sendFileSpec(), t.execute)
}

// sendFileSpec describes the tool to the model. It declares no effects: it
// writes no file and runs nothing, but it is not read-only either, since
// the file reaches the chat.
func sendFileSpec() agent.ToolSpec {
	return agent.ToolSpec{
		Name: SendFileName,
		Description: fmt.Sprintf("Send a file to the user in this chat: a chart, a PDF, a patch, an archive. "+
			"PNG, JPEG and WebP images up to %d MB are sent as photos unless as_photo is false; anything else is sent as a document, at most %d MB. "+
			"Secrets in a text file are replaced with %s; a binary file holding a secret is not sent, nor a gzip, zip, PDF or PNG whose compressed content holds one. Relative paths are relative to the workspace.",
			MaxPhotoBytes>>20, MaxDocumentBytes>>20, redactor.Token),
	}
}

// sendFileArgs are the send_file tool's arguments.
type sendFileArgs struct {
	Path    string `json:"path" jsonschema:"Path of the file, relative to the workspace or absolute."`
	Caption string `json:"caption,omitempty" jsonschema:"Text shown with the file."`
	AsPhoto *bool  `json:"as_photo,omitempty" jsonschema:"false sends an image as a document (uncompressed); default true."`
}

// execute sends one file.
func (t *sendFileTool) execute(ctx context.Context, call *agent.Call, args sendFileArgs) (agent.Result, error) {
	path, err := resolvePath(call.Context, args.Path)
	if err != nil {
		return agent.ErrorResult(err.Error()), nil
	}
	sender, ok := agent.FrontEnd(ctx).(FileSender)
	if !ok || call.Context == nil || call.Context.Scope == "" {
		return agent.ErrorResult(noSender), nil
	}
	data, errResult := t.readForSending(path)
	if errResult != nil {
		return *errResult, nil
	}
	red := call.Context.Redactor()
	name := red.Redact(filepath.Base(path))
	text := utf8.Valid(data) && !bytes.ContainsRune(data, 0)
	redacted := false
	// A file may be 50 MB: it is scanned once.
	content := string(data)
	if out := red.Redact(content); out != content {
		if !text {
			return agent.ErrorResult(fmt.Sprintf("Not sent: %s is a binary file that holds a secret (in a form the redactor knows), so it cannot go out; the file was left unchanged. Send a version without the secret.", name)), nil
		}
		data, redacted = []byte(out), true
	}
	holds := func(b []byte) bool {
		if len(b) == 0 {
			return false
		}
		// Decompressed content may be the whole inspection limit: it is
		// scanned in place rather than copied, and not changed while it is.
		s := unsafe.String(&b[0], len(b))
		return red.Redact(s) != s
	}
	switch where, err := hiddenSecret(data, holds, t.inspectLimit); {
	case err != nil:
		return agent.ErrorResult(fmt.Sprintf("Not sent: %s cannot be checked for secrets: %s, so it cannot go out. Send a smaller or flatter version.", name, red.Redact(err.Error()))), nil
	case where != "":
		return agent.ErrorResult(fmt.Sprintf("Not sent: %s holds a secret (in a form the redactor knows) in %s, so it cannot go out; the file was left unchanged. Send a version without the secret.", name, red.Redact(where))), nil
	}
	mimeType, image := imagesafe.Sniff(data)
	photo := image && mimeType != "image/gif" && len(data) <= MaxPhotoBytes && (args.AsPhoto == nil || *args.AsPhoto)
	caption := cutCaption(red.Redact(args.Caption))
	sentPhoto, err := sender.SendFile(ctx, call.Context.Scope, OutgoingFile{Name: name, Data: data, Caption: caption, Photo: photo})
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return agent.Result{}, ctxErr
		}
		return agent.ErrorResult(fmt.Sprintf("Not sent: %s could not be delivered to the chat: %v", name, err)), nil
	}
	kind := "document"
	if sentPhoto {
		kind = "photo"
	}
	note := ""
	if redacted {
		note = ", secrets replaced with " + redactor.Token
	}
	return agent.Result{
		Content: []agent.Content{agent.Text(fmt.Sprintf("Sent %s %s (%s%s) to the chat.", kind, name, formatSize(int64(len(data))), note))},
		Details: map[string]any{"kind": kind, "name": name, "bytes": len(data), "redacted": redacted},
	}, nil
}

// readForSending reads the regular file at path (through files), refusing one larger than
// the Bot API takes before reading it. The error result is worded for the
// model.
func (t *sendFileTool) readForSending(path string) ([]byte, *agent.Result) {
	fail := func(format string, args ...any) ([]byte, *agent.Result) {
		r := agent.ErrorResult(fmt.Sprintf(format, args...))
		return nil, &r
	}
	f, err := t.files.open(path)
	if err != nil {
		return fail("Not sent: %s", describeFileError(path, err))
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fail("Not sent: %s", describeFileError(path, err))
	}
	switch {
	case info.IsDir():
		return fail("Not sent: %s is a directory; pack it first (tar, zip) and send the archive", path)
	case !info.Mode().IsRegular():
		return fail("Not sent: %s is not a regular file", path)
	case info.Size() > MaxDocumentBytes:
		return fail("Not sent: %s is %s, larger than the %d MB the Telegram Bot API accepts for an upload; compress or split it", path, formatSize(info.Size()), MaxDocumentBytes>>20)
	case info.Size() == 0:
		return fail("Not sent: %s is empty, and Telegram does not take empty files", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxDocumentBytes+1))
	if err != nil {
		return fail("Not sent: %s", describeFileError(path, err))
	}
	if len(data) > MaxDocumentBytes {
		return fail("Not sent: %s grew past the %d MB the Telegram Bot API accepts while it was read", path, MaxDocumentBytes>>20)
	}
	return data, nil
}

// cutCaption returns caption within maxCaptionUnits UTF-16 code units,
// the unit Telegram counts in, cut with an ellipsis when it is longer: a
// caption of 600 emoji is 600 runes but 1200 units, which Telegram
// refuses, and the file with it.
func cutCaption(caption string) string {
	units := func(r rune) int { return utf16.RuneLen(r) }
	total := 0
	for _, r := range caption {
		total += units(r)
	}
	if total <= maxCaptionUnits {
		return caption
	}
	n := 0
	for i, r := range caption {
		if n+units(r) > maxCaptionUnits-1 {
			return caption[:i] + "…"
		}
		n += units(r)
	}
	return caption
}
