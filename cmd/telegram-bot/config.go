package main

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/volcanic/telegram-agent/internal/chat"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
	usagelog "github.com/volcanic/telegram-agent/internal/usage"
)

// Config is the checked configuration the bot runs with.
type Config struct {
	BotToken       string
	AllowedUserIDs []int64
	APIURL         string

	// WebhookURL, when set, selects webhook mode (see webhook_config.go).
	WebhookURL    string
	WebhookListen string
	// WebhookSecret is TELEGRAM_WEBHOOK_SECRET, or the secret derived from
	// the bot token (WebhookSecretDerived).
	WebhookSecret        string
	WebhookSecretDerived bool

	// Claude is MODEL_PROVIDER=claude-code and its login token.
	Claude claudeSettings

	OpenAIKey     string
	OpenAIBaseURL string
	Model         string
	Models        []string
	ContextWindow int
	// FallbackModels are tried in order when a chat's model stays
	// unavailable after its retries (OPENAI_FALLBACK_MODELS).
	FallbackModels []string
	// Prices price the models' tokens (MODEL_PRICES); DailyLimit is each
	// chat's daily budget (USAGE_DAILY_LIMIT), zero for none.
	Prices     usagelog.Prices
	DailyLimit usagelog.Limit

	SpeechKey     string
	SpeechBaseURL string
	SpeechModel   string

	// Policy is the spawn policy's options: the defaults plus PROCESS_ENV_*,
	// with every configured secret among SecretValues.
	Policy spawnpolicy.Options
	// SecretNames names where each secret value came from, for the summary
	// (names only; never the values).
	SecretNames []string
	// Passed names the inherited variables a deny rule matches but
	// PROCESS_ENV_ALLOW lets through: they reach agent processes, and their
	// values are among the secrets, redacted everywhere.
	Passed []string
	// DeniedRedacted names the inherited variables a deny rule removes
	// whose values (8 bytes or more) are among the secrets: agent processes
	// never get them, and the same value anywhere else is redacted. They
	// are not the host's own secrets: an MCP server's env may expand them.
	DeniedRedacted []string
	// SecretSources names, for each of SecretValues, the variables it came
	// from (its keys are secrets: never print them), so that a refusal
	// can say which secret a value is.
	SecretSources map[string][]string
	// Credentials are the credential proxy's settings (CREDENTIAL_HOSTS,
	// AGENT_EGRESS, AGENT_EGRESS_ALLOW).
	Credentials credentialSettings
	// Warnings are problems that do not stop the bot (a secret too short to
	// be redacted, for one); run logs them and the doctor prints them.
	Warnings []string

	AgentDir        string
	WorkspaceDir    string
	DefaultTimeZone string
	MCPConfig       string
	// MCPTimeout bounds an MCP server's first discovery attempt
	// (MCP_DISCOVERY_TIMEOUT).
	MCPTimeout     time.Duration
	BashTimeoutMax time.Duration
	// Approvals is APPROVAL_MODE, APPROVAL_TIMEOUT and APPROVAL_RULES.
	Approvals approvalSettings
	// ToolStatus is TOOL_STATUS: chat.ToolStatusLast, ToolStatusAll or
	// ToolStatusOff.
	ToolStatus string
	// StrangerReply is STRANGER_REPLY: tell users who are not allowed their
	// id.
	StrangerReply bool
	// Sandbox is AGENT_SANDBOX and its additions.
	Sandbox SandboxConfig
	// AgentUser is AGENT_UID, AGENT_GID and AGENT_ALLOW_ROOT.
	AgentUser AgentUserConfig

	LogLevel  slog.Level
	LogFormat string
}

