package mcp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/openai"
	"github.com/volcanic/telegram-agent/internal/openaitest"
)

// Fake credentials the remote server is configured with. Failure messages
// never print them.
const (
	// remoteToken is REMOTE_TOKEN, sent as "Authorization: Bearer ...".
	remoteToken = "remote-BEARER-token-0123456789"
	// remoteKey is REMOTE_KEY, sent as X-Api-Key.
	remoteKey = "remote-API-key-9876543210"
)

// remoteTools are the model's names of the remote server's tools.
var remoteTools = []string{"mcp__remote__echo", "mcp__remote__session", "mcp__remote__stall", "mcp__remote__whoami"}

// remoteLookupEnv is the bot's environment the remote configuration expands.
func remoteLookupEnv(name string) (string, bool) {
	switch name {
	case "REMOTE_TOKEN":
		return remoteToken, true
	case "REMOTE_KEY":
		return remoteKey, true
	}
	return hostLookup(name)
}

// remoteServer is a Streamable HTTP MCP server built with the SDK, on a
// loopback address that stays the same when it goes down and comes back up;
// coming back, it has forgotten its sessions, as a restarted server has.
type remoteServer struct {
	t    *testing.T
	addr string

	mu      sync.Mutex
	srv     *httptest.Server
	release chan struct{}
	// unstall closes release, once per life.
	unstall func()
	// headers are those of every request received, in order, and
	// methods their methods.
	headers []http.Header
	methods []string
}

// newRemoteServer starts a remoteServer and stops it when the test ends.
func newRemoteServer(t *testing.T) *remoteServer {
	t.Helper()
	r := &remoteServer{t: t, addr: "127.0.0.1:0"}
	r.up()
	t.Cleanup(r.down)
	return r
}

// url is the server's MCP endpoint.
func (r *remoteServer) url() string { return "http://" + r.addr + "/mcp" }

// up starts a new server on the address.
func (r *remoteServer) up() {
	r.t.Helper()
	ln, err := net.Listen("tcp", r.addr)
	if err != nil {
		r.t.Fatalf("listening on the remote server's address again: %v", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.addr = ln.Addr().String()
	r.release = make(chan struct{})
	r.unstall = sync.OnceFunc(func() { close(r.release) })
	srv := httptest.NewUnstartedServer(r.handler(r.release))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	r.srv = srv
}

// down stops the server: it refuses connections until up.
func (r *remoteServer) down() {
	r.mu.Lock()
	srv := r.srv
	r.srv = nil
	unstall := r.unstall
	r.mu.Unlock()
	if unstall != nil {
		unstall()
	}
	if srv != nil {
		srv.Close()
	}
}

// received returns the values of the header name in every request so far.
func (r *remoteServer) received(name string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, h := range r.headers {
		out = append(out, h.Get(name))
	}
	return out
}

// deleted returns the session ids of the DELETE requests so far, which end
// sessions.
func (r *remoteServer) deleted() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for i, m := range r.methods {
		if m == http.MethodDelete {
			out = append(out, r.headers[i].Get("Mcp-Session-Id"))
		}
	}
	return out
}

// requests returns how many requests the server received so far.
func (r *remoteServer) requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.headers)
}

// handler is one life of the server: a new MCP server, so no session
// survives a restart. Its tools: whoami echoes the credentials it received
// (a server that leaks them back, to prove the redactor catches them),
// echo returns its text, session the id of the MCP session the call came
// in, and stall answers only when release closes.
func (r *remoteServer) handler(release <-chan struct{}) http.Handler {
	server := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "v1.0.0"}, nil)
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	mcp.AddTool(server, &mcp.Tool{Name: "whoami", Description: "Says which credentials arrived."},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			h := req.Extra.Header
			return text(fmt.Sprintf("authorization=%s x-api-key=%s", h.Get("Authorization"), h.Get("X-Api-Key"))), nil, nil
		})
	mcp.AddTool(server, &mcp.Tool{Name: "echo", Description: "Returns its text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Text string `json:"text"`
		}) (*mcp.CallToolResult, any, error) {
			return text(in.Text), nil, nil
		})
	mcp.AddTool(server, &mcp.Tool{Name: "session", Description: "Returns the MCP session's id."},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			return text(req.Session.ID()), nil, nil
		})
	mcp.AddTool(server, &mcp.Tool{Name: "stall", Description: "Never answers in time."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			select {
			case <-ctx.Done():
			case <-release:
			}
			return text("late"), nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.headers = append(r.headers, req.Header.Clone())
		r.methods = append(r.methods, req.Method)
		r.mu.Unlock()
		h.ServeHTTP(w, req)
	})
}

