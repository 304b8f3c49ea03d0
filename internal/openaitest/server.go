// Package openaitest provides a fake OpenAI-compatible HTTP server for
// tests: chat completions (streamed and not) and audio transcriptions
// answered from a script or a responder function, with every request
// recorded so tests can assert what the model provider was sent.
//
// A typical test:
//
//	srv := openaitest.New(t, openaitest.WithScript(
//		openaitest.ToolCalls(openaitest.ToolCall{Name: "bash", Arguments: `{"command":"ls"}`}),
//		openaitest.Text("done"),
//	))
//	cfg := openai.DefaultConfig("sk-test")
//	cfg.BaseURL = srv.URL()
//	// ... run the code under test with cfg ...
//	for _, body := range srv.AllBodies() { /* scan for secrets */ }
//
// go-openai drops the headers of error responses: an *openai.APIError
// carries the status code but not Retry-After. A caller that needs the
// header must read it in its own http.RoundTripper (ClientConfig.HTTPClient)
// before go-openai sees the response.
package openaitest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// NoScriptedResponse is the message of the 500 error the server answers
// with when a request arrives and nothing is scripted for it.
const NoScriptedResponse = "fake openai: no scripted response"

// Server is a fake OpenAI-compatible API server. Its methods are safe for
// concurrent use.
type Server struct {
	t               testing.TB
	srv             *httptest.Server
	chunkSize       int
	chunkDelay      time.Duration
	apiKey          string
	allowUnscripted bool
	transcriber     Transcriber
	recordLimit     int
	created         int64
	done            chan struct{}
	closeOnce       sync.Once

	mu          sync.Mutex
	script      []Response
	responder   Responder
	transcripts []Transcript
	requests    []Request
	changed     chan struct{}
	completions int
}

// New starts a Server and closes it when the test ends.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	cfg := config{chunkSize: defaultChunkSize}
	for _, opt := range opts {
		opt(&cfg)
	}
	s := &Server{
		t:               t,
		chunkSize:       cfg.chunkSize,
		chunkDelay:      cfg.chunkDelay,
		apiKey:          cfg.apiKey,
		allowUnscripted: cfg.allowUnscripted,
		transcriber:     cfg.transcriber,
		recordLimit:     cfg.recordLimit,
		created:         time.Now().Unix(),
		done:            make(chan struct{}),
		script:          cfg.script,
		responder:       cfg.responder,
		transcripts:     cfg.transcripts,
		changed:         make(chan struct{}),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.handleChat)
	mux.HandleFunc("POST /v1/audio/transcriptions", s.handleTranscription)
	mux.HandleFunc("/", s.handleUnknown)
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// URL returns the API base URL, ending in /v1, as OPENAI_BASE_URL and
// go-openai's ClientConfig.BaseURL expect it.
func (s *Server) URL() string {
	return s.srv.URL + "/v1"
}

// Close releases stalled responses and shuts the server down, waiting for
// every request in flight. It is safe to call more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		s.srv.Close()
	})
}

// readAndRecord reads the whole body of r and records the request, with
// parsed set by the caller's parse function when it is not nil.
func (s *Server) readAndRecord(w http.ResponseWriter, r *http.Request, parse func(*Request, []byte)) (Request, bool) {
	body, err := io.ReadAll(r.Body)
	rec := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	if err == nil && parse != nil {
		parse(&rec, body)
	}
	s.record(rec)
	if err != nil {
		writeError(w, HTTPError{Status: http.StatusBadRequest, Message: fmt.Sprintf("fake openai: reading body: %v", err), Type: "invalid_request_error"})
		return rec, false
	}
	if s.apiKey != "" && r.Header.Get("Authorization") != "Bearer "+s.apiKey {
		writeError(w, HTTPError{
			Status:  http.StatusUnauthorized,
			Message: "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.",
			Type:    "invalid_request_error",
			Code:    "invalid_api_key",
		})
		return rec, false
	}
	return rec, true
}