// Parse checks e and returns the configuration, or every problem at once,
// joined. environ is the process environment: Parse reads the variables
// PROCESS_ENV_SECRETS names from it, and finds every variable that carries a
// secret (see secretCarriers). No message ever holds a secret value:
// problems name the variable and what is wrong.
func (e Env) Parse(environ map[string]string) (Config, error) {
	var errs []error
	problem := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	c := Config{
		BotToken:        strings.TrimSpace(e.BotToken),
		OpenAIKey:       strings.TrimSpace(e.OpenAIKey),
		Model:           strings.TrimSpace(e.OpenAIModel),
		SpeechKey:       strings.TrimSpace(e.SpeechKey),
		SpeechModel:     strings.TrimSpace(e.SpeechModel),
		DefaultTimeZone: strings.TrimSpace(e.DefaultTimeZone),
	}
	if c.BotToken == "" {
		problem("TELEGRAM_BOT_TOKEN is required (the token @BotFather gave you)")
	}

	ids, idErrs := parseUserIDs(e.AllowedUserIDs)
	c.AllowedUserIDs = ids
	errs = append(errs, idErrs...)

	var err error
	if c.APIURL, err = parseHTTPURL("TELEGRAM_API_URL", e.APIURL); err != nil {
		errs = append(errs, err)
	}
	if c.OpenAIBaseURL, err = parseHTTPURL("OPENAI_BASE_URL", e.OpenAIBaseURL); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, parseWebhook(e, &c)...)
	if c.Model == "" {
		problem("OPENAI_MODEL is empty")
	}
	c.Models = splitList(e.OpenAIModels)
	if len(c.Models) > 0 && !slices.Contains(c.Models, c.Model) {
		c.Models = append([]string{c.Model}, c.Models...)
	}
	c.FallbackModels = splitList(e.FallbackModels)
	if c.Prices, err = usagelog.ParsePrices(e.ModelPrices); err != nil {
		errs = append(errs, err)
	}
	if c.DailyLimit, err = usagelog.ParseLimit(e.UsageLimit); err != nil {
		errs = append(errs, err)
	}
	var priceWarnings []string
	if c.DailyLimit.Money > 0 {
		for _, m := range append(append([]string{c.Model}, c.Models...), c.FallbackModels...) {
			if _, ok := c.Prices[m]; !ok {
				priceWarnings = append(priceWarnings, fmt.Sprintf("USAGE_DAILY_LIMIT is an amount, but MODEL_PRICES sets no price for %s: its tokens count for nothing against the limit", m))
			}
		}
	}
	if n, err := strconv.Atoi(strings.TrimSpace(e.ContextWindow)); err != nil || n < 1024 {
		problem("MODEL_CONTEXT_WINDOW must be a number of tokens, at least 1024")
	} else {
		c.ContextWindow = n
	}

	errs = append(errs, parseClaudeCode(e, environ, &c)...)

	if c.SpeechKey == "" {
		c.SpeechKey = c.OpenAIKey
	}
	c.SpeechBaseURL = c.OpenAIBaseURL
	if strings.TrimSpace(e.SpeechBaseURL) != "" {
		if c.SpeechBaseURL, err = parseHTTPURL("TELEGRAM_SPEECH_BASE_URL", e.SpeechBaseURL); err != nil {
			errs = append(errs, err)
		}
	}

	if c.DefaultTimeZone != "" {
		if _, err := time.LoadLocation(c.DefaultTimeZone); err != nil || c.DefaultTimeZone == "Local" {
			problem("DEFAULT_TIMEZONE %q is not an IANA time zone (for example Europe/Berlin or America/New_York)", c.DefaultTimeZone)
		}
	}

	ps, err := policyOptions(e, c, environ)
	c.Policy, c.SecretNames, c.Passed, c.SecretSources = ps.opts, ps.names, ps.passed, ps.sources
	c.DeniedRedacted = ps.denied
	c.Warnings = append(c.Warnings, ps.warnings...)
	c.Warnings = append(c.Warnings, priceWarnings...)

	if err != nil {
		errs = append(errs, err)
	}
	if c.Credentials, err = parseCredentials(e, c, environ); err != nil {
		errs = append(errs, err)
	}

	if c.AgentDir, err = absDir("AGENT_DIR", e.AgentDir); err != nil {
		errs = append(errs, err)
	}
	if c.WorkspaceDir, err = absDir("WORKSPACE_DIR", e.WorkspaceDir); err != nil {
		errs = append(errs, err)
	}
	c.Policy.Hooks = append(c.Policy.Hooks, agentHome(c.WorkspaceDir, environ["HOME"]))
	// No default path: every place the bot's user owns (AGENT_DIR) is one
	// whose file would be refused, so MCP_CONFIG names one or there is none.
	c.MCPConfig = strings.TrimSpace(e.MCPConfig)
	if d, err := time.ParseDuration(cmp.Or(strings.TrimSpace(e.MCPTimeout), "30s")); err != nil || d <= 0 {
		problem("MCP_DISCOVERY_TIMEOUT must be a positive duration such as 30s or 2m")
	} else {
		c.MCPTimeout = d
	}
	if c.Sandbox, err = parseSandbox(e, c.AgentDir, c.WorkspaceDir); err != nil {
		errs = append(errs, err)
	}
	if c.AgentUser, err = parseAgentUser(e); err != nil {
		errs = append(errs, err)
	}
	if d, err := time.ParseDuration(strings.TrimSpace(e.BashTimeoutMax)); err != nil || d <= 0 {
		problem("BASH_TIMEOUT_MAX must be a positive duration such as 600s or 10m")
	} else {
		c.BashTimeoutMax = d
	}

	if c.Approvals, err = parseApprovals(e); err != nil {
		errs = append(errs, err)
	}
	var ok bool
	c.ToolStatus = cmp.Or(strings.ToLower(strings.TrimSpace(e.ToolStatus)), chat.ToolStatusLast)
	if !chat.ValidToolStatus(c.ToolStatus) {
		problem("TOOL_STATUS must be last, all or off")
	}
	if c.StrangerReply, ok = parseSwitch(e.StrangerReply); !ok {
		problem("STRANGER_REPLY must be on or off")
	}

	if err := c.LogLevel.UnmarshalText([]byte(strings.TrimSpace(e.LogLevel))); err != nil {
		problem("LOG_LEVEL must be debug, info, warn or error")
	}
	switch c.LogFormat = strings.ToLower(strings.TrimSpace(e.LogFormat)); c.LogFormat {
	case "text", "json":
	default:
		problem("LOG_FORMAT must be text or json")
	}

	if len(errs) > 0 {
		return Config{}, errors.Join(errs...)
	}
	return c, nil
}

