package spawnpolicy

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
)

// The secret values the tests plant in injected environments. A failure
// message never prints them: masked replaces each with a placeholder.
const (
	secretBotToken  = "123456789:AAH-telegram-bot-token-value"
	secretOpenAI    = "sk-test-openai-key-0123456789"
	secretGoogle    = "GOCSPX-google-client-secret-value"
	secretGitHub    = "ghp_githubtokenvalue0123456789"
	secretDatabase  = "correct-horse-battery-staple"
	secretAlias     = "coolify-alias-secret-value"
	secretAnthropic = "sk-ant-anthropic-key-value"
)

// testSecrets returns every secret value the tests plant.
func testSecrets() []string {
	return []string{secretBotToken, secretOpenAI, secretGoogle, secretGitHub, secretDatabase, secretAlias, secretAnthropic}
}

// masked returns a copy of env in which every value that contains a test
// secret is replaced by "<secret #i, n bytes>", so a diff can be printed.
func masked(env map[string]string) map[string]string {
	if env == nil {
		return nil
	}
	out := make(map[string]string, len(env))
	for name, value := range env {
		out[name] = maskValue(value)
	}
	return out
}

// maskValue replaces a value that contains a test secret by a placeholder.
func maskValue(value string) string {
	for i, secret := range testSecrets() {
		if strings.Contains(value, secret) {
			return fmt.Sprintf("<secret #%d, %d bytes>", i, len(value))
		}
	}
	return value
}

// maskedContext returns c with its environment masked, for cmp.Diff.
func maskedContext(c Context) Context {
	c.Env = masked(c.Env)
	return c
}

// ptr returns a pointer to s, for Request.Env.
func ptr(s string) *string {
	return &s
}

// fixedEnviron returns an environ function that hands out a copy of env on
// every call, as the real snapshot does.
func fixedEnviron(env map[string]string) func() map[string]string {
	return func() map[string]string { return maps.Clone(env) }
}

// newTestPolicy builds a policy over env, failing the test on an error.
func newTestPolicy(t testing.TB, opts Options, logger *slog.Logger, env map[string]string) *Policy {
	t.Helper()
	p, err := New(opts, logger, fixedEnviron(env))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

// sortedNames returns env's names, sorted.
func sortedNames(env map[string]string) []string {
	return slices.Sorted(maps.Keys(env))
}