// remoteConfig loads the configuration of one server named remote at url,
// with the headers an operator would write, as the bot does.
func remoteConfig(t *testing.T, url string) Config {
	t.Helper()
	cfg, err := Load(fmt.Sprintf(`{"mcpServers": {"remote": {"url": %q, "headers": {"Authorization": "Bearer ${REMOTE_TOKEN}", "X-Api-Key": "${REMOTE_KEY}"}}}}`, url),
		remoteLookupEnv, hostSecrets)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if diff := cmp.Diff([]string{remoteKey, remoteToken}, cfg.Secrets); diff != "" {
		t.Errorf("the expanded header values are not the configuration's secrets (-want +got):\n%s", diff)
	}
	return cfg
}

// fakeClock is the reconnection back-off's clock, moved by the test.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// withClock sets the back-off's clock.
func withClock(now func() time.Time) Option {
	return func(o *options) { o.clock.NowFunc = now }
}

// checkRemoteSecrets fails the test when text holds a remote credential.
func checkRemoteSecrets(t *testing.T, where, text string) {
	t.Helper()
	checkAbsent(t, where, "the remote token", text, remoteToken)
	checkAbsent(t, where, "the remote key", text, remoteKey)
}

func TestRemoteHeadersNeverReachTheModel(t *testing.T) {
	srv := newRemoteServer(t)
	cfg := remoteConfig(t, srv.url())
	ai := openaitest.New(t, openaitest.WithScript(
		openaitest.ToolCalls(openaitest.ToolCall{Name: "mcp__remote__whoami", Arguments: `{}`}),
		openaitest.Text("done"),
	))
	h := startHarness(t, cfg, openai.NewProvider(openai.Config{APIKey: "sk-test-key", BaseURL: ai.URL()}), cfg.Secrets)
	s := h.session(t, "remote")
	if _, err := s.Prompt(context.WithoutCancel(t.Context()), []agent.Content{agent.Text("who am I?")}, nil); err != nil {
		t.Fatalf("Prompt: %v", err)
	}

	t.Run("the headers arrived", func(t *testing.T) {
		auth, keys := srv.received("Authorization"), srv.received("X-Api-Key")
		if len(auth) == 0 {
			t.Fatal("the server received no request")
		}
		// Discovery's requests and the session's: every one carries them.
		for i := range auth {
			if auth[i] != "Bearer "+remoteToken || keys[i] != remoteKey {
				t.Errorf("request %d of %d lacks the configured headers (values not printed)", i+1, len(auth))
			}
		}
	})
	t.Run("the model never saw them", func(t *testing.T) {
		bodies := ai.AllBodies()
		if len(bodies) != 2 {
			t.Fatalf("the model was asked %d times, want 2", len(bodies))
		}
		for i, b := range bodies {
			checkRemoteSecrets(t, fmt.Sprintf("request %d to the model", i+1), string(b))
		}
		var offered []string
		for _, tl := range ai.ChatRequests()[0].Tools {
			if strings.HasPrefix(tl.Name, "mcp__") {
				offered = append(offered, tl.Name)
			}
		}
		slices.Sort(offered)
		if diff := cmp.Diff(remoteTools, offered); diff != "" {
			t.Errorf("MCP tools offered to the model (-want +got):\n%s", diff)
		}
		// The server echoed both credentials; the model got the echo with
		// them redacted, so the test looked where they would have been.
		result := ai.ChatRequests()[1].LastMessage().Text()
		if want := "authorization=Bearer [REDACTED] x-api-key=[REDACTED]"; result != want {
			checkRemoteSecrets(t, "the unexpected tool result", result)
			t.Errorf("the tool result the model got = %q, want %q", result, want)
		}
	})
	t.Run("the log never saw them", func(t *testing.T) {
		checkRemoteSecrets(t, "the log", h.logs.Text())
	})
}

