package main

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/redactor"
)

// testOAuth is a fake CLAUDE_CODE_OAUTH_TOKEN.
const testOAuth = "sk-ant-oat01-fake-oauth-token-0099"

// TestParseClaudeCodeRefusesAPICredentials refuses, in claude-code mode,
// every variable that would bill a key or another cloud instead of the
// plan, naming each and what to do instead; in openai mode they are fine.
func TestParseClaudeCodeRefusesAPICredentials(t *testing.T) {
	environ := map[string]string{
		"ANTHROPIC_API_KEY":       "sk-ant-api03-fake-key-0001",
		"ANTHROPIC_AUTH_TOKEN":    "fake-auth-token-0002",
		"ANTHROPIC_BASE_URL":      "https://proxy.example",
		"CLAUDE_CODE_USE_BEDROCK": "1",
		"CLAUDE_CODE_USE_VERTEX":  "1",
	}
	e := goodEnv()
	if _, err := e.Parse(environ); err != nil {
		t.Fatalf("openai mode: Parse: %v", err)
	}
	e.ModelProvider = "claude-code"
	_, err := e.Parse(environ)
	if err == nil {
		t.Fatal("claude-code mode: Parse accepted the API credentials")
	}
	var refused []string
	for _, line := range strings.Split(err.Error(), "\n") {
		name, _, _ := strings.Cut(line, " ")
		refused = append(refused, name)
		if !strings.Contains(line, "telegram-bot claude-login") || !strings.Contains(line, "CLAUDE_CODE_OAUTH_TOKEN") {
			t.Errorf("the refusal of %s does not say what to do instead", name)
		}
		if redactor.New([]string{"sk-ant-api03-fake-key-0001", "fake-auth-token-0002"}).Redact(line) != line {
			t.Errorf("the refusal of %s holds a value", name)
		}
	}
	want := []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX"}
	if diff := cmp.Diff(want, refused); diff != "" {
		t.Errorf("refused (-want +got):\n%s", diff)
	}
	e.ModelProvider = "anthropic"
	if _, err := e.Parse(nil); err == nil || !strings.Contains(err.Error(), "MODEL_PROVIDER must be openai or claude-code") {
		t.Errorf("an unknown provider: err = %v", err)
	}
}

// TestParseClaudeCode takes CLAUDE_CODE_OAUTH_TOKEN as a host secret
// (redacted, never in an agent process), gives new chats claude's default
// model unless OPENAI_MODEL is set, and turns the host's compaction off.
func TestParseClaudeCode(t *testing.T) {
	e := goodEnv()
	e.ModelProvider = "claude-code"
	e.ClaudeOAuthToken = testOAuth
	environ := map[string]string{"CLAUDE_CODE_OAUTH_TOKEN": testOAuth, "PATH": "/usr/bin"}
	c, err := e.Parse(environ)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if !c.Claude.Enabled || c.Claude.OAuthToken != testOAuth {
		t.Error("the claude-code settings were not taken")
	}
	if !slices.Contains(c.Policy.SecretValues, testOAuth) || !slices.Contains(c.SecretNames, "CLAUDE_CODE_OAUTH_TOKEN") {
		t.Error("CLAUDE_CODE_OAUTH_TOKEN is not among the secrets")
	}
	if ctx := prepareBash(t, c, environ); slices.ContainsFunc(slices.Collect(maps.Values(ctx.Env)), func(v string) bool { return strings.Contains(v, testOAuth) }) {
		t.Error("the OAuth token reached an agent process")
	}
	if c.Model != "sonnet" || c.ContextWindow != claudeContextWindow {
		t.Errorf("model %q, context window %d; want sonnet and the host's compaction off", c.Model, c.ContextWindow)
	}
	e.OpenAIModels = "opus,haiku"
	if c, err := e.Parse(environ); err != nil || !slices.Equal(c.Models, []string{"sonnet", "opus", "haiku"}) {
		t.Errorf("OPENAI_MODELS=opus,haiku: models %q, %v; want sonnet first", c.Models, err)
	}
	e.OpenAIModels = ""
	environ["OPENAI_MODEL"] = "opus"
	e.OpenAIModel = "opus"
	if c, err := e.Parse(environ); err != nil || c.Model != "opus" {
		t.Errorf("OPENAI_MODEL=opus: model %q, %v", c.Model, err)
	}
}
