package telegramtest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/go-telegram/bot/models"
)

// Server is a fake Telegram Bot API server backed by an httptest.Server.
// Its methods are safe for concurrent use.
type Server struct {
	tb      testing.TB
	cfg     config
	http    *httptest.Server
	closing sync.Once

	mu      sync.Mutex
	changed chan struct{} // closed and replaced whenever the state changes
	closed  bool

	requests      []Request
	updates       []queuedUpdate
	nextUpdateID  int64
	nextMessageID int
	nextFileID    int
	chats         map[int64]models.Chat
	messages      map[int64][]*Message
	files         map[string]storedFile
	filePaths     map[string]string
	commands      string
	failures      map[string][]APIError
	disabled      map[string]bool
	rejectHTML    []string
	handlers      map[string]HandlerFunc
	hook          webhookState
}

// HandlerFunc answers one Bot API method: it returns the result to send with
// "ok":true, or an error to send with "ok":false. It is called without the
// server's lock held, so it may call the server's methods.
type HandlerFunc func(r Request) (result any, err *APIError)

// New starts a fake Bot API server and closes it when the test ends.
func New(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	cfg := defaultConfig()
	for _, opt := range opts {
		opt(&cfg)
	}
	s := &Server{
		tb:            tb,
		cfg:           cfg,
		changed:       make(chan struct{}),
		nextUpdateID:  1,
		nextMessageID: 1,
		chats:         map[int64]models.Chat{},
		messages:      map[int64][]*Message{},
		files:         map[string]storedFile{},
		filePaths:     map[string]string{},
		failures:      map[string][]APIError{},
		disabled:      map[string]bool{},
		handlers:      map[string]HandlerFunc{},
	}
	s.http = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	tb.Cleanup(s.Close)
	return s
}

// URL returns the server's base URL, for TELEGRAM_API_URL or bot.WithServerURL.
func (s *Server) URL() string {
	return s.http.URL
}

// Token returns the bot token the server accepts.
func (s *Server) Token() string {
	return s.cfg.token
}

// BotUser returns the user getMe answers with.
func (s *Server) BotUser() models.User {
	return s.cfg.botUser
}

// Close releases pending long polls and shuts the server down. It is safe to
// call more than once; New registers it with the test's Cleanup.
func (s *Server) Close() {
	s.closing.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.notifyLocked()
		s.mu.Unlock()
		s.stopDelivering()
		s.http.Close()
	})
}

// Handle installs h as the handler of a Bot API method, replacing the
// built-in one if there is one. Injected failures and disabled methods still
// take precedence.
func (s *Server) Handle(method string, h HandlerFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handlers[strings.ToLower(method)] = h
}

// notifyLocked wakes everyone waiting for a change; s.mu must be held.
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// serveHTTP routes /bot<token>/<method> and /file/bot<token>/<path>.
func (s *Server) serveHTTP(w http.ResponseWriter, hr *http.Request) {
	if rest, ok := strings.CutPrefix(hr.URL.Path, "/file/bot"); ok {
		s.serveFile(w, hr, rest)
		return
	}
	rest, ok := strings.CutPrefix(hr.URL.Path, "/bot")
	token, method, found := strings.Cut(rest, "/")
	if !ok || !found || method == "" {
		writeJSON(w, http.StatusNotFound, errorResponse(notFound()))
		return
	}
	method = strings.TrimPrefix(method, "test/")
	req, err := parseRequest(hr)
	req.Token = token
	req.Method = canonicalMethod(method)
	if err != nil {
		s.finish(w, req, nil, badRequest(err.Error()))
		return
	}
	if token != s.cfg.token {
		s.finish(w, req, nil, &APIError{Code: http.StatusUnauthorized, Description: "Unauthorized"})
		return
	}
	if apiErr := s.takeFailure(req.Method); apiErr != nil {
		s.finish(w, req, nil, apiErr)
		return
	}
	s.mu.Lock()
	custom := s.handlers[strings.ToLower(req.Method)]
	s.mu.Unlock()
	if custom != nil {
		result, apiErr := custom(req.clone())
		s.finish(w, req, result, apiErr)
		return
	}
	if strings.EqualFold(req.Method, "getUpdates") {
		if s.Webhook() != nil {
			s.finish(w, req, nil, webhookConflict())
			return
		}
		s.serveGetUpdates(w, hr, req)
		return
	}
	_, handler, known := builtin(strings.ToLower(req.Method))
	if !known {
		s.tb.Logf("telegramtest: no handler for method %q; answering 404", req.Method)
		s.finish(w, req, nil, notFound())
		return
	}
	s.mu.Lock()
	result, apiErr := handler(s, &req)
	s.recordLocked(&req, apiErr)
	s.mu.Unlock()
	writeResult(w, result, apiErr)
}

// finish records req with the outcome and writes the answer.
func (s *Server) finish(w http.ResponseWriter, req Request, result any, apiErr *APIError) {
	s.mu.Lock()
	s.recordLocked(&req, apiErr)
	s.mu.Unlock()
	writeResult(w, result, apiErr)
}

// recordLocked appends req to the request log; s.mu must be held.
func (s *Server) recordLocked(req *Request, apiErr *APIError) {
	if apiErr != nil {
		req.Status = apiErr.Code
	}
	req.Seq = len(s.requests)
	s.requests = append(s.requests, *req)
	s.notifyLocked()
}

func writeResult(w http.ResponseWriter, result any, apiErr *APIError) {
	if apiErr != nil {
		writeJSON(w, apiErr.Code, errorResponse(apiErr))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "result": result})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		body = []byte(`{"ok":false,"error_code":500,"description":"Internal Server Error: telegramtest could not encode its answer"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