// handleChat answers POST /v1/chat/completions.
func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	var parseErr error
	rec, ok := s.readAndRecord(w, r, func(rec *Request, body []byte) {
		chat, err := parseChatRequest(body)
		if err != nil {
			parseErr = err
			return
		}
		rec.Chat = &chat
	})
	if !ok {
		return
	}
	if parseErr != nil {
		writeError(w, HTTPError{Status: http.StatusBadRequest, Message: "fake openai: " + parseErr.Error(), Type: "invalid_request_error"})
		return
	}
	resp, ok := s.nextResponse(*rec.Chat)
	if !ok {
		s.unscripted(w, fmt.Sprintf("chat completion (model %q, %d messages)", rec.Chat.Model, len(rec.Chat.Messages)))
		return
	}
	if resp.Error != nil {
		writeError(w, *resp.Error)
		return
	}
	if resp.Failure == FailReset && resp.FailAfter == 0 {
		s.reset(w)
		return
	}
	id, resp := s.assignIDs(resp)
	if rec.Chat.Stream {
		s.stream(w, r, *rec.Chat, resp, id)
		return
	}
	s.complete(w, r, *rec.Chat, resp, id)
}

// assignIDs returns a new completion id and resp with an id for every tool
// call that has none.
func (s *Server) assignIDs(resp Response) (string, Response) {
	s.mu.Lock()
	s.completions++
	n := s.completions
	s.mu.Unlock()
	calls := make([]ToolCall, len(resp.ToolCalls))
	for i, c := range resp.ToolCalls {
		if c.ID == "" {
			c.ID = fmt.Sprintf("call_fake_%d_%d", n, i)
		}
		calls[i] = c
	}
	resp.ToolCalls = calls
	return fmt.Sprintf("chatcmpl-fake-%d", n), resp
}

// stream answers a streamed chat request with resp.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, req ChatRequest, resp Response, id string) {
	sse, err := newSSEWriter(w)
	if err != nil {
		s.t.Errorf("fake openai: %v", err)
		return
	}
	size := s.chunkSize
	if resp.ChunkSize >= 1 {
		size = resp.ChunkSize
	}
	chunks := streamChunks(resp, id, req.Model, s.created, size)
	for i, c := range chunks {
		if resp.Failure != FailNone && i == resp.FailAfter {
			s.fail(r, sse, resp.Failure)
			return
		}
		if err := sse.json(c); err != nil || !s.pause(r) {
			return
		}
	}
	if resp.Failure != FailNone {
		s.fail(r, sse, resp.Failure)
		return
	}
	if req.IncludeUsage {
		if err := sse.json(usageChunk(resp, id, req.Model, s.created)); err != nil {
			return
		}
	}
	_ = sse.done() // The client may be gone; there is nothing left to do.
}

// fail ends a stream the way f says.
func (s *Server) fail(r *http.Request, sse *sseWriter, f Failure) {
	switch f {
	case FailAbort:
		panic(http.ErrAbortHandler)
	case FailInvalidJSON:
		_ = sse.data([]byte(`{"id":"chatcmpl-broken","choices":[{"delta":{"content":`))
	case FailStall:
		s.stall(r)
		panic(http.ErrAbortHandler) // A stalled stream never ends cleanly.
	case FailErrorEvent:
		_ = sse.data(encodeError(midStreamError()))
	case FailReset:
		s.reset(sse.w)
	}
}

// reset drops the request's connection with a TCP RST: the connection is
// taken from the HTTP server and closed with a zero linger time.
func (s *Server) reset(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		s.t.Errorf("fake openai: taking the connection to reset it: %v", err)
		return
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}

// stall blocks until the request's context ends or the server closes.
func (s *Server) stall(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-s.done:
	}
}

// pause waits for the chunk delay and reports whether to go on.
func (s *Server) pause(r *http.Request) bool {
	if s.chunkDelay <= 0 {
		return true
	}
	timer := time.NewTimer(s.chunkDelay)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-r.Context().Done():
		return false
	case <-s.done:
		return false
	}
}