func TestRemoteServerDropsAndComesBack(t *testing.T) {
	srv := newRemoteServer(t)
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	cfg := remoteConfig(t, srv.url())
	h := newFauxHarness(t, cfg, cfg.Secrets, withClock(clock.now), WithReconnectBackoff(time.Second, 4*time.Second))
	s := h.session(t, "flaky")
	echo := func(t *testing.T, word string) agent.Message {
		t.Helper()
		msg := h.call(t, s, "mcp__remote__echo", fmt.Sprintf(`{"text": %q}`, word))
		checkRemoteSecrets(t, "the tool result", agent.TextOf(msg.Content))
		return msg
	}
	wantOK := func(t *testing.T, word string) {
		t.Helper()
		if msg := echo(t, word); msg.IsError || agent.TextOf(msg.Content) != word {
			t.Fatalf("echo gave %v: %s", msg.IsError, agent.TextOf(msg.Content))
		}
	}
	wantError := func(t *testing.T, has ...string) {
		t.Helper()
		msg := echo(t, "down")
		text := agent.TextOf(msg.Content)
		if !msg.IsError {
			t.Fatalf("a call while the server is down is not an error result: %s", text)
		}
		for _, want := range append([]string{`MCP server "remote"`}, has...) {
			if !strings.Contains(text, want) {
				t.Errorf("the error result lacks %q: %s", want, text)
			}
		}
	}

	wantOK(t, "first")
	srv.down()
	// The call that finds the server gone drops the connection.
	wantError(t, "the connection to the server failed", "the next call connects again")
	// The next one tries to connect, fails and backs off.
	wantError(t, "connecting", "tried again at a call made after 1s", "tell the user")
	// Within the back-off nothing is tried.
	wantError(t, "cannot be reached", "1 attempt(s) in a row failed", "tried again at a call made after 1s")
	clock.advance(time.Second)
	// The back-off doubles.
	wantError(t, "connecting", "tried again at a call made after 2s")
	clock.advance(2 * time.Second)
	srv.up()
	before := srv.requests()
	wantOK(t, "back")
	if srv.requests() == before {
		t.Error("the server came back but received nothing")
	}

	t.Run("a restart between calls costs no failed call", func(t *testing.T) {
		srv.down()
		// A restart takes long enough for the client's pool to notice
		// that the old server closed its connections; without this, a
		// call made at once could go out on one of them and fail.
		h.ext.transport.CloseIdleConnections()
		srv.up()
		// The server forgot the session: the call is sent again in a
		// new one.
		wantOK(t, "restarted")
		if logs := h.logs.Text(); !strings.Contains(logs, "no longer knows the session") {
			t.Error("the log does not say the session was opened again")
		}
	})
	t.Run("the back-off starts over", func(t *testing.T) {
		srv.down()
		wantError(t, "the next call connects again")
		wantError(t, "tried again at a call made after 1s")
	})
	checkRemoteSecrets(t, "the log", h.logs.Text())
}

