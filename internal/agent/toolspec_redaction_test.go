package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/redactor"
)

// Fake secrets of TestToolSpecRedaction besides testSecret: one made of
// digits, which a schema can hold as a bare JSON number, and one that is a
// valid tool name.
const (
	numericSecret = "9876543210123"
	nameSecret    = "NAMESECRET0123456"
)

// TestToolSpecRedaction checks that a tool's description and parameter
// schema reach the model provider with every known secret redacted (an MCP
// server describes its own tools), and that a tool whose schema or name
// cannot be redacted is left out with a warning.
func TestToolSpecRedaction(t *testing.T) {
	tests := []struct {
		name   string
		spec   agent.ToolSpec
		offers bool
		// wantRedacted says the offered spec must hold the redactor's token.
		wantRedacted bool
	}{
		{
			name: "description and schema",
			spec: agent.ToolSpec{
				Name:        "mcp__srv__lookup",
				Description: "Looks things up with the key " + testSecret + ".",
				Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string",` +
					`"description":"defaults to ` + testSecret + `","default":"` + testSecret + `","enum":["` + testSecret + `","b"]}}}`),
			},
			offers: true, wantRedacted: true,
		},
		{
			name: "clean",
			spec: agent.ToolSpec{Name: "mcp__srv__clean", Description: "Nothing to hide.",
				Parameters: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","default":3}}}`)},
			offers: true,
		},
		{
			name: "secret as a bare number",
			spec: agent.ToolSpec{Name: "mcp__srv__number", Description: "A number.",
				Parameters: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","default":` + numericSecret + `}}}`)},
		},
		{
			name: "secret in the name",
			spec: agent.ToolSpec{Name: "mcp__srv__" + nameSecret, Description: "Named after a secret.",
				Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs lockedBuffer
			faux := agenttest.NewFauxProvider(agenttest.FauxText("done"))
			tool := &agenttest.Tool{ToolSpec: tt.spec, Run: func(context.Context, *agent.Call) (agent.Result, error) { return agent.Result{}, nil }}
			ext := &funcExtension{name: "srv", activate: func(_ context.Context, api *agent.API) error {
				api.RegisterTool(tool)
				return nil
			}}
			a := startAgent(t, faux, redactor.New([]string{testSecret, numericSecret, nameSecret}),
				agent.WithWorkspace(t.TempDir()), agent.WithModel("test-model"), agent.WithExtensions(ext),
				agent.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
			s := openSession(t, a, agent.SessionOptions{})
			if _, err := s.Prompt(context.Background(), []agent.Content{agent.Text("go")}, nil); err != nil {
				t.Fatalf("Prompt: %v", err)
			}
			reqs := faux.Requests()
			if len(reqs) != 1 {
				t.Fatalf("the provider got %d requests, want 1", len(reqs))
			}
			var offered *agent.ToolSpec
			for i, spec := range reqs[0].Tools {
				if strings.HasPrefix(spec.Name, "mcp__srv__") {
					offered = &reqs[0].Tools[i]
				}
			}
			sent, err := json.Marshal(reqs[0].Tools)
			if err != nil {
				t.Fatal(err)
			}
			for _, secret := range []string{testSecret, numericSecret, nameSecret} {
				if strings.Contains(string(sent), secret) {
					t.Fatalf("the tools sent to the provider hold a secret (not printed)")
				}
			}
			logText := logs.String()
			for _, secret := range []string{testSecret, numericSecret, nameSecret} {
				if strings.Contains(logText, secret) {
					t.Fatalf("the log holds a secret (not printed)")
				}
			}
			if !tt.offers {
				if offered != nil {
					t.Fatalf("the tool was offered, want it left out")
				}
				if !strings.Contains(logText, "tool left out") {
					t.Errorf("no warning that the tool was left out; log: %s", logText)
				}
				return
			}
			if offered == nil {
				t.Fatalf("the tool was not offered; log: %s", logText)
			}
			if !json.Valid(offered.Parameters) {
				t.Errorf("the offered schema is not valid JSON")
			}
			hasToken := strings.Contains(offered.Description, redactor.Token) && strings.Contains(string(offered.Parameters), redactor.Token)
			if hasToken != tt.wantRedacted {
				t.Errorf("[REDACTED] in the description and schema = %v, want %v", hasToken, tt.wantRedacted)
			}
			if !tt.wantRedacted && !bytes.Equal(offered.Parameters, tt.spec.Parameters) {
				t.Errorf("a clean schema changed: %s", offered.Parameters)
			}
		})
	}
}

// lockedBuffer is a bytes.Buffer safe for concurrent writes: a log.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