// completion is the JSON shape of a non-streamed chat completion.
type completion struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"`
	Created int64              `json:"created"`
	Model   string             `json:"model"`
	Choices []completionChoice `json:"choices"`
	Usage   *wireUsage         `json:"usage"`
}

type completionChoice struct {
	Index        int               `json:"index"`
	Message      completionMessage `json:"message"`
	FinishReason string            `json:"finish_reason"`
}

type completionMessage struct {
	Role      string         `json:"role"`
	Content   *string        `json:"content"`
	ToolCalls []wireToolCall `json:"tool_calls,omitempty"`
}

// complete answers a non-streamed chat request with resp.
func (s *Server) complete(w http.ResponseWriter, r *http.Request, req ChatRequest, resp Response, id string) {
	msg := completionMessage{Role: "assistant"}
	if resp.Text != "" || len(resp.ToolCalls) == 0 {
		msg.Content = &resp.Text
	}
	for _, c := range resp.ToolCalls {
		var tc wireToolCall
		tc.ID, tc.Type = c.ID, "function"
		tc.Function.Name, tc.Function.Arguments = c.Name, c.Arguments
		msg.ToolCalls = append(msg.ToolCalls, tc)
	}
	body, err := json.Marshal(completion{
		ID: id, Object: "chat.completion", Created: s.created, Model: req.Model,
		Choices: []completionChoice{{Message: msg, FinishReason: finishReason(resp)}},
		Usage:   usageOf(resp.Usage),
	})
	if err != nil {
		s.t.Errorf("fake openai: encoding completion: %v", err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch resp.Failure {
	case FailNone:
		_, _ = w.Write(body)
	case FailAbort:
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body[:len(body)/2])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	case FailEndWithoutDone:
		_, _ = w.Write(body[:len(body)/2])
	case FailInvalidJSON:
		_, _ = w.Write([]byte(`{"id":`))
	case FailErrorEvent:
		writeError(w, midStreamError())
	case FailReset:
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body[:len(body)/2])
		w.(http.Flusher).Flush()
		s.reset(w)
	case FailStall:
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		s.stall(r)
		panic(http.ErrAbortHandler) // A stalled response never ends cleanly.
	}
}

// unscripted answers a request nothing was scripted for, and fails the
// test unless AllowUnscripted was given.
func (s *Server) unscripted(w http.ResponseWriter, what string) {
	if !s.allowUnscripted {
		s.t.Errorf("%s: %s", NoScriptedResponse, what)
	}
	writeError(w, HTTPError{Status: http.StatusInternalServerError, Message: NoScriptedResponse, Type: "server_error"})
}

// handleUnknown answers every path the fake does not serve with a 404.
func (s *Server) handleUnknown(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.readAndRecord(w, r, nil); !ok {
		return
	}
	writeError(w, HTTPError{
		Status:  http.StatusNotFound,
		Message: fmt.Sprintf("fake openai: no route for %s %s", r.Method, r.URL.Path),
		Type:    "invalid_request_error",
	})
}

// errorBody is the JSON shape of an OpenAI error answer.
type errorBody struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    any     `json:"code"`
	} `json:"error"`
}

// encodeError returns the JSON error body for e.
func encodeError(e HTTPError) []byte {
	var b errorBody
	b.Error.Message, b.Error.Type, b.Error.Code = e.Message, e.Type, e.Code
	if e.Param != "" {
		b.Error.Param = &e.Param
	}
	body, err := json.Marshal(b)
	if err != nil {
		return []byte(`{"error":{"message":"fake openai: encoding error body","type":"server_error","param":null,"code":null}}`)
	}
	return body
}

// writeError answers with the HTTP error e.
func writeError(w http.ResponseWriter, e HTTPError) {
	body := encodeError(e)
	if e.RetryAfter != "" {
		w.Header().Set("Retry-After", e.RetryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	status := e.Status
	if status == 0 {
		status = http.StatusInternalServerError
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
