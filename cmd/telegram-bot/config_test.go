package main

import (
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/mcp"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
	usagelog "github.com/volcanic/telegram-agent/internal/usage"
)

// Fake secret values: long enough to count, never printed by the tests.
const (
	testBotToken = "123456:AAH-fake-bot-token-value-0001"
	testOpenAI   = "sk-fake-openai-key-value-0002"
	testSpeech   = "sk-fake-speech-key-value-0003"
	testGoogle   = "GOCSPX-fake-google-secret-0004"
	testInnocent = "innocent-looking-secret-0005"
)

// goodEnv returns a valid configuration with the defaults envconfig applies.
func goodEnv() Env {
	return Env{
		BotToken:       testBotToken,
		AllowedUserIDs: "42, 7",
		APIURL:         "https://api.telegram.org",
		OpenAIKey:      testOpenAI,
		OpenAIBaseURL:  "https://api.openai.com/v1/",
		OpenAIModel:    "gpt-4.1-mini",
		ContextWindow:  "128000",
		SpeechModel:    "whisper-1",
		HardenHost:     "true",
		AgentDir:       "/data",
		WorkspaceDir:   "/workspace",
		BashTimeoutMax: "600s",
		LogLevel:       "info",
		LogFormat:      "text",
	}
}

func TestParseGood(t *testing.T) {
	e := goodEnv()
	e.SpeechKey = testSpeech
	e.GoogleClientSecret = testGoogle
	e.ProcessEnvSecrets = "MY_INNOCENT, UNSET_ONE"
	e.ProcessEnvAllow = "GH_TOKEN"
	e.ProcessEnvDeny = "CUSTOM_*"
	c, err := e.Parse(map[string]string{"MY_INNOCENT": testInnocent})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if diff := cmp.Diff([]int64{42, 7}, c.AllowedUserIDs); diff != "" {
		t.Errorf("AllowedUserIDs (-want +got):\n%s", diff)
	}
	if c.OpenAIBaseURL != "https://api.openai.com/v1" {
		t.Errorf("OpenAIBaseURL = %q, want the trailing slash trimmed", c.OpenAIBaseURL)
	}
	if c.SpeechBaseURL != c.OpenAIBaseURL {
		t.Errorf("SpeechBaseURL = %q, want OPENAI_BASE_URL by default", c.SpeechBaseURL)
	}
	wantSecrets := []string{testBotToken, testOpenAI, testSpeech, testGoogle, testInnocent}
	if len(c.Policy.SecretValues) != len(wantSecrets) {
		t.Errorf("SecretValues has %d values, want %d", len(c.Policy.SecretValues), len(wantSecrets))
	}
	for i, want := range wantSecrets {
		if !slices.Contains(c.Policy.SecretValues, want) {
			t.Errorf("SecretValues lacks secret %d (length %d)", i, len(want))
		}
	}
	wantNames := []string{"TELEGRAM_BOT_TOKEN", "OPENAI_API_KEY", "TELEGRAM_SPEECH_API_KEY", "GOOGLE_CLIENT_SECRET", "MY_INNOCENT"}
	if diff := cmp.Diff(wantNames, c.SecretNames); diff != "" {
		t.Errorf("SecretNames (-want +got):\n%s", diff)
	}
	if !slices.Contains(c.Policy.Allow, "GH_TOKEN") || !slices.Contains(c.Policy.Deny, "CUSTOM_*") || !slices.Contains(c.Policy.Deny, "*_TOKEN") {
		t.Errorf("PROCESS_ENV_ALLOW/DENY must be added to the defaults: allow %v, deny %v", c.Policy.Allow, c.Policy.Deny)
	}
	if !c.Policy.HardenHostProcess {
		t.Error("HardenHostProcess = false, want true by default")
	}
	if c.MCPConfig != "" {
		t.Errorf("MCPConfig = %q, want none: every default place is one the bot's user owns, whose file is refused", c.MCPConfig)
	}
	if c.MCPTimeout != 30*time.Second {
		t.Errorf("MCPTimeout = %v, want 30s", c.MCPTimeout)
	}
}

func TestParseSpeechKeyDefaultsToOpenAIKey(t *testing.T) {
	c, err := goodEnv().Parse(nil)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if c.SpeechKey != c.OpenAIKey {
		t.Errorf("SpeechKey (length %d) != OPENAI_API_KEY (length %d)", len(c.SpeechKey), len(c.OpenAIKey))
	}
}

