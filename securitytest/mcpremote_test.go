package securitytest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/volcanic/telegram-agent/internal/openaitest"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// remoteMCPName is the Streamable HTTP server's name in MCP_CONFIG.
const remoteMCPName = "hosted"

// headerEcho is a Streamable HTTP MCP server built with the SDK whose
// whoami tool answers with the Authorization header it received: a server
// that hands its credential back, for the bot to redact.
type headerEcho struct {
	srv *httptest.Server

	mu   sync.Mutex
	auth []string
}

// newHeaderEcho starts a headerEcho and stops it when the test ends.
func newHeaderEcho(t *testing.T) *headerEcho {
	t.Helper()
	e := &headerEcho{}
	server := mcp.NewServer(&mcp.Implementation{Name: remoteMCPName, Version: "v1.0.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "whoami", Description: "Says which credential arrived."},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			text := "authorization=" + req.Extra.Header.Get("Authorization")
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.auth = append(e.auth, r.Header.Get("Authorization"))
		e.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(e.srv.Close)
	return e
}

// received returns the Authorization header of every request so far.
func (e *headerEcho) received() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.auth...)
}

// config is MCP_CONFIG for the server with one header expanding variable.
func (e *headerEcho) config(variable string) string {
	return fmt.Sprintf(`{"mcpServers":{%q:{"url":%q,"headers":{"Authorization":"Bearer ${%s}"}}}}`,
		remoteMCPName, e.srv.URL+"/mcp", variable)
}

