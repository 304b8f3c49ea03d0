package openaitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
)

// maxFormMemory bounds how much of a transcription form is held in memory
// rather than in temporary files.
const maxFormMemory = 32 << 20

// Transcript is one scripted answer to a transcription request.
type Transcript struct {
	// Text is the transcript.
	Text string
	// Language is the language a verbose_json answer names (default
	// "english"); the other formats carry none.
	Language string
	// Error, when non-nil, makes the server answer with this HTTP error.
	Error *HTTPError
}

// TranscriptionRequest is the parsed form of a transcription request.
type TranscriptionRequest struct {
	Model string
	// Filename and File are the uploaded file's name and bytes.
	Filename string
	File     []byte
	// ResponseFormat is the response_format field; empty means json.
	ResponseFormat string
	Language       string
	Prompt         string
	// Fields holds every form field except the file, the ones above
	// included.
	Fields map[string][]string
}

// EnqueueTranscripts appends answers for transcription requests. Each
// request takes the first one; when none is left the server answers with
// the 500 error NoScriptedResponse.
func (s *Server) EnqueueTranscripts(transcripts ...Transcript) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.transcripts = append(s.transcripts, transcripts...)
}

// TranscriptionRequests returns every parsed transcription request
// received so far, in order of arrival.
func (s *Server) TranscriptionRequests() []TranscriptionRequest {
	return parsed(s, func(r Request) *TranscriptionRequest { return r.Transcription })
}

// parseTranscription parses a multipart transcription form.
func parseTranscription(contentType string, body []byte) (TranscriptionRequest, error) {
	_, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return TranscriptionRequest{}, fmt.Errorf("parsing content type: %w", err)
	}
	form, err := multipart.NewReader(bytes.NewReader(body), params["boundary"]).ReadForm(maxFormMemory)
	if err != nil {
		return TranscriptionRequest{}, fmt.Errorf("reading form: %w", err)
	}
	defer func() { _ = form.RemoveAll() }()
	files := form.File["file"]
	if len(files) == 0 {
		return TranscriptionRequest{}, fmt.Errorf("form has no file field")
	}
	f, err := files[0].Open()
	if err != nil {
		return TranscriptionRequest{}, fmt.Errorf("opening file field: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return TranscriptionRequest{}, fmt.Errorf("reading file field: %w", err)
	}
	first := func(name string) string {
		if v := form.Value[name]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	return TranscriptionRequest{
		Model:          first("model"),
		Filename:       files[0].Filename,
		File:           data,
		ResponseFormat: first("response_format"),
		Language:       first("language"),
		Prompt:         first("prompt"),
		Fields:         form.Value,
	}, nil
}

// handleTranscription answers POST /v1/audio/transcriptions.
func (s *Server) handleTranscription(w http.ResponseWriter, r *http.Request) {
	var parseErr error
	rec, ok := s.readAndRecord(w, r, func(rec *Request, body []byte) {
		tr, err := parseTranscription(r.Header.Get("Content-Type"), body)
		if err != nil {
			parseErr = err
			return
		}
		rec.Transcription = &tr
	})
	if !ok {
		return
	}
	if parseErr != nil {
		writeError(w, HTTPError{Status: http.StatusBadRequest, Message: "fake openai: " + parseErr.Error(), Type: "invalid_request_error"})
		return
	}
	s.mu.Lock()
	var (
		tr     Transcript
		queued = len(s.transcripts) > 0
	)
	if queued {
		tr = s.transcripts[0]
		s.transcripts = s.transcripts[1:]
	}
	s.mu.Unlock()
	switch {
	case !queued && s.transcriber != nil:
		tr = s.transcriber(*rec.Transcription)
		if tr.Error != nil {
			writeError(w, *tr.Error)
		} else {
			writeTranscript(w, rec.Transcription.ResponseFormat, tr)
		}
	case !queued:
		s.unscripted(w, fmt.Sprintf("transcription (model %q, %d bytes)", rec.Transcription.Model, len(rec.Transcription.File)))
	case tr.Error != nil:
		writeError(w, *tr.Error)
	default:
		writeTranscript(w, rec.Transcription.ResponseFormat, tr)
	}
}

// writeTranscript answers with tr in the requested response format.
func writeTranscript(w http.ResponseWriter, format string, tr Transcript) {
	text, language := tr.Text, tr.Language
	if language == "" {
		language = "english"
	}
	var v any
	switch format {
	case "text", "srt", "vtt":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, text)
		return
	case "verbose_json":
		v = struct {
			Task     string  `json:"task"`
			Language string  `json:"language"`
			Duration float64 `json:"duration"`
			Text     string  `json:"text"`
		}{Task: "transcribe", Language: language, Duration: 1, Text: text}
	default:
		v = struct {
			Text string `json:"text"`
		}{Text: text}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