// hostDeny are the deny globs the bot adds to the defaults, for the
// secrets deployments commonly hold beside the bot's own: cloud access keys
// (AWS_SECRET_ACCESS_KEY) and private keys.
func hostDeny() []string {
	return []string{"*_SECRET_*", "*_PRIVATE_KEY", "*_SECRET_KEY", "*_ACCESS_KEY"}
}

// policySettings is what policyOptions derives from the configuration and
// the environment.
type policySettings struct {
	opts spawnpolicy.Options
	// names are where the secret values came from, warnings the problems
	// that do not stop the bot, and passed the variables Allow lets through
	// with their values redacted.
	names, warnings, passed []string
	// denied are the variables a deny rule removes whose values are
	// among the secrets.
	denied []string
	// sources names, per secret value, the variables it came from.
	sources map[string][]string
}

// policyOptions builds the spawn policy's options: PROCESS_ENV_ALLOW and
// PROCESS_ENV_DENY are added to the defaults, and SecretValues gets every
// configured secret's value (whichever are set), the values of the
// variables PROCESS_ENV_SECRETS names, the password and token-like query
// values of every inherited URL, the value of every variable a deny rule
// removes (8 bytes or more), and the value of every variable Allow
// lets through although a rule would remove it ("use, not see": it reaches
// agent processes, and its value is redacted everywhere).
//
// Every other variable that carries a secret is denied by its explicit
// name: the host's own secret variables, every variable that configures the
// bot, and any inherited variable whose value holds a secret in any form (an
// alias a platform added, a URL with the token in it, a value with a
// trailing newline). The policy's precedence lets an Allow glob keep a
// variable before its value is checked; an explicit Deny name beats every
// Allow glob, so PROCESS_ENV_ALLOW=TELEGRAM_* or =* can never re-admit the
// bot's own secrets. A variable Allow lets through is a carrier only when it
// holds a secret that came from somewhere else than the variables Allow
// lets through.
func policyOptions(e Env, c Config, environ map[string]string) (policySettings, error) {
	opts := spawnpolicy.DefaultOptions()
	opts.Deny = append(opts.Deny, hostDeny()...)
	opts.Deny = append(opts.Deny, splitList(e.ProcessEnvDeny)...)
	opts.Allow = append(opts.Allow, splitList(e.ProcessEnvAllow)...)

	var errs []error
	on, ok := parseSwitch(e.HardenHost)
	opts.HardenHostProcess = on
	if !ok {
		errs = append(errs, errors.New("PROCESS_ENV_HARDEN_HOST_PROCESS must be true or false"))
	}

	var names, warnings []string
	// sources names, per secret value, the variables it came from.
	sources := map[string][]string{}
	add := func(name, value string) {
		if value == "" {
			return
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
		if len(value) < spawnpolicy.MinimumSecretLength {
			warnings = append(warnings, fmt.Sprintf("%s is shorter than %d characters: its value is neither filtered by value nor redacted", name, spawnpolicy.MinimumSecretLength))
			return
		}
		record := func(v string) {
			if !slices.Contains(sources[v], name) {
				sources[v] = append(sources[v], name)
			}
			if !slices.Contains(opts.SecretValues, v) {
				opts.SecretValues = append(opts.SecretValues, v)
			}
		}
		record(value)
		// A secret that is a URL (a DATABASE_URL in PROCESS_ENV_SECRETS)
		// carries its password and query tokens on their own too: printed
		// alone, they must be redacted as well.
		for _, part := range urlSecrets(value) {
			if len(part) >= spawnpolicy.MinimumSecretLength {
				record(part)
			}
		}
	}
	add("TELEGRAM_BOT_TOKEN", c.BotToken)
	add("OPENAI_API_KEY", c.OpenAIKey)
	if strings.TrimSpace(e.SpeechKey) != "" { // otherwise it is OPENAI_API_KEY's value
		add("TELEGRAM_SPEECH_API_KEY", c.SpeechKey)
	}
	add("GOOGLE_CLIENT_SECRET", strings.TrimSpace(e.GoogleClientSecret))
	add("CLAUDE_CODE_OAUTH_TOKEN", strings.TrimSpace(e.ClaudeOAuthToken))
	add("TELEGRAM_WEBHOOK_SECRET", c.WebhookSecret)
	for _, u := range []struct{ name, url string }{
		{"TELEGRAM_API_URL", c.APIURL}, {"OPENAI_BASE_URL", c.OpenAIBaseURL}, {"TELEGRAM_SPEECH_BASE_URL", c.SpeechBaseURL},
		{"TELEGRAM_WEBHOOK_URL", c.WebhookURL},
	} {
		for _, v := range urlSecrets(u.url) {
			add(u.name, v)
		}
	}
	// PROCESS_ENV_SECRETS adds values, never names: the policy removes a
	// variable holding one by the value rule, which Allow wins over, so
	// naming an allowed variable there is no conflict.
	for _, name := range splitList(e.ProcessEnvSecrets) {
		if !validName(name) {
			errs = append(errs, fmt.Errorf("PROCESS_ENV_SECRETS: %q is not a variable name", name))
			continue
		}
		if v, ok := environ[name]; ok {
			add(name, strings.TrimSpace(v))
		}
	}
	inherited := slices.Sorted(maps.Keys(environ))
	for _, name := range inherited {
		for _, v := range spawnpolicy.URLCredentials(environ[name]) {
			add(name, v)
		}
	}

	// The bot's own variables are carriers by name, whatever Allow says.
	hostVars := append([]string{"TELEGRAM_BOT_TOKEN", "OPENAI_API_KEY", "TELEGRAM_SPEECH_API_KEY", "GOOGLE_CLIENT_SECRET"}, configNames()...)
	// A deny rule removes a variable because its name says it holds a
	// secret (DB_PASSWORD): its value is a secret for the redactor too, so
	// the same value in a workspace .env or in a command's output comes
	// back redacted. The bot's own variables are left to the lines above.
	var denied []string
	for _, name := range opts.Denied(environ) {
		if v := strings.TrimSpace(environ[name]); len(v) >= spawnpolicy.MinimumSecretLength && !slices.Contains(hostVars, name) {
			denied = append(denied, name)
			add(name, v)
		}
	}
	var passed []string
	for _, name := range opts.Passed(environ) {
		if !slices.Contains(hostVars, name) {
			passed = append(passed, name)
			add(name, strings.TrimSpace(environ[name]))
		}
	}
	// foreign are the secrets that came from somewhere else than the
	// variables Allow lets through: no variable may carry one to a child.
	// A value a deny rule's variable holds is not foreign: the same token
	// under GITHUB_TOKEN and an allowed GH_TOKEN is passed on purpose.
	var foreign []string
	for _, v := range opts.SecretValues {
		if slices.ContainsFunc(sources[v], func(src string) bool { return !slices.Contains(passed, src) && !slices.Contains(denied, src) }) {
			foreign = append(foreign, v)
		}
	}
	for _, name := range secretCarriers(environ, opts.SecretValues, foreign, hostVars, passed) {
		if slices.Contains(denied, name) {
			continue // a deny rule removes it already, and doctor names that rule
		}
		if slices.Contains(opts.Allow, name) {
			errs = append(errs, fmt.Errorf("PROCESS_ENV_ALLOW: %s configures the bot or holds another variable's secret, so agent processes never get it; remove it from PROCESS_ENV_ALLOW", name))
			continue
		}
		if !slices.ContainsFunc(opts.Deny, func(d string) bool { return strings.EqualFold(d, name) }) {
			opts.Deny = append(opts.Deny, name)
		}
	}

	if err := opts.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("PROCESS_ENV_ALLOW/PROCESS_ENV_DENY: %w", err))
		return policySettings{opts: opts, names: names, warnings: warnings}, errors.Join(errs...)
	}
	return policySettings{opts: opts, names: names, warnings: warnings, passed: opts.Passed(environ), denied: denied, sources: sources}, errors.Join(errs...)
}