// TestRemoteSessions checks that each chat has an MCP session of its own
// with the server, and that closing the chat's session (/new) ends its MCP
// session on the server and only that one.
func TestRemoteSessions(t *testing.T) {
	srv := newRemoteServer(t)
	cfg := remoteConfig(t, srv.url())
	h := newFauxHarness(t, cfg, cfg.Secrets)
	sessionID := func(t *testing.T, s *agent.Session) string {
		t.Helper()
		msg := h.call(t, s, "mcp__remote__session", `{}`)
		if msg.IsError || agent.TextOf(msg.Content) == "" {
			t.Fatalf("session gave %v: %s", msg.IsError, agent.TextOf(msg.Content))
		}
		return agent.TextOf(msg.Content)
	}
	a, b := h.session(t, "a"), h.session(t, "b")
	idA, idB := sessionID(t, a), sessionID(t, b)
	if idA == idB {
		t.Fatal("two chats share an MCP session")
	}
	if again := sessionID(t, a); again != idA {
		t.Error("a chat's second call came in another MCP session")
	}
	before := len(srv.deleted())
	a.Close()
	if diff := cmp.Diff([]string{idA}, srv.deleted()[before:]); diff != "" {
		t.Errorf("MCP sessions ended by closing chat a (-want +got):\n%s", diff)
	}
	if again := sessionID(t, b); again != idB {
		t.Error("closing one chat changed the other's MCP session")
	}
	if reopened := sessionID(t, h.session(t, "a")); reopened == idA {
		t.Error("the reopened chat reused the ended MCP session")
	}
}

func TestRemoteCallTimeout(t *testing.T) {
	srv := newRemoteServer(t)
	cfg := remoteConfig(t, srv.url())
	h := newFauxHarness(t, cfg, cfg.Secrets, WithCallTimeout(300*time.Millisecond))
	s := h.session(t, "slow")
	msg := h.call(t, s, "mcp__remote__stall", `{}`)
	text := agent.TextOf(msg.Content)
	if !msg.IsError || !strings.Contains(text, "did not answer within 300ms") || !strings.Contains(text, "next call opens a new one") {
		t.Errorf("a stalled call gave %v: %s", msg.IsError, text)
	}
	// The server holds the abandoned session until its handler returns.
	srv.mu.Lock()
	srv.unstall()
	srv.mu.Unlock()
	msg = h.call(t, s, "mcp__remote__echo", `{"text": "after"}`)
	if msg.IsError || agent.TextOf(msg.Content) != "after" {
		t.Errorf("the call after a timeout gave %v: %s", msg.IsError, agent.TextOf(msg.Content))
	}
}

func TestRemoteDiscovery(t *testing.T) {
	srv := newRemoteServer(t)
	cfg := remoteConfig(t, srv.url())
	// elsewhere receives what a redirect would carry off.
	var elsewhere []http.Header
	var mu sync.Mutex
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		elsewhere = append(elsewhere, r.Header.Clone())
		mu.Unlock()
		http.Error(w, "not here", http.StatusNotFound)
	}))
	t.Cleanup(other.Close)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirect.Close)
	gone := newRemoteServer(t)
	gone.down()
	moved := remoteConfig(t, redirect.URL+"/mcp").Servers[0]
	moved.Name = "moved"
	down := remoteConfig(t, gone.url()).Servers[0]
	down.Name = "down"
	cfg.Servers = append(cfg.Servers, moved, down)

	h := newFauxHarness(t, cfg, cfg.Secrets)
	got := make(map[string]ServerStatus)
	for _, st := range h.ext.Servers() {
		got[st.Name] = st
	}
	tests := []struct {
		name   string
		tools  int
		errHas []string
	}{
		{name: "down", errHas: []string{"connecting", "connection refused"}},
		{name: "moved", errHas: []string{"redirected to another origin; refused"}},
		{name: "remote", tools: len(remoteTools)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := got[tt.name]
			if st.Tools != tt.tools {
				t.Errorf("%d tools, want %d", st.Tools, tt.tools)
			}
			if len(tt.errHas) == 0 {
				if st.Err != nil {
					t.Errorf("unexpected error: %v", st.Err)
				}
				return
			}
			if st.Err == nil {
				t.Fatal("no error")
			}
			checkRemoteSecrets(t, "the status error", st.Err.Error())
			for _, want := range tt.errHas {
				if !strings.Contains(st.Err.Error(), want) {
					t.Errorf("the error lacks %q: %s", want, st.Err)
				}
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if len(elsewhere) > 0 {
		t.Errorf("a redirect to another origin was followed (%d request(s))", len(elsewhere))
	}
}

func TestHeaderTransportOrigin(t *testing.T) {
	var got []string
	rt := &headerTransport{
		base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			got = append(got, r.URL.String()+" "+r.Header.Get("X-Api-Key"))
			return &http.Response{StatusCode: http.StatusNoContent, Body: http.NoBody, Request: r}, nil
		}),
		scheme: "https", host: "mcp.example.com",
		headers: http.Header{"X-Api-Key": {"k"}},
	}
	for _, u := range []string{"https://mcp.example.com/mcp", "http://mcp.example.com/mcp", "https://mcp.example.com:8443/mcp", "https://other.example.com/mcp"} {
		req, err := http.NewRequest(http.MethodPost, u, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if req.Header.Get("X-Api-Key") != "" {
			t.Errorf("RoundTrip changed the caller's request for %s", u)
		}
	}
	want := []string{
		"https://mcp.example.com/mcp k",
		"http://mcp.example.com/mcp ",
		"https://mcp.example.com:8443/mcp ",
		"https://other.example.com/mcp ",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests sent (-want +got):\n%s", diff)
	}
}

// roundTripFunc is an http.RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestBackoff(t *testing.T) {
	var got []time.Duration
	for failures := 1; failures <= 6; failures++ {
		got = append(got, reconnectDelay(failures, time.Second, 10*time.Second))
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("back-off (-want +got):\n%s", diff)
	}
}