// TestSecurityRemoteMCP runs the built bot with a Streamable HTTP MCP
// server whose Authorization header expands a variable:
//
//   - passed-on-purpose: GITHUB_TOKEN. The header arrives with every
//     request; the server echoes it in a tool result, and no form of any
//     secret (that token included) reaches the model, Telegram, the agent
//     dir or the log.
//   - host-secret: the bot token. The loader refuses it, the bot does not
//     start, and the server is never contacted.
func TestSecurityRemoteMCP(t *testing.T) {
	set, l := newBotLayout(t)
	s := newSuite(set, vectorPaths{secrets: l.secretsDir}, nil)
	const chat = firstChatID

	t.Run("passed-on-purpose", func(t *testing.T) {
		echo := newHeaderEcho(t)
		tg := telegramtest.New(t, telegramtest.WithToken(set.byName(envBotToken).value), telegramtest.WithWaitTimeout(startTimeout))
		ai := openaitest.New(t, openaitest.WithScript(
			openaitest.ToolCalls(openaitest.ToolCall{Name: "mcp__" + remoteMCPName + "__whoami", Arguments: `{}`}),
			openaitest.Text("done"),
		))
		env := setEnv(botEnv(l, set, tg.URL(), ai.URL(), []int64{chat}), "MCP_CONFIG="+echo.config(envGitHubToken))
		b := startBot(t, l, env)
		if !waitPolling(tg, b, 0) || !waitMCP(b, 1) {
			t.Fatalf("the bot did not start polling or discover its MCP server; its log, redacted:\n%s", s.safe(lastLines(b.log.String(), 40)))
		}
		tg.SendText(chat, chat, "who am I on the hosted server?")
		ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
		defer cancel()
		if !waitUntil(ctx, 100*time.Millisecond, func() bool { return b.exited() || len(ai.ChatRequests()) >= 2 }) || b.exited() {
			t.Fatalf("the model was not asked twice; the bot's log, redacted:\n%s", s.safe(lastLines(b.log.String(), 40)))
		}
		b.stop(t)

		token := set.byName(envGitHubToken).value
		auth := echo.received()
		if len(auth) == 0 {
			t.Fatal("the hosted server received no request")
		}
		for i, a := range auth {
			if a != "Bearer "+token {
				t.Errorf("request %d of %d to the hosted server lacks the configured Authorization header (not printed)", i+1, len(auth))
			}
		}
		// The echo came back redacted: the test looked where the token
		// would have been.
		if got := ai.ChatRequests()[1].LastMessage().Text(); got != "authorization=Bearer [REDACTED]" {
			t.Errorf("the tool result the model got is not the redacted echo: %s", s.safe(got))
		}
		for _, r := range s.evaluateGlobal(observe(t, l, ai, tg, b)) {
			if r.outcome == outcomeLeak || r.outcome == outcomeFail {
				t.Errorf("%s %s %s: %s", r.vector, r.channel, r.outcome, strings.Join(r.details, "; "))
			}
		}
	})

	t.Run("url-credentials", func(t *testing.T) {
		// A hosted server whose url carries credentials written into it:
		// a per-user path and an api_key. The server goes away after the
		// bot discovered its tools, so the call fails and the transport's
		// error, which quotes the url, goes to the model.
		// A layout of its own: the agent dir's journal would skip the
		// update id the new fake Telegram starts with again.
		l := newLayout(t)
		l.buildBot(t)
		echo := newHeaderEcho(t)
		pathToken, queryToken := randomHex(t, 20), randomHex(t, 20)
		url := echo.srv.URL + "/mcp/u/" + pathToken + "?api_key=" + queryToken
		tokens := []secret{
			{name: "the url's path token", value: pathToken, forms: derivedForms(pathToken)},
			{name: "the url's api_key", value: queryToken, forms: derivedForms(queryToken)},
		}
		tg := telegramtest.New(t, telegramtest.WithToken(set.byName(envBotToken).value), telegramtest.WithWaitTimeout(startTimeout))
		ai := openaitest.New(t, openaitest.WithScript(
			openaitest.ToolCalls(openaitest.ToolCall{Name: "mcp__" + remoteMCPName + "__whoami", Arguments: `{}`}),
			openaitest.Text("done"),
		))
		env := setEnv(botEnv(l, set, tg.URL(), ai.URL(), []int64{chat}), fmt.Sprintf(`MCP_CONFIG={"mcpServers":{%q:{"url":%q}}}`, remoteMCPName, url))
		b := startBot(t, l, env)
		if !waitPolling(tg, b, 0) || !waitMCP(b, 1) {
			t.Fatalf("the bot did not start polling or discover its MCP server; its log, redacted:\n%s", s.safe(lastLines(b.log.String(), 40)))
		}
		if len(echo.received()) == 0 {
			t.Fatal("the bot did not discover the hosted server's tools")
		}
		echo.srv.CloseClientConnections()
		echo.srv.Close()
		tg.SendText(chat, chat, "who am I on the hosted server?")
		ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
		defer cancel()
		if !waitUntil(ctx, 100*time.Millisecond, func() bool { return b.exited() || len(ai.ChatRequests()) >= 2 }) || b.exited() {
			t.Fatalf("the model was not asked twice; the bot's log, redacted:\n%s", s.safe(lastLines(b.log.String(), 40)))
		}
		b.stop(t)
		if got := ai.ChatRequests()[1].LastMessage().Text(); !strings.Contains(got, "<the server's url>") {
			t.Errorf("the tool result is not the failed call's error with the url left out: %s", s.safe(redactor.New([]string{pathToken, queryToken}).Redact(got)))
		}
		o := observe(t, l, ai, tg, b)
		pieces := append(append(append([]piece{}, o.openaiBody...), o.telegramAll...), o.files...)
		pieces = append(pieces, piece{where: "the bot's log", text: strings.Join(o.logLines, "\n")})
		for _, f := range scan(tokens, pieces) {
			t.Errorf("LEAK %s", f)
		}
	})

	t.Run("host-secret", func(t *testing.T) {
		echo := newHeaderEcho(t)
		tg := telegramtest.New(t, telegramtest.WithToken(set.byName(envBotToken).value), telegramtest.WithWaitTimeout(startTimeout))
		ai := openaitest.New(t, openaitest.AllowUnscripted())
		env := setEnv(botEnv(l, set, tg.URL(), ai.URL(), []int64{chat}), "MCP_CONFIG="+echo.config(envBotToken))
		b := startBot(t, l, env)
		ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
		defer cancel()
		if !waitUntil(ctx, 100*time.Millisecond, b.exited) {
			t.Fatalf("the bot started with a header expanding the bot token; its log, redacted:\n%s", s.safe(lastLines(b.log.String(), 20)))
		}
		log := b.log.String()
		for _, want := range []string{"headers Authorization", envBotToken, "never handed to an MCP server"} {
			if !strings.Contains(log, want) {
				t.Errorf("the bot's output lacks %q; it ends, redacted:\n%s", want, s.safe(lastLines(log, 20)))
			}
		}
		if n := len(echo.received()); n > 0 {
			t.Errorf("the hosted server was contacted %d time(s)", n)
		}
		if findings := scan(set.searched(), []piece{{where: "the bot's output", text: log}}); len(findings) > 0 {
			for _, f := range findings {
				t.Errorf("LEAK %s", f)
			}
		}
	})
}

// randomHex returns n random bytes in hex: a fake credential of one run.
func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