// secretCarriers returns, sorted, the names among hostVars that are set in
// environ, and every other variable whose value holds a secret in any form
// the redactor knows (raw, or base64-, hex-, percent- or JSON-encoded, as a
// database URL holds an escaped password): one of secrets, or for the
// variables in passed, one of foreign (a passed variable holds its own
// value, which is a secret because it is passed).
func secretCarriers(environ map[string]string, secrets, foreign, hostVars, passed []string) []string {
	all, others := redactor.New(secrets), redactor.New(foreign)
	var out []string
	for name, value := range environ {
		red := all
		if slices.Contains(passed, name) {
			red = others
		}
		if (slices.Contains(hostVars, name) && value != "") || red.Redact(value) != value {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// configNames returns the names of every variable the bot reads: they
// configure the bot, not the agent, so agent processes never inherit them
// (MCP_CONFIG may hold tokens, a base URL credentials).
func configNames() []string {
	t := reflect.TypeFor[Env]()
	names := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		if name := t.Field(i).Tag.Get("envconfig"); name != "" {
			names = append(names, name)
		}
	}
	return names
}

// urlSecrets returns the credentials one of the bot's own URLs carries:
// those of spawnpolicy.URLCredentials (its password, as decoded and as
// spelt, and token-like query values), and every other query value at
// least MinimumSecretLength long, since the bot's URL has no ordinary
// parameter to keep.
func urlSecrets(raw string) []string {
	out := spawnpolicy.URLCredentials(raw)
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Scheme == "" || u.Host == "" {
		return out
	}
	for _, vs := range u.Query() {
		for _, v := range vs {
			if len(v) >= spawnpolicy.MinimumSecretLength && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return out
}

// parseSwitch reads an on/off setting: blank, true, 1, yes and on are on;
// false, 0, no and off are off; ok is false for anything else, which counts
// as on (failing closed: the only setting this reads turns hardening off).
func parseSwitch(s string) (on, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "true", "1", "yes", "on":
		return true, true
	case "false", "0", "no", "off":
		return false, true
	}
	return true, false
}

// userIDHint tells an operator who wrote a @username or a name into
// TELEGRAM_ALLOWED_USER_IDS where to find the numeric id.
const userIDHint = " (to find your numeric id, message @userinfobot on Telegram, or start the bot with any id, 1, and STRANGER_REPLY=on, and write to it: it answers with your id)"

// parseUserIDs reads TELEGRAM_ALLOWED_USER_IDS. A bad entry is named by its
// position, not echoed, in case a secret was pasted into the wrong variable.
func parseUserIDs(s string) ([]int64, []error) {
	entries := splitList(s)
	if len(entries) == 0 {
		return nil, []error{errors.New("TELEGRAM_ALLOWED_USER_IDS is required: the numeric Telegram user ids the bot answers, comma separated")}
	}
	var ids []int64
	var errs []error
	for i, entry := range entries {
		id, err := strconv.ParseInt(entry, 10, 64)
		if err != nil || id <= 0 {
			kind := "is not a numeric user id"
			if strings.HasPrefix(entry, "@") {
				kind = "is a @username, not a numeric user id"
			}
			if len(errs) == 0 {
				kind += userIDHint
			}
			errs = append(errs, fmt.Errorf("TELEGRAM_ALLOWED_USER_IDS: entry %d %s", i+1, kind))
			continue
		}
		ids = append(ids, id)
	}
	return ids, errs
}

// parseHTTPURL checks that s is an absolute http or https URL and returns it
// without a trailing slash. The value is not echoed: a URL can hold
// credentials.
func parseHTTPURL(name, s string) (string, error) {
	s = strings.TrimSpace(s)
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%s must be an absolute http(s) URL", name)
	}
	return strings.TrimRight(s, "/"), nil
}

func absDir(name, dir string) (string, error) {
	dir = strings.TrimSpace(dir)
	if dir == "" {
		return "", fmt.Errorf("%s is empty", name)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return abs, nil
}

// switchableModels are the models /model offers a chat: OPENAI_MODELS
// (with OPENAI_MODEL), then the fallback models not among them, which the
// operator allowed to answer already. None when OPENAI_MODELS is unset:
// switching is then not configured.
func (c Config) switchableModels() []string {
	if len(c.Models) == 0 {
		return nil
	}
	out := slices.Clone(c.Models)
	for _, m := range c.FallbackModels {
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// splitList splits a comma-separated list, trimming blanks and dropping
// empty entries.
func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

func validName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		if r != '_' && (r < '0' || r > '9') && (r < 'A' || r > 'Z') && (r < 'a' || r > 'z') {
			return false
		}
	}
	return true
}
