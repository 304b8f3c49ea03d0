package botapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"slices"
	"strconv"

	"github.com/go-telegram/bot/models"
)

// MaxDownload is the largest file the Bot API lets a bot download (20 MB).
const MaxDownload = 20 << 20

type getFileParams struct {
	FileID string `json:"file_id"`
}

// GetFile describes the file fileID (getFile), under the retry policy; its
// FilePath is what Download takes.
func (c *Client) GetFile(ctx context.Context, fileID string) (*models.File, error) {
	var f models.File
	if err := c.call(ctx, "getFile", getFileParams{FileID: fileID}, &f); err != nil {
		return nil, err
	}
	return &f, nil
}

// Download fetches the file at filePath (from GetFile), with one try: a
// failed download is the user's to send again. A file larger than limit
// bytes (MaxDownload when limit is not positive) is not read past the
// limit: its error wraps ErrFileTooLarge.
func (c *Client) Download(ctx context.Context, filePath string, limit int64) ([]byte, error) {
	const method = "download"
	if limit <= 0 {
		limit = MaxDownload
	}
	ctx, cancel := context.WithTimeout(ctx, transferTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.s.base+"/file/bot"+c.s.token+"/"+filePath, nil)
	if err != nil {
		return nil, c.s.transportError(method, err)
	}
	resp, err := c.s.http.Do(req)
	if err != nil {
		return nil, c.s.transportError(method, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		// The file server answers an error as plain text, not JSON.
		return nil, &Error{Method: method, Code: resp.StatusCode, Description: http.StatusText(resp.StatusCode)}
	}
	if resp.ContentLength > limit {
		return nil, &Error{Method: method, Description: fmt.Sprintf("the file has %d bytes, over the limit of %d", resp.ContentLength, limit), cause: ErrFileTooLarge}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, c.s.transportError(method, err)
	}
	if int64(len(data)) > limit {
		return nil, &Error{Method: method, Description: fmt.Sprintf("the file is over the limit of %d bytes", limit), cause: ErrFileTooLarge}
	}
	return data, nil
}

// Upload is a file to send as a document or a photo.
type Upload struct {
	ChatID   int64
	ThreadID int
	// FileName is the name the chat shows (redacted).
	FileName string
	Data     []byte
	// Caption is shown under the file (redacted like a message's text);
	// Telegram allows 1024 UTF-16 units.
	Caption   string
	ParseMode models.ParseMode
	ReplyTo   int
	Buttons   *models.InlineKeyboardMarkup
	Silent    bool
}

// SendDocument sends u as a document (sendDocument, multipart), its file
// name and caption redacted, under the retry policy like any other send.
func (c *Client) SendDocument(ctx context.Context, u Upload) (*models.Message, error) {
	return c.upload(ctx, "sendDocument", "document", u)
}

// SendPhoto sends u as a photo (sendPhoto), like SendDocument.
func (c *Client) SendPhoto(ctx context.Context, u Upload) (*models.Message, error) {
	return c.upload(ctx, "sendPhoto", "photo", u)
}

func (c *Client) upload(ctx context.Context, method, field string, u Upload) (*models.Message, error) {
	body, contentType, err := c.multipartBody(method, field, u)
	if err != nil {
		return nil, c.s.encodeError(method, err)
	}
	var out wireMessage
	err = c.retry(ctx, method, func(ctx context.Context) error {
		return c.post(ctx, method, body, contentType, transferTimeout, &out)
	})
	if err != nil {
		return nil, err
	}
	return out.message(), nil
}

// multipartBody encodes u once, so every try sends the same bytes.
func (c *Client) multipartBody(method, field string, u Upload) ([]byte, string, error) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	fields := map[string]string{"chat_id": strconv.FormatInt(u.ChatID, 10)}
	if u.ThreadID != 0 {
		fields["message_thread_id"] = strconv.Itoa(u.ThreadID)
	}
	if u.Caption != "" {
		caption, mode := c.outgoing(method, u.Caption, u.ParseMode, false)
		fields["caption"] = caption
		if mode != "" {
			fields["parse_mode"] = string(mode)
		}
	}
	if u.Silent {
		fields["disable_notification"] = "true"
	}
	for name, v := range map[string]any{"reply_parameters": replyTo(u.ReplyTo), "reply_markup": c.redactKeyboard(u.Buttons)} {
		if raw, err := json.Marshal(v); err != nil {
			return nil, "", err
		} else if string(raw) != "null" {
			fields[name] = string(raw)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		if err := w.WriteField(name, fields[name]); err != nil {
			return nil, "", err
		}
	}
	name := c.s.red.Redact(u.FileName)
	if name == "" {
		name = field
	}
	h := make(textproto.MIMEHeader)
	h.Set("Content-Disposition", mime.FormatMediaType("form-data", map[string]string{"name": field, "filename": name}))
	h.Set("Content-Type", ContentType(name, u.Data))
	part, err := w.CreatePart(h)
	if err != nil {
		return nil, "", err
	}
	if _, err := part.Write(u.Data); err != nil {
		return nil, "", err
	}
	if err := w.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), w.FormDataContentType(), nil
}
