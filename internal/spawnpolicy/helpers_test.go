package spawnpolicy

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
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

// recordingHandler is a slog.Handler that keeps every record, at every
// level, with the attributes of its logger, rendered as text.
type recordingHandler struct {
	mu    *sync.Mutex
	lines *[]string
	attrs []slog.Attr
}

// newRecordingHandler returns an empty recording handler.
func newRecordingHandler() *recordingHandler {
	return &recordingHandler{mu: &sync.Mutex{}, lines: &[]string{}}
}

// Enabled records every level.
func (h *recordingHandler) Enabled(context.Context, slog.Level) bool { return true }

// Handle renders r with every attribute, groups flattened.
func (h *recordingHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", r.Level, r.Message)
	for _, a := range h.attrs {
		renderAttr(&b, "", a)
	}
	r.Attrs(func(a slog.Attr) bool {
		renderAttr(&b, "", a)
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	*h.lines = append(*h.lines, b.String())
	return nil
}

// WithAttrs keeps attrs for every later record.
func (h *recordingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	out := *h
	out.attrs = append(slices.Clone(h.attrs), attrs...)
	return &out
}

// WithGroup is flattened: the recording is for searching, not structure.
func (h *recordingHandler) WithGroup(string) slog.Handler { return h }

// records returns the rendered records so far.
func (h *recordingHandler) records() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(*h.lines)
}

// renderAttr writes a resolved attribute, recursing into groups.
func renderAttr(b *strings.Builder, prefix string, a slog.Attr) {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		for _, g := range v.Group() {
			renderAttr(b, prefix+a.Key+".", g)
		}
		return
	}
	fmt.Fprintf(b, " %s%s=%v", prefix, a.Key, v.Any())
}
