package chat

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/chat/botapi"
	"github.com/volcanic/telegram-agent/internal/imagesafe"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// maxPhoto bounds the photo size sent to the model as an image.
const maxPhoto = 5 << 20

// inboxDir is the workspace folder received documents are saved in.
const inboxDir = "inbox"

// attachments turns what a message carries into a turn's content: it
// downloads the files, transcribes voice, sanitises photos and saves
// documents under the workspace's inbox/.
type attachments struct {
	api *botapi.Client
	// transcriber is the speech-to-text service (nil: none; see
	// WithTranscriber).
	transcriber Transcriber
	redactor    *redactor.Redactor
	// workspace is the agent's working directory, view the sandbox's view
	// of it (nil: the sandbox is off), see Config.View.
	workspace string
	view      *sandbox.View
	logger    *slog.Logger
	out       outlet
}

// buildContent is attachments.build, for the turns.
func (h *Host) buildContent(ctx context.Context, t target, in *inbound) ([]agent.Content, error) {
	return h.inbox.build(ctx, t, in)
}

// build turns a message into the user content of a turn: its text, a
// voice note's transcript (shown to the user too), a photo as an image, a
// document saved under the workspace's inbox/ with its path.
func (a *attachments) build(ctx context.Context, t target, in *inbound) ([]agent.Content, error) {
	m := in.msg
	text := in.text
	var content []agent.Content
	switch {
	case m.Voice != nil || m.Audio != nil:
		fileID, size, name := "", int64(0), "voice.ogg"
		if m.Voice != nil {
			fileID, size = m.Voice.FileID, m.Voice.FileSize
		} else {
			fileID, size = m.Audio.FileID, m.Audio.FileSize
			if m.Audio.FileName != "" {
				name = m.Audio.FileName
			}
		}
		if a.transcriber == nil {
			return nil, userError("voice messages cannot be transcribed: no speech endpoint is configured")
		}
		audio, filePath, err := a.download(ctx, fileID, size)
		if err != nil {
			return nil, err
		}
		if ext := path.Ext(filePath); m.Voice != nil && ext != "" {
			name = "voice" + ext
		}
		transcript, language, err := a.transcriber.Transcribe(ctx, name, audio)
		if err != nil {
			a.logger.Warn("transcription failed", "err", err)
			return nil, userError("the voice message could not be transcribed; please try again or type it")
		}
		if transcript == "" {
			return nil, userError("the voice message had no words I could transcribe")
		}
		a.out.sendText(ctx, t, "🎤 "+transcript, m.ID)
		text = strings.TrimSpace(voiceText(transcript, language) + "\n\n" + text)
	case len(m.Photo) > 0:
		best := -1
		for i, p := range m.Photo {
			if p.FileSize > 0 && p.FileSize > maxPhoto {
				continue
			}
			if best < 0 || p.Width*p.Height > m.Photo[best].Width*m.Photo[best].Height {
				best = i
			}
		}
		if best < 0 {
			return nil, userErrorf("the photo is too large (the limit is %d MB)", maxPhoto>>20)
		}
		data, _, err := a.download(ctx, m.Photo[best].FileID, int64(m.Photo[best].FileSize))
		if err != nil {
			return nil, err
		}
		// Decoded strictly and re-encoded from its pixels: whatever else
		// the file carries (EXIF, comments, bytes after its end) stays out.
		img, err := imagesafe.Sanitize(data, a.redactor)
		if err != nil {
			return nil, userErrorf("the photo was not sent to the model: %v", err)
		}
		content = append(content, agent.Image(img.MIMEType, img.Data))
		if text == "" {
			text = "(a photo)"
		}
	case m.Document != nil:
		data, _, err := a.download(ctx, m.Document.FileID, m.Document.FileSize)
		if err != nil {
			return nil, err
		}
		rel, err := a.save(m.Document.FileName, data)
		if err != nil {
			a.logger.Error("saving a document", "err", err)
			return nil, userError("the file could not be saved in the workspace")
		}
		note := fmt.Sprintf("[The user sent a file, saved in the workspace at %s (%d bytes).]", rel, len(data))
		text = strings.TrimSpace(note + "\n\n" + text)
	}
	if in.edited {
		text = strings.TrimSpace(editedNote + "\n\n" + text)
	}
	if text != "" {
		content = append([]agent.Content{agent.Text(text)}, content...)
	}
	if len(content) == 0 {
		return nil, userError("the message is empty")
	}
	return content, nil
}

// editedNote tells the model that a message is an edit of one it saw.
const editedNote = "[The user edited an earlier message of theirs; this is its new text.]"

// download fetches a file through getFile, within the Bot API's 20 MB
// limit, and returns it with its path on Telegram's file server.
func (a *attachments) download(ctx context.Context, fileID string, size int64) ([]byte, string, error) {
	tooBig := userErrorf("the file is too large: bots can download at most %d MB", botapi.MaxDownload>>20)
	if size > botapi.MaxDownload {
		return nil, "", tooBig
	}
	f, err := a.api.GetFile(ctx, fileID)
	if err != nil {
		a.logger.Warn("getFile failed", "err", err)
		if botapi.IsFileTooLarge(err) {
			return nil, "", tooBig
		}
		return nil, "", userError("the file could not be fetched from Telegram")
	}
	if f.FileSize > botapi.MaxDownload {
		return nil, "", tooBig
	}
	data, err := a.api.Download(ctx, f.FilePath, botapi.MaxDownload)
	switch {
	case botapi.IsFileTooLarge(err):
		return nil, "", tooBig
	case err != nil:
		a.logger.Warn("file download failed", "err", err)
		return nil, "", userError("the file could not be downloaded from Telegram")
	}
	return data, f.FilePath, nil
}

// save writes data under <workspace>/inbox/ with a sanitised name, never
// overwriting a file, and returns the path relative to the workspace.
func (a *attachments) save(name string, data []byte) (string, error) {
	dir := filepath.Join(a.workspace, inboxDir)
	mkdir := func() error { return os.MkdirAll(dir, 0o755) }
	create := os.OpenFile
	if v := a.view; v != nil {
		mkdir = func() error {
			d, err := v.OpenDir(dir, true)
			if err == nil {
				d.Close()
			}
			return err
		}
		create = v.OpenFile
	}
	if err := mkdir(); err != nil {
		return "", err
	}
	base := sanitizeFileName(name)
	ext := filepath.Ext(base)
	stem := strings.TrimSuffix(base, ext)
	for i := 0; i < 10000; i++ {
		candidate := base
		if i > 0 {
			candidate = fmt.Sprintf("%s-%d%s", stem, i, ext)
		}
		f, err := create(filepath.Join(dir, candidate), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		_, werr := f.Write(data)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			os.Remove(f.Name())
			return "", werr
		}
		return inboxDir + "/" + candidate, nil
	}
	return "", errors.New("chat: too many files with that name")
}

// sanitizeFileName keeps a file name's letters, digits, '.', '-' and '_',
// drops any directory part, and never returns a hidden or empty name.
func sanitizeFileName(name string) string {
	name = filepath.Base(strings.ReplaceAll(name, "\\", "/"))
	var b strings.Builder
	for _, r := range name {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '.', r == '-', r == '_':
			b.WriteRune(r)
		case unicode.IsSpace(r):
			b.WriteRune('_')
		}
	}
	s := strings.TrimLeft(b.String(), ".")
	if r := []rune(s); len(r) > 100 {
		s = string(r[len(r)-100:])
	}
	if s == "" || s == "." {
		s = "file"
	}
	return s
}
