package main

import (
	"fmt"
	"io"
	"reflect"
	"strings"
	"text/tabwriter"

	"github.com/kelseyhightower/envconfig"
)

// Env is the configuration as the environment gives it: every variable the
// product reads, as text. [Env.Parse] checks it and turns it into a [Config].
// The names are part of the product: documented in docs/telegram-bot.md,
// shown by `telegram-bot doctor`, never renamed without a note there.
type Env struct {
	BotToken       string `envconfig:"TELEGRAM_BOT_TOKEN" desc:"the bot's token from @BotFather (required, secret)"`
	AllowedUserIDs string `envconfig:"TELEGRAM_ALLOWED_USER_IDS" desc:"comma-separated Telegram user ids the bot answers (required)"`
	APIURL         string `envconfig:"TELEGRAM_API_URL" default:"https://api.telegram.org" desc:"Bot API server (a local telegram-bot-api server, for example)"`

	WebhookURL    string `envconfig:"TELEGRAM_WEBHOOK_URL" desc:"public https URL Telegram delivers the updates to (webhook mode; unset: long polling)"`
	WebhookListen string `envconfig:"TELEGRAM_WEBHOOK_LISTEN" default:":8080" desc:"address the webhook listener listens on, behind the proxy"`
	WebhookSecret string `envconfig:"TELEGRAM_WEBHOOK_SECRET" desc:"secret_token Telegram sends with every delivery (default: derived from the bot token; secret)"`

	ModelProvider    string `envconfig:"MODEL_PROVIDER" default:"openai" desc:"openai (an OpenAI-compatible API) or claude-code (the Claude Code CLI on your Claude plan)"`
	ClaudeOAuthToken string `envconfig:"CLAUDE_CODE_OAUTH_TOKEN" desc:"Claude Code's login token from claude setup-token, for MODEL_PROVIDER=claude-code (secret, for claude alone)"`

	OpenAIKey      string `envconfig:"OPENAI_API_KEY" desc:"key of the OpenAI-compatible model provider (secret)"`
	OpenAIBaseURL  string `envconfig:"OPENAI_BASE_URL" default:"https://api.openai.com/v1" desc:"OpenAI-compatible API base URL (OpenRouter, Ollama, vLLM, LM Studio)"`
	OpenAIModel    string `envconfig:"OPENAI_MODEL" default:"gpt-4.1-mini" desc:"model for new chats"`
	OpenAIModels   string `envconfig:"OPENAI_MODELS" desc:"comma-separated models a chat may switch to with /model"`
	FallbackModels string `envconfig:"OPENAI_FALLBACK_MODELS" desc:"comma-separated models tried in order when the chat's model stays unavailable"`
	ModelPrices    string `envconfig:"MODEL_PRICES" desc:"prices per million tokens, model=input/output/cached, comma-separated (gpt-4.1-mini=0.40/1.60/0.10)"`
	UsageLimit     string `envconfig:"USAGE_DAILY_LIMIT" desc:"a chat's daily budget: tokens (200000) or an amount ($2.50, priced with MODEL_PRICES)"`
	ContextWindow  string `envconfig:"MODEL_CONTEXT_WINDOW" default:"128000" desc:"the model's context window in tokens; older messages are compacted before it fills"`

	SpeechKey     string `envconfig:"TELEGRAM_SPEECH_API_KEY" desc:"key for voice transcription (default: OPENAI_API_KEY; secret)"`
	SpeechBaseURL string `envconfig:"TELEGRAM_SPEECH_BASE_URL" desc:"transcription API base URL (default: OPENAI_BASE_URL)"`
	SpeechModel   string `envconfig:"TELEGRAM_SPEECH_MODEL" default:"whisper-1" desc:"transcription model"`

	GoogleClientSecret string `envconfig:"GOOGLE_CLIENT_SECRET" desc:"Google OAuth client secret, when set (secret)"`

	ProcessEnvAllow   string `envconfig:"PROCESS_ENV_ALLOW" desc:"comma-separated names or globs agent processes keep even when denied (GH_TOKEN)"`
	ProcessEnvDeny    string `envconfig:"PROCESS_ENV_DENY" desc:"comma-separated names or globs removed from agent processes, added to the defaults"`
	ProcessEnvSecrets string `envconfig:"PROCESS_ENV_SECRETS" desc:"comma-separated names of variables whose values are secret (removed and redacted)"`
	CredentialHosts   string `envconfig:"CREDENTIAL_HOSTS" desc:"bindings of allowed variables to the hosts they are for, VAR=host,*.domain;VAR=host (built in: GH_TOKEN, GITHUB_TOKEN, NPM_TOKEN, HF_TOKEN and more); agent processes get a stand-in the proxy swaps"`
	AgentEgress       string `envconfig:"AGENT_EGRESS" desc:"open (the default), allowlist (only bound hosts and AGENT_EGRESS_ALLOW) or required (allowlist, or refuse to start where the kernel cannot enforce it)"`
	AgentEgressAllow  string `envconfig:"AGENT_EGRESS_ALLOW" desc:"comma-separated hosts and *.domain globs agent processes may reach besides the bound ones; these may resolve to private addresses"`
	HardenHost        string `envconfig:"PROCESS_ENV_HARDEN_HOST_PROCESS" default:"true" desc:"make the bot process non-dumpable so agent processes cannot read its environment"`

	AgentDir        string `envconfig:"AGENT_DIR" default:"data" desc:"state: transcripts, chat settings, jobs, heartbeat"`
	WorkspaceDir    string `envconfig:"WORKSPACE_DIR" default:"workspace" desc:"the agent's working directory"`
	DefaultTimeZone string `envconfig:"DEFAULT_TIMEZONE" desc:"IANA zone for chats without /tz (default: the host's)"`
	MCPConfig       string `envconfig:"MCP_CONFIG" desc:"MCP servers: inline JSON, or a file the bot's user cannot modify (default: none)"`
	MCPTimeout      string `envconfig:"MCP_DISCOVERY_TIMEOUT" default:"30s" desc:"how long an MCP server's first start may take; each retry may take twice as long, up to 5m"`
	BashTimeoutMax  string `envconfig:"BASH_TIMEOUT_MAX" default:"600s" desc:"the longest a bash call may run"`

	ApprovalMode      string `envconfig:"APPROVAL_MODE" default:"risky" desc:"off, risky (ask the chat before the commands the rules match) or all (before every call but read)"`
	ApprovalTimeout   string `envconfig:"APPROVAL_TIMEOUT" default:"10m" desc:"how long a call waits for the chat's answer; no answer denies it"`
	ApprovalRules     string `envconfig:"APPROVAL_RULES" desc:"comma-separated regular expressions: a bash command one matches is asked about too"`
	ToolStatus        string `envconfig:"TOOL_STATUS" default:"last" desc:"how turns show their tool calls: last (the running call, folded into one line once the answer is there), all (every call, kept) or off; a chat toggles with /verbose"`
	StrangerReply     string `envconfig:"STRANGER_REPLY" default:"on" desc:"on: a user who is not allowed is told their id once a day, in a private chat; off: silence"`
	AgentSandbox      string `envconfig:"AGENT_SANDBOX" default:"auto" desc:"auto, required or off: confine agent processes and the file tools with Landlock (auto: where the kernel has it)"`
	AgentSandboxRead  string `envconfig:"AGENT_SANDBOX_READ" desc:"comma-separated absolute paths the sandboxed agent may also read and execute"`
	AgentSandboxWrite string `envconfig:"AGENT_SANDBOX_WRITE" desc:"comma-separated absolute paths the sandboxed agent may also read, write and execute"`
	AgentUID          string `envconfig:"AGENT_UID" default:"64000" desc:"uid agent processes run as when the bot starts as root or with CAP_SETUID and CAP_SETGID"`
	AgentGID          string `envconfig:"AGENT_GID" default:"64000" desc:"gid agent processes run as, with AGENT_UID"`
	AgentAllowRoot    string `envconfig:"AGENT_ALLOW_ROOT" default:"0" desc:"1: a bot started as root with no user to become (AGENT_DIR owned by root) runs as root, agent processes too, instead of refusing to start"`

	LogLevel  string `envconfig:"LOG_LEVEL" default:"info" desc:"debug, info, warn or error"`
	LogFormat string `envconfig:"LOG_FORMAT" default:"text" desc:"text or json"`
}

