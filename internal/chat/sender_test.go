package chat

import (
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// Everything the bot sends to Telegram passes the redactor once more: a
// secret in the model's answer (streamed, then final) or in a tool call's
// arguments (shown in the status message) reaches the chat as [REDACTED],
// and no request Telegram received carries its value. The agent redacts
// neither, so the chat's redactor is the one under test.
func TestEverythingSentIsRedacted(t *testing.T) {
	token := telegramtest.DefaultToken
	secrets := []struct{ name, value string }{{"the bot token", token}, {"OPENAI_API_KEY", openAIKey}}
	tests := []struct {
		name   string
		script []agenttest.FauxResponse
		// want is a visible text that shows the redaction.
		want string
	}{
		{"the model's answer",
			[]agenttest.FauxResponse{agenttest.FauxText("the token is " + token + " and the key is " + openAIKey)},
			"the token is " + redactor.Token + " and the key is " + redactor.Token},
		{"a tool call's argument in the status message",
			[]agenttest.FauxResponse{agenttest.FauxToolCalls(agenttest.FauxCall("bash", `{"command":"true `+token+` `+openAIKey+`"}`)), agenttest.FauxText("done")},
			"bash: true " + redactor.Token + " " + redactor.Token},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, harnessConfig{provider: agenttest.NewFauxProvider(tt.script...)})
			h.tg.SendText(userID, userID, "tell me a secret")
			h.waitText(userID, tt.want)
			if n := len(h.tg.RequestsFor("sendMessage")); n == 0 {
				t.Fatal("nothing was sent")
			}
			for _, s := range secrets {
				assertNoSecret(t, "telegram", s.name, s.value, h.tg.AllBodies())
				for _, r := range h.tg.RequestsContaining(s.value) {
					t.Errorf("telegram: %s request %d carries %s", r.Method, r.Seq, s.name)
				}
				for _, m := range h.tg.Messages(userID) {
					if strings.Contains(m.Text, s.value) {
						t.Errorf("the chat shows %s", s.name)
					}
				}
			}
		})
	}
}

// TestAnswerRedactedBeforeRenderingAndSplitting gives the model an answer
// holding a secret the HTML renderer would escape (&, <, >) and one that
// straddles the 4096-character split: the chat host redacts the raw text
// before it renders and splits it, so neither reaches Telegram in any part.
func TestAnswerRedactedBeforeRenderingAndSplitting(t *testing.T) {
	const htmlSecret = "pa&ss<wo>rd-0020-fake"
	const splitSecret = "straddling-secret-0021-fake-value"
	long := strings.Repeat("word ", 4090/5) + "x" + splitSecret + " tail"
	tests := []struct {
		name, answer, secret string
	}{
		{"escaped by the renderer", "the password is " + htmlSecret + " ok", htmlSecret},
		{"across the split", long, splitSecret},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, harnessConfig{
				provider: agenttest.NewFauxProvider(agenttest.FauxText(tt.answer)),
				secrets:  []string{htmlSecret, splitSecret},
			})
			h.tg.SendText(userID, userID, "go")
			h.waitText(userID, redactor.Token)
			for _, b := range h.tg.AllBodies() {
				for k := 8; k <= len(tt.secret); k++ {
					for i := 0; i+k <= len(tt.secret); i += k {
						if strings.Contains(string(b), tt.secret[i:i+k]) {
							t.Fatalf("a request carries %d bytes of the secret (at %d)", k, i)
						}
					}
				}
			}
			for _, m := range h.tg.Messages(userID) {
				if strings.Contains(m.Text, "0020") || strings.Contains(m.Text, "0021") {
					t.Errorf("the chat shows part of a secret")
				}
			}
		})
	}
}

// TestToolArgumentRedactedBeforeItIsShortened gives the status message a
// command whose 80-character cut falls inside a secret: no request to
// Telegram carries any 8 bytes of it.
func TestToolArgumentRedactedBeforeItIsShortened(t *testing.T) {
	const secret = "shortened-arg-secret-0023-fake"
	command := "true " + strings.Repeat("x", 60) + secret
	faux := agenttest.NewFauxProvider(agenttest.FauxToolCalls(agenttest.FauxCall("bash", `{"command":"`+command+`"}`)), agenttest.FauxText("done"))
	h := newHarness(t, harnessConfig{provider: faux, secrets: []string{secret}})
	h.tg.SendText(userID, userID, "go")
	h.waitText(userID, "done")
	for _, b := range h.tg.AllBodies() {
		for i := 0; i+8 <= len(secret); i++ {
			if strings.Contains(string(b), secret[i:i+8]) {
				t.Fatalf("a request carries 8 bytes of the secret (from byte %d)", i)
			}
		}
	}
}

// TestMarkdownSplitSecretNeverShown has the model write a secret split by
// Markdown markers (sk-har**ness-0pe**nAIkey): no single form of the
// answer holds the secret, but its rendering shows it whole. Nothing the
// user sees on Telegram (drafts, messages, edits, as telegramtest decodes
// them) holds it: not in a short answer, not when it straddles the
// 4096-unit split, not in a tool call's status line.
func TestMarkdownSplitSecretNeverShown(t *testing.T) {
	const secret = "sk-harness-0penAIkey-0031-fake"
	split := secret[:6] + "**" + secret[6:14] + "**" + secret[14:]
	tests := []struct {
		name   string
		script []agenttest.FauxResponse
	}{
		{"a short answer", []agenttest.FauxResponse{agenttest.FauxText("the key is " + split + " as asked")}},
		{"across the split", []agenttest.FauxResponse{agenttest.FauxText(strings.Repeat("word ", 4086/5) + split + " tail")}},
		{"in a tool call", []agenttest.FauxResponse{agenttest.FauxToolCalls(agenttest.FauxCall("bash", `{"command":"echo `+split+`"}`)), agenttest.FauxText("done " + split)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, harnessConfig{provider: agenttest.NewFauxProvider(tt.script...), secrets: []string{secret}})
			h.tg.SendText(userID, userID, "go")
			h.waitText(userID, redactor.Token)
			h.stop()
			for _, s := range h.tg.Shown() {
				if strings.Contains(s, secret) {
					t.Errorf("the user sees the secret (in a text of %d bytes)", len(s))
				}
			}
			assertNoSecret(t, "telegram", "the secret", secret, h.tg.AllBodies())
		})
	}
}