func TestServerAnswered(t *testing.T) {
	invalid := &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params"}
	rejected := &jsonrpc.Error{Code: -32005, Message: "rejected by transport"}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"plain", errors.New("dial tcp: connection refused"), false},
		{"rejected", fmt.Errorf("sending: %w: %w", rejected, errors.New("EOF")), false},
		{"session missing", fmt.Errorf("sending: %w", mcp.ErrSessionMissing), false},
		{"the server's error", fmt.Errorf("calling: %w", invalid), true},
		{"the server's error in an HTTP error", fmt.Errorf("sending: %w: %w: Bad Request", invalid, rejected), true},
		{"joined", errors.Join(errors.New("x"), fmt.Errorf("y: %w", invalid)), true},
	}
	for _, tt := range tests {
		if got := serverAnswered(tt.err); got != tt.want {
			t.Errorf("%s: serverAnswered = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestRemoteURLCredentialsNeverReachTheModel checks a url that carries
// credentials written into it, in its path (a hosted server's per-user
// endpoint) and in its query (?api_key=): the HTTP client quotes the url of
// a request that failed, and neither may reach the model or the log when
// the server cannot be reached.
func TestRemoteURLCredentialsNeverReachTheModel(t *testing.T) {
	const (
		pathSecret  = "PATH-secret-0123456789abcdef"
		querySecret = "QUERY-secret-9876543210fedcba"
	)
	srv := newRemoteServer(t)
	url := srv.url() + "/u/" + pathSecret + "?api_key=" + querySecret
	cfg, err := Load(fmt.Sprintf(`{"mcpServers": {"remote": {"url": %q}}}`, url), remoteLookupEnv, hostSecrets)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if !slices.Contains(cfg.Secrets, querySecret) {
		t.Errorf("the url's api_key is not among the configuration's %d secrets", len(cfg.Secrets))
	}
	h := newFauxHarness(t, cfg, cfg.Secrets)
	s := h.session(t, "url")
	check := func(t *testing.T, where, text string) {
		t.Helper()
		checkAbsent(t, where, "the url's path credential", text, pathSecret)
		checkAbsent(t, where, "the url's api_key", text, querySecret)
	}
	if msg := h.call(t, s, "mcp__remote__echo", `{"text": "up"}`); msg.IsError {
		t.Fatalf("the call to the server that is up failed: %s", agent.TextOf(msg.Content))
	}
	srv.down()
	for _, want := range []string{"the connection to the server failed", "connecting"} {
		msg := h.call(t, s, "mcp__remote__echo", `{"text": "down"}`)
		text := agent.TextOf(msg.Content)
		check(t, "the error result", text)
		if !msg.IsError || !strings.Contains(text, want) || !strings.Contains(text, "<the server's url>") {
			t.Errorf("a call while the server is down gave %v, without %q and the url's mention", msg.IsError, want)
		}
	}
	check(t, "the log", h.logs.Text())
}