func TestParseReportsEveryProblem(t *testing.T) {
	e := Env{
		BotToken:        "",
		AllowedUserIDs:  "42, " + testOpenAI + ", -3",
		APIURL:          "ftp://user:" + testGoogle + "@example.com",
		OpenAIKey:       testOpenAI,
		OpenAIBaseURL:   "not a url",
		OpenAIModel:     "m",
		ContextWindow:   "lots",
		DefaultTimeZone: "Mars/Olympus",
		ProcessEnvAllow: "TELEGRAM_BOT_TOKEN",
		ProcessEnvDeny:  "BAD=NAME",
		HardenHost:      "maybe",
		AgentDir:        "/data",
		WorkspaceDir:    "/workspace",
		BashTimeoutMax:  "forever",
		ApprovalMode:    "sometimes",
		ApprovalTimeout: "-1m",
		ApprovalRules:   "ok, (unclosed",
		StrangerReply:   "sometimes",
		LogLevel:        "loud",
		LogFormat:       "xml",
		ModelPrices:     "m=cheap",
		UsageLimit:      "plenty",
	}
	_, err := e.Parse(nil)
	if err == nil {
		t.Fatal("Parse accepted a bad configuration")
	}
	msg := err.Error()
	for _, want := range []string{
		"TELEGRAM_BOT_TOKEN is required",
		"TELEGRAM_ALLOWED_USER_IDS: entry 2",
		"TELEGRAM_ALLOWED_USER_IDS: entry 3",
		"TELEGRAM_API_URL must be",
		"OPENAI_BASE_URL must be",
		"MODEL_CONTEXT_WINDOW",
		`DEFAULT_TIMEZONE "Mars/Olympus"`,
		"TELEGRAM_BOT_TOKEN", // allowed although explicitly denied
		"BAD=NAME",
		"PROCESS_ENV_HARDEN_HOST_PROCESS",
		"BASH_TIMEOUT_MAX",
		"APPROVAL_MODE",
		"APPROVAL_TIMEOUT",
		"APPROVAL_RULES",
		"STRANGER_REPLY",
		"LOG_LEVEL",
		"LOG_FORMAT",
		"MODEL_PRICES",
		"USAGE_DAILY_LIMIT",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error does not mention %q", want)
		}
	}
	for i, secret := range []string{testOpenAI, testGoogle} {
		if strings.Contains(msg, secret) {
			t.Errorf("the error holds secret %d (length %d)", i, len(secret))
		}
	}
}

