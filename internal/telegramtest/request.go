package telegramtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// FileDownload is the Method recorded for a file download
// (GET <URL>/file/bot<token>/<path>); its Params hold "file_path".
const FileDownload = "fileDownload"

// maxBodyBytes bounds the body the server reads from one request.
const maxBodyBytes = 64 << 20

// Request is one HTTP request the server received, as it was parsed.
type Request struct {
	// Seq is the request's position in the order of arrival, from 0.
	Seq int
	// Method is the Bot API method (its canonical spelling when the server
	// knows it), or FileDownload.
	Method string
	// Token is the bot token taken from the URL path.
	Token string
	// Path is the URL path, token included.
	Path string
	// Query is the raw URL query.
	Query string
	// Params holds every parameter from the query and the body. A JSON body's
	// string values are unquoted; its other values keep their JSON text
	// (numbers, booleans, objects such as reply_markup).
	Params map[string]string
	// Files holds the uploaded files of a multipart body by field name.
	Files map[string]UploadedFile
	// ContentType is the request's Content-Type header.
	ContentType string
	// Body is the raw request body.
	Body []byte
	// Time is when the server received the request.
	Time time.Time
	// Status is the error_code the server answered, or 200 for a success. It
	// is 200 for a getUpdates request that is still waiting.
	Status int
}

// UploadedFile is a file part of a multipart request body.
type UploadedFile struct {
	Filename string
	// ContentType is the part's Content-Type header.
	ContentType string
	Content     []byte
}

// Int returns the named parameter as an integer, or 0 when it is missing or
// not a number.
func (r Request) Int(name string) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(r.Params[name]), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// Has reports whether the named parameter was sent.
func (r Request) Has(name string) bool {
	_, ok := r.Params[name]
	return ok
}

// DecodeParam unmarshals the JSON text of the named parameter (reply_markup,
// commands, ...) into v.
func (r Request) DecodeParam(name string, v any) error {
	raw, ok := r.Params[name]
	if !ok {
		return fmt.Errorf("parameter %q not sent", name)
	}
	if err := json.Unmarshal([]byte(raw), v); err != nil {
		return fmt.Errorf("decode parameter %q: %w", name, err)
	}
	return nil
}

// contains reports whether s occurs anywhere the client put data, except in
// the URL path (which carries the token by design).
func (r Request) contains(s string) bool {
	if strings.Contains(r.Query, s) || bytes.Contains(r.Body, []byte(s)) {
		return true
	}
	for k, v := range r.Params {
		if strings.Contains(k, s) || strings.Contains(v, s) {
			return true
		}
	}
	for _, f := range r.Files {
		if strings.Contains(f.Filename, s) || bytes.Contains(f.Content, []byte(s)) {
			return true
		}
	}
	return false
}

// clone returns a copy of r that shares no maps or slices with it.
func (r Request) clone() Request {
	c := r
	c.Params = make(map[string]string, len(r.Params))
	for k, v := range r.Params {
		c.Params[k] = v
	}
	c.Files = make(map[string]UploadedFile, len(r.Files))
	for k, f := range r.Files {
		c.Files[k] = UploadedFile{Filename: f.Filename, ContentType: f.ContentType, Content: bytes.Clone(f.Content)}
	}
	c.Body = bytes.Clone(r.Body)
	return c
}

// parseRequest reads and parses the query and body of hr.
func parseRequest(hr *http.Request) (Request, error) {
	r := Request{
		Path:        hr.URL.Path,
		Query:       hr.URL.RawQuery,
		Params:      map[string]string{},
		Files:       map[string]UploadedFile{},
		ContentType: hr.Header.Get("Content-Type"),
		Time:        time.Now(),
		Status:      http.StatusOK,
	}
	for k, vs := range hr.URL.Query() {
		if len(vs) > 0 {
			r.Params[k] = vs[len(vs)-1]
		}
	}
	body, err := io.ReadAll(io.LimitReader(hr.Body, maxBodyBytes))
	if err != nil {
		return r, fmt.Errorf("read body: %w", err)
	}
	r.Body = body
	if len(body) == 0 {
		return r, nil
	}
	mediaType, mediaParams, err := mime.ParseMediaType(r.ContentType)
	if err != nil {
		return r, fmt.Errorf("parse content type %q: %w", r.ContentType, err)
	}
	switch mediaType {
	case "application/json":
		return r, parseJSONBody(body, r.Params)
	case "multipart/form-data":
		return r, parseMultipartBody(body, mediaParams["boundary"], r.Params, r.Files)
	case "application/x-www-form-urlencoded":
		values, err := url.ParseQuery(string(body))
		if err != nil {
			return r, fmt.Errorf("parse form body: %w", err)
		}
		for k, vs := range values {
			r.Params[k] = vs[len(vs)-1]
		}
		return r, nil
	default:
		return r, fmt.Errorf("unsupported content type %q", mediaType)
	}
}

func parseJSONBody(body []byte, params map[string]string) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return fmt.Errorf("parse JSON body: %w", err)
	}
	for k, raw := range fields {
		var s string
		if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
			params[k] = s
			continue
		}
		params[k] = string(raw)
	}
	return nil
}

func parseMultipartBody(body []byte, boundary string, params map[string]string, files map[string]UploadedFile) error {
	if boundary == "" {
		return errors.New("multipart body without boundary")
	}
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read multipart body: %w", err)
		}
		content, err := io.ReadAll(part)
		if err != nil {
			return fmt.Errorf("read multipart part %q: %w", part.FormName(), err)
		}
		if part.FileName() != "" {
			files[part.FormName()] = UploadedFile{Filename: part.FileName(), ContentType: part.Header.Get("Content-Type"), Content: content}
			continue
		}
		params[part.FormName()] = string(content)
	}
}