// LoadEnv reads [Env] from the process environment, defaults applied. A
// variable that is set but blank gets its default too: deployment panels
// such as Coolify's keep a blank field for a variable an operator cleared.
func LoadEnv() (Env, error) {
	var e Env
	if err := envconfig.Process("", &e); err != nil {
		return Env{}, err
	}
	e.applyBlankDefaults()
	return e, nil
}

// applyBlankDefaults gives every blank field with a default its default.
func (e *Env) applyBlankDefaults() {
	v := reflect.ValueOf(e).Elem()
	t := v.Type()
	for i := range t.NumField() {
		def, ok := t.Field(i).Tag.Lookup("default")
		if f := v.Field(i); ok && f.Kind() == reflect.String && strings.TrimSpace(f.String()) == "" {
			f.SetString(def)
		}
	}
}

// printEnvUsage lists every variable the bot reads, with its default. It
// reads Env's tags itself, as envconfig names the variables (the envconfig
// tag, else the field's name, upper-cased), rather than with
// envconfig.Usagef: that runs a text/template, and a reachable template
// keeps every exported method in the binary (see prompt.Build).
func printEnvUsage(w io.Writer) {
	fmt.Fprintln(w, "Environment:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	t := reflect.TypeFor[Env]()
	for i := range t.NumField() {
		f := t.Field(i)
		key := f.Tag.Get("envconfig")
		if key == "" {
			key = f.Name
		}
		fmt.Fprintf(tw, "  %s\t%s", strings.ToUpper(key), f.Tag.Get("desc"))
		if def := f.Tag.Get("default"); def != "" {
			fmt.Fprintf(tw, " (default %s)", def)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}