func TestParseAllowedUserIDs(t *testing.T) {
	tests := []struct {
		in      string
		want    []int64
		wantErr bool
	}{
		{in: "1", want: []int64{1}},
		{in: " 1 ,2,,3 ", want: []int64{1, 2, 3}},
		{in: "", wantErr: true},
		{in: " , ", wantErr: true},
		{in: "abc", wantErr: true},
		{in: "0", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			e := goodEnv()
			e.AllowedUserIDs = tt.in
			c, err := e.Parse(nil)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Parse error = %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, c.AllowedUserIDs); !tt.wantErr && diff != "" {
				t.Errorf("AllowedUserIDs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseShortSecretsAreNotRedactionValues(t *testing.T) {
	e := goodEnv()
	e.GoogleClientSecret = "short"
	c, err := e.Parse(nil)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if slices.Contains(c.Policy.SecretValues, "short") {
		t.Error("a value under MinimumSecretLength became a secret value")
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "GOOGLE_CLIENT_SECRET is shorter than 8") {
		t.Errorf("Warnings = %q, want one naming GOOGLE_CLIENT_SECRET", c.Warnings)
	}
}

func TestParseModelsIncludesDefault(t *testing.T) {
	e := goodEnv()
	e.OpenAIModels = "a, b"
	c, err := e.Parse(nil)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if diff := cmp.Diff([]string{"gpt-4.1-mini", "a", "b"}, c.Models); diff != "" {
		t.Errorf("Models (-want +got):\n%s", diff)
	}
}

// TestSwitchableModels checks that /model offers the fallback models too,
// after OPENAI_MODELS, and nothing when switching is not configured.
func TestSwitchableModels(t *testing.T) {
	tests := []struct {
		models, fallbacks string
		want              []string
	}{
		{"", "", nil},
		{"", "gpt-4.1-nano", nil},
		{"a", "", []string{"gpt-4.1-mini", "a"}},
		{"a", "gpt-4.1-nano, a", []string{"gpt-4.1-mini", "a", "gpt-4.1-nano"}},
	}
	for _, tt := range tests {
		e := goodEnv()
		e.OpenAIModels, e.FallbackModels = tt.models, tt.fallbacks
		c, err := e.Parse(nil)
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		if diff := cmp.Diff(tt.want, c.switchableModels()); diff != "" {
			t.Errorf("OPENAI_MODELS=%q OPENAI_FALLBACK_MODELS=%q: switchable models (-want +got):\n%s", tt.models, tt.fallbacks, diff)
		}
	}
}

func TestParseUsageAndFallbacks(t *testing.T) {
	e := goodEnv()
	e.OpenAIModels = "gpt-4.1"
	e.FallbackModels = "gpt-4.1-nano, gpt-4.1-mini"
	e.ModelPrices = "gpt-4.1-mini=0.40/1.60/0.10, gpt-4.1=2/8"
	e.UsageLimit = "$2.50"
	c, err := e.Parse(nil)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if diff := cmp.Diff([]string{"gpt-4.1-nano", "gpt-4.1-mini"}, c.FallbackModels); diff != "" {
		t.Errorf("FallbackModels (-want +got):\n%s", diff)
	}
	want := usagelog.Prices{"gpt-4.1-mini": {Input: 0.40, Output: 1.60, Cached: 0.10}, "gpt-4.1": {Input: 2, Output: 8, Cached: 2}}
	if diff := cmp.Diff(want, c.Prices); diff != "" {
		t.Errorf("Prices (-want +got):\n%s", diff)
	}
	if c.DailyLimit != (usagelog.Limit{Money: 2.5}) {
		t.Errorf("DailyLimit = %+v, want $2.50", c.DailyLimit)
	}
	// An amount as the limit with a model the prices leave out: a warning
	// naming it.
	var warned []string
	for _, w := range c.Warnings {
		if strings.Contains(w, "USAGE_DAILY_LIMIT") {
			warned = append(warned, w)
		}
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "gpt-4.1-nano") {
		t.Errorf("warnings about unpriced models = %q, want one naming gpt-4.1-nano", warned)
	}
}

// TestParseDeniesSecretCarriers checks that no Allow glob can re-admit a
// variable that carries someone else's secret: the host's secret variables
// and any variable whose value holds a secret that did not come from a
// variable Allow lets through are denied by their explicit names. What
// Allow lets through on purpose (a deny glob matching it, a credential URL,
// a PROCESS_ENV_SECRETS value) arrives, with its value a secret.
func TestParseDeniesSecretCarriers(t *testing.T) {
	environ := map[string]string{
		"PATH":                    "/usr/bin:/bin",
		"TELEGRAM_BOT_TOKEN":      testBotToken,
		"TELEGRAM_SPEECH_API_KEY": testSpeech,
		"COOLIFY_ALIAS":           testBotToken,
		"NOTIFY_URL":              "https://api.telegram.org/bot" + testBotToken + "/sendMessage",
		"WITH_NEWLINE":            testOpenAI + "\n",
		"MY_INNOCENT":             testInnocent,
		"GH_TOKEN":                "ghp_allowed_on_purpose_0008",
		"ORDINARY":                "kept",
		"DATABASE_URL":            "postgres://app:" + url.QueryEscape(testInnocent+"/x") + "@db/app",
		"BOT_WEBHOOK":             "https://api.telegram.org/bot" + url.PathEscape(testBotToken) + "/x",
		"MCP_CONFIG":              `{"mcpServers":{}}`,
		"HTTP_PROXY":              "http://proxy-user:proxy-pass-0016@proxy:3128",
		"OPENAI_BASE_URL":         "https://proxy-user:proxy-pass-0016@llm.example/v1",
	}
	tests := []struct {
		allow string
		// passed are the variables that arrive, their values redacted.
		passed []string
	}{
		{"*", []string{"DATABASE_URL", "GH_TOKEN", "MY_INNOCENT"}},
		{"TELEGRAM_*", nil},
		{"*_KEY,*_ALIAS,*_URL,WITH_*,*_WEBHOOK,*_CONFIG,*_PROXY", nil},
		{"*_KEY,*_ALIAS,*_URL,WITH_*,MY_*,*_WEBHOOK,*_CONFIG,*_PROXY", []string{"DATABASE_URL", "MY_INNOCENT"}},
	}
	for _, tt := range tests {
		t.Run(tt.allow, func(t *testing.T) {
			e := goodEnv()
			e.SpeechKey = testSpeech
			e.ProcessEnvSecrets = "MY_INNOCENT"
			e.ProcessEnvAllow = tt.allow
			e.OpenAIBaseURL = environ["OPENAI_BASE_URL"]
			c, err := e.Parse(environ)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !slices.Contains(c.Policy.SecretValues, "proxy-pass-0016") {
				t.Error("the password in OPENAI_BASE_URL is not a secret value")
			}
			if diff := cmp.Diff(tt.passed, c.Passed); diff != "" {
				t.Errorf("Passed (-want +got):\n%s", diff)
			}
			ctx := prepareBash(t, c, environ)
			for _, name := range []string{"TELEGRAM_BOT_TOKEN", "TELEGRAM_SPEECH_API_KEY", "COOLIFY_ALIAS", "NOTIFY_URL", "WITH_NEWLINE", "MY_INNOCENT",
				"DATABASE_URL", "BOT_WEBHOOK", "MCP_CONFIG", "HTTP_PROXY", "OPENAI_BASE_URL", "GH_TOKEN"} {
				_, arrived := ctx.Env[name]
				if want := slices.Contains(tt.passed, name); arrived != want {
					t.Errorf("%s reaches the child: %v, want %v with PROCESS_ENV_ALLOW=%s", name, arrived, want, tt.allow)
				}
			}
			if _, ok := ctx.Env["ORDINARY"]; !ok {
				t.Error("ORDINARY was removed")
			}
			red := redactor.New(c.Policy.SecretValues)
			for _, name := range tt.passed {
				if red.Redact(environ[name]) == environ[name] {
					t.Errorf("%s is passed, but its value is not redacted", name)
				}
			}
		})
	}
}

// prepareBash prepares a bash request with c's policy over environ.
func prepareBash(t *testing.T, c Config, environ map[string]string) spawnpolicy.Context {
	t.Helper()
	p, err := spawnpolicy.New(c.Policy, nil, func() map[string]string { return environ })
	if err != nil {
		t.Fatalf("spawnpolicy.New: %v", err)
	}
	ctx, err := p.Prepare(spawnpolicy.Request{Purpose: spawnpolicy.BashTool, Command: "env", Cwd: "/"})
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	return ctx
}

// TestParseUseNotSee checks the gh recipe, PROCESS_ENV_ALLOW=GH_TOKEN
// alone: GH_TOKEN reaches agent processes and its value is a secret; naming
// it in PROCESS_ENV_SECRETS as well is no conflict.
func TestParseUseNotSee(t *testing.T) {
	const ghToken = "github_pat_fake_use_not_see_0031"
	environ := map[string]string{"PATH": "/usr/bin", "GH_TOKEN": ghToken}
	for _, secrets := range []string{"", "GH_TOKEN"} {
		t.Run("PROCESS_ENV_SECRETS="+secrets, func(t *testing.T) {
			e := goodEnv()
			e.ProcessEnvAllow = "GH_TOKEN"
			e.ProcessEnvSecrets = secrets
			c, err := e.Parse(environ)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff([]string{"GH_TOKEN"}, c.Passed); diff != "" {
				t.Errorf("Passed (-want +got):\n%s", diff)
			}
			if !slices.Contains(c.Policy.SecretValues, ghToken) {
				t.Error("GH_TOKEN's value is not a secret value")
			}
			if !slices.Contains(c.SecretNames, "GH_TOKEN") {
				t.Errorf("SecretNames = %v, want GH_TOKEN among them", c.SecretNames)
			}
			if len(c.Warnings) > 0 {
				t.Errorf("Warnings = %q, want none", c.Warnings)
			}
			ctx := prepareBash(t, c, environ)
			if ctx.Env["GH_TOKEN"] != ghToken {
				t.Error("GH_TOKEN does not reach the child whole")
			}
		})
	}
}

// TestParseAllowedCarrierOfAHostSecret checks that allowing by name a
// variable that holds the bot's own token is a configuration error, not a
// leak, and that the error names the variable only.
func TestParseAllowedCarrierOfAHostSecret(t *testing.T) {
	e := goodEnv()
	e.ProcessEnvAllow = "COOLIFY_ALIAS"
	_, err := e.Parse(map[string]string{"COOLIFY_ALIAS": testBotToken + "\n"})
	if err == nil || !strings.Contains(err.Error(), "PROCESS_ENV_ALLOW: COOLIFY_ALIAS") {
		t.Fatalf("Parse error = %v, want one naming COOLIFY_ALIAS", err)
	}
	if strings.Contains(err.Error(), testBotToken) {
		t.Error("the error holds the bot token")
	}
}

// TestParseCredentialURLs checks that an inherited URL with a password or
// a token-like query parameter is removed from agent processes whatever its
// name, and that its credentials become secrets.
func TestParseCredentialURLs(t *testing.T) {
	const dbPassword, hookToken = "fake-database-password-0032", "fake-hook-token-0033"
	environ := map[string]string{
		"PATH":         "/usr/bin",
		"DATABASE_URL": "postgres://app:" + dbPassword + "@db:5432/app?sslmode=require",
		"METRICS_PUSH": "https://push.example/v1?channel=ops&token=" + hookToken,
		"UPSTREAM":     "https://upstream.example/api?page=2",
	}
	c, err := goodEnv().Parse(environ)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	for _, want := range []string{dbPassword, hookToken} {
		if !slices.Contains(c.Policy.SecretValues, want) {
			t.Errorf("a URL credential (length %d) is not a secret value", len(want))
		}
	}
	ctx := prepareBash(t, c, environ)
	for _, name := range []string{"DATABASE_URL", "METRICS_PUSH"} {
		if _, ok := ctx.Env[name]; ok {
			t.Errorf("%s reaches the child", name)
		}
	}
	if _, ok := ctx.Env["UPSTREAM"]; !ok {
		t.Error("UPSTREAM, a URL without a credential, was removed")
	}
	if got := redactor.New(c.Policy.SecretValues).Redact("connecting as app:" + dbPassword); strings.Contains(got, dbPassword) {
		t.Error("the database password is not redacted")
	}
}

func TestApplyBlankDefaults(t *testing.T) {
	e := Env{LogLevel: " ", LogFormat: "", AgentDir: "", OpenAIModel: "custom-model", SpeechModel: ""}
	e.applyBlankDefaults()
	want := Env{
		APIURL:          "https://api.telegram.org",
		WebhookListen:   ":8080",
		OpenAIBaseURL:   "https://api.openai.com/v1",
		OpenAIModel:     "custom-model",
		ContextWindow:   "128000",
		SpeechModel:     "whisper-1",
		HardenHost:      "true",
		AgentDir:        "data",
		WorkspaceDir:    "workspace",
		MCPTimeout:      "30s",
		BashTimeoutMax:  "600s",
		AgentSandbox:    "auto",
		ApprovalMode:    "risky",
		ApprovalTimeout: "10m",
		ToolStatus:      "last",
		StrangerReply:   "on",
		LogLevel:        "info",
		LogFormat:       "text",
	}
	if diff := cmp.Diff(want, e); diff != "" {
		t.Errorf("applyBlankDefaults (-want +got):\n%s", diff)
	}
}

func TestToolTimeoutExceedsTheToolsOwnLimits(t *testing.T) {
	for _, bash := range []time.Duration{time.Minute, 10 * time.Minute, time.Hour} {
		got := toolTimeout(Config{BashTimeoutMax: bash})
		if got <= bash || got <= mcp.DefaultCallTimeout {
			t.Errorf("toolTimeout with BASH_TIMEOUT_MAX %s = %s, want more than it and the MCP call timeout", bash, got)
		}
	}
}

func TestSecretURLPasswordIsASecretToo(t *testing.T) {
	e := goodEnv()
	e.ProcessEnvSecrets = "DB_URL"
	c, err := e.Parse(map[string]string{"DB_URL": "postgres://app:hunter2hunter2@db/prod?sslkey=abcdefgh12345"})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	for _, want := range []string{"hunter2hunter2", "abcdefgh12345"} {
		if !slices.Contains(c.Policy.SecretValues, want) {
			t.Errorf("a part of the secret URL (length %d) is not a secret value on its own", len(want))
		}
	}
}

func TestURLSecretsKeepTheWrittenPassword(t *testing.T) {
	raw := "https://app:pa$$%3Aword1234@db.example/x"
	got := urlSecrets(raw)
	for _, want := range []string{"pa$$:word1234", "pa$$%3Aword1234"} {
		if !slices.Contains(got, want) {
			t.Errorf("urlSecrets lacks the password form of length %d", len(want))
		}
	}
	carriers := secretCarriers(map[string]string{"OTHER": raw, "PLAIN": "nothing here"}, got, got, nil, nil)
	if !slices.Equal(carriers, []string{"OTHER"}) {
		t.Errorf("secretCarriers = %v, want [OTHER]", carriers)
	}
}
