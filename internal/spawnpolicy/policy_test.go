package spawnpolicy

import (
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// keptByDefault is the part of hostEnv the default options keep.
func keptByDefault() map[string]string {
	return map[string]string{
		"PATH":                      "/usr/local/bin:/usr/bin:/bin",
		"HOME":                      "/home/bot",
		"LANG":                      "C.UTF-8",
		"PLAYWRIGHT_BROWSERS_PATH":  "/ms-playwright",
		"TOKENIZERS_PARALLELISM":    "false",
		"TELEGRAM_ALLOWED_USER_IDS": "42,43",
	}
}

// hostEnv is an injected host environment: keptByDefault plus the secrets
// of common services under their usual names.
func hostEnv() map[string]string {
	return with(keptByDefault(),
		"TELEGRAM_BOT_TOKEN", secretBotToken,
		"OPENAI_API_KEY", secretOpenAI,
		"GOOGLE_CLIENT_SECRET", secretGoogle,
		"GITHUB_TOKEN", secretGitHub,
		"Telegram__Speech__ApiKey", secretOpenAI,
		"Telegram__BotToken", secretBotToken,
		"GoogleCalendar__ClientSecret", secretGoogle,
		"DB_PASSWORD", secretDatabase,
		"ANTHROPIC_API_KEY", secretAnthropic,
	)
}

// with returns a copy of base with the given name/value pairs set.
func with(base map[string]string, pairs ...string) map[string]string {
	out := maps.Clone(base)
	for i := 0; i+1 < len(pairs); i += 2 {
		out[pairs[i]] = pairs[i+1]
	}
	return out
}

// without returns a copy of base without names.
func without(base map[string]string, names ...string) map[string]string {
	out := maps.Clone(base)
	for _, name := range names {
		delete(out, name)
	}
	return out
}

// optionsWith returns the default options changed by change.
func optionsWith(change func(*Options)) Options {
	o := DefaultOptions()
	change(&o)
	return o
}

// bashRequest is a plain bash tool request.
func bashRequest() Request {
	return Request{Purpose: BashTool, Command: "env", Cwd: "/work", Scope: "chat:1", SessionID: "s1", Origin: "bash"}
}

// bashContext is what bashRequest becomes with env and no hooks.
func bashContext(env map[string]string) Context {
	return Context{Purpose: BashTool, Command: "env", Cwd: "/work", Env: masked(env), Scope: "chat:1", SessionID: "s1", Origin: "bash"}
}

func TestDefaultDenyEntriesRemoveTheirExamples(t *testing.T) {
	tests := []struct {
		entry    string
		examples []string
	}{
		{"*_API_KEY", []string{"OPENAI_API_KEY", "openai_api_key", "X_API_KEY"}},
		{"*_APIKEY", []string{"SPEECH_APIKEY", "Speech_ApiKey"}},
		{"*__APIKEY", []string{"Telegram__Speech__ApiKey", "A__APIKEY"}},
		{"*_TOKEN", []string{"TELEGRAM_BOT_TOKEN", "GITHUB_TOKEN", "_TOKEN"}},
		{"*__*TOKEN", []string{"Telegram__BotToken", "A__TOKEN", "Section__AccessToken"}},
		{"*_SECRET", []string{"GOOGLE_CLIENT_SECRET", "client_secret"}},
		{"*__*SECRET", []string{"GoogleCalendar__ClientSecret", "A__B__SECRET"}},
		{"*_PASSWORD", []string{"DB_PASSWORD", "Registry_Password"}},
		{"*__*PASSWORD", []string{"Database__Password", "Registry__AdminPassword"}},
		{"*_KEY", []string{"STRIPE_KEY", "AWS_SECRET_ACCESS_KEY", "SIGNING_KEY", "ssh_private_key"}},
		{"*__*KEY", []string{"Jwt__SigningKey", "Stripe__Key", "App__Crypto__MasterKey"}},
		{"*_PAT", []string{"GITHUB_PAT", "AZURE_DEVOPS_PAT", "gitlab_pat"}},
		{"*__*PAT", []string{"GitHub__Pat", "Ci__DeployPat"}},
		{"*_PASS", []string{"SMTP_PASS", "REDIS_PASS", "mysql_pass"}},
		{"*__*PASS", []string{"Smtp__Pass", "Mail__UserPass"}},
		{"*_PASSWD", []string{"DB_PASSWD", "ROOT_PASSWD"}},
		{"*__*PASSWD", []string{"Database__Passwd", "Ldap__BindPasswd"}},
		{"*_DSN", []string{"SENTRY_DSN", "DATABASE_DSN"}},
		{"*__*DSN", []string{"Sentry__Dsn", "Db__ConnectionDsn"}},
		{"*_AUTH", []string{"NPM_CONFIG__AUTH", "BASIC_AUTH", "REGISTRY_AUTH"}},
		{"*__*AUTH", []string{"Proxy__BasicAuth", "Registry__Auth"}},
		{"*_CREDENTIALS", []string{"GOOGLE_APPLICATION_CREDENTIALS", "AWS_CREDENTIALS"}},
		{"*__*CREDENTIALS", []string{"Aws__Credentials", "Gcp__ServiceCredentials"}},
		{"*_WEBHOOK_URL", []string{"SLACK_WEBHOOK_URL", "DISCORD_WEBHOOK_URL"}},
		{"*__*WEBHOOKURL", []string{"Slack__WebhookUrl", "Alerts__TeamsWebhookUrl"}},
		{"TELEGRAM_BOT_TOKEN", []string{"TELEGRAM_BOT_TOKEN", "telegram_bot_token"}},
		{"OPENAI_API_KEY", []string{"OPENAI_API_KEY"}},
		{"GOOGLE_CLIENT_SECRET", []string{"GOOGLE_CLIENT_SECRET"}},
		{"ANTHROPIC_API_KEY", []string{"ANTHROPIC_API_KEY"}},
		{"ANTHROPIC_AUTH_TOKEN", []string{"ANTHROPIC_AUTH_TOKEN"}},
		{"CLAUDE_CODE_OAUTH_TOKEN", []string{"CLAUDE_CODE_OAUTH_TOKEN"}},
	}
	if got := len(tests); got != len(DefaultDeny) {
		t.Fatalf("the table covers %d entries, DefaultDeny has %d", got, len(DefaultDeny))
	}
	for _, tt := range tests {
		t.Run(tt.entry, func(t *testing.T) {
			if !slices.Contains(DefaultDeny, tt.entry) {
				t.Fatalf("DefaultDeny lacks %q", tt.entry)
			}
			env := keptByDefault()
			for _, name := range tt.examples {
				env[name] = "value-of-" + name
			}
			for _, opts := range []Options{{Deny: []string{tt.entry}}, DefaultOptions()} {
				p := newTestPolicy(t, opts, nil, env)
				got, err := p.Prepare(bashRequest())
				if err != nil {
					t.Fatalf("Prepare: %v", err)
				}
				if diff := cmp.Diff(sortedNames(keptByDefault()), sortedNames(got.Env)); diff != "" {
					t.Errorf("deny %v: names (-want +got):\n%s", opts.Deny, diff)
				}
			}
		})
	}
}

// TestDefaultDenyKeepsOrdinaryNames checks the names the default globs must
// not catch: the system's, the shell's and the tools' usual variables, and
// the ones whose names merely resemble a secret's (an ASKPASS helper, an
// agent socket, a credentials directory).
func TestDefaultDenyKeepsOrdinaryNames(t *testing.T) {
	kept := []string{
		"PATH", "HOME", "LANG", "LANGUAGE", "LC_ALL", "TZ", "TERM", "SHELL", "USER", "LOGNAME", "PWD", "OLDPWD", "HOSTNAME",
		"SSH_AUTH_SOCK", "SSH_AGENT_PID", "SSH_ASKPASS", "GIT_ASKPASS", "SUDO_ASKPASS", "XAUTHORITY", "GPG_TTY", "GNUPGHOME",
		"LESSKEY", "KEYTIMEOUT", "CREDENTIALS_DIRECTORY", "PASSWORD_STORE_DIR", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL",
		"PLAYWRIGHT_BROWSERS_PATH", "TOKENIZERS_PARALLELISM", "TELEGRAM_ALLOWED_USER_IDS", "DEFAULT_TIMEZONE",
		"GOPATH", "PYTHONPATH", "NODE_PATH", "LD_LIBRARY_PATH", "CLASSPATH", "JAVA_HOME", "KUBECONFIG", "DOCKER_HOST",
		"XDG_RUNTIME_DIR", "DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "EDITOR", "PAGER", "NO_PROXY", "SSL_CERT_FILE",
		"NODE_EXTRA_CA_CERTS", "KEY_PATH", "PAT_HOME", "AUTH_MODE", "DSN_TIMEOUT", "WEBHOOK_URL_PATH",
		"Logging__LogLevel__Default", "Kestrel__Endpoints__Http__Url",
	}
	env := make(map[string]string, len(kept))
	for _, name := range kept {
		env[name] = "ordinary-value"
	}
	p := newTestPolicy(t, DefaultOptions(), nil, env)
	got, err := p.Prepare(bashRequest())
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	if diff := cmp.Diff(sortedNames(env), sortedNames(got.Env)); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}

func TestPrepare(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		env  map[string]string
		req  Request
		want Context
	}{
		{
			name: "defaults remove the common secrets and keep the rest",
			opts: DefaultOptions(),
			env:  hostEnv(),
			req:  bashRequest(),
			want: bashContext(keptByDefault()),
		},
		{
			name: "allow of GITHUB_TOKEN keeps it",
			opts: optionsWith(func(o *Options) { o.Allow = []string{"GITHUB_TOKEN"} }),
			env:  hostEnv(),
			req:  bashRequest(),
			want: bashContext(with(keptByDefault(), "GITHUB_TOKEN", secretGitHub)),
		},
		{
			name: "allow matches case-insensitively",
			opts: optionsWith(func(o *Options) { o.Allow = []string{"github_token"} }),
			env:  hostEnv(),
			req:  bashRequest(),
			want: bashContext(with(keptByDefault(), "GITHUB_TOKEN", secretGitHub)),
		},
		{
			name: "allow of *_TOKEN re-admits GITHUB_TOKEN but not TELEGRAM_BOT_TOKEN",
			opts: optionsWith(func(o *Options) { o.Allow = []string{"*_TOKEN"} }),
			env:  hostEnv(),
			req:  bashRequest(),
			want: bashContext(with(keptByDefault(), "GITHUB_TOKEN", secretGitHub)),
		},
		{
			name: "an explicit deny beats an allow-everything glob, whatever the case",
			opts: Options{Deny: []string{"telegram_bot_token"}, Allow: []string{"*"}},
			env:  hostEnv(),
			req:  bashRequest(),
			want: bashContext(without(hostEnv(), "TELEGRAM_BOT_TOKEN")),
		},
		{
			name: "a deny glob matches case-insensitively",
			opts: Options{Deny: []string{"*_secret"}},
			env:  keptByDefault(),
			req:  bashRequest(),
			want: bashContext(keptByDefault()),
		},
		{
			name: "a secret value under an innocent name is removed",
			opts: optionsWith(func(o *Options) { o.SecretValues = []string{secretAlias} }),
			env:  with(keptByDefault(), "COOLIFY_ALIAS", secretAlias, "OTHER", "an-ordinary-setting"),
			req:  bashRequest(),
			want: bashContext(with(keptByDefault(), "OTHER", "an-ordinary-setting")),
		},
		{
			name: "secret values shorter than MinimumSecretLength are ignored",
			opts: optionsWith(func(o *Options) { o.SecretValues = []string{"true", "1234567", "12345678"} }),
			env:  with(keptByDefault(), "DEBUG", "true", "SEVEN", "1234567", "EIGHT", "12345678"),
			req:  bashRequest(),
			want: bashContext(with(keptByDefault(), "DEBUG", "true", "SEVEN", "1234567")),
		},
		{
			name: "allow comes before secret values",
			opts: optionsWith(func(o *Options) {
				o.Allow = []string{"GITHUB_TOKEN"}
				o.SecretValues = []string{secretGitHub}
			}),
			env:  hostEnv(),
			req:  bashRequest(),
			want: bashContext(with(keptByDefault(), "GITHUB_TOKEN", secretGitHub)),
		},
		{
			name: "explicit env beats the filter and nil removes",
			opts: DefaultOptions(),
			env:  hostEnv(),
			req: func() Request {
				r := bashRequest()
				r.Env = map[string]*string{"GITHUB_TOKEN": ptr(secretGitHub), "LANG": nil, "NEW": ptr("v"), "ABSENT": nil}
				return r
			}(),
			want: bashContext(with(without(keptByDefault(), "LANG"), "GITHUB_TOKEN", secretGitHub, "NEW", "v")),
		},
		{
			name: "explicit env replaces an inherited value",
			opts: DefaultOptions(),
			env:  hostEnv(),
			req: func() Request {
				r := bashRequest()
				r.Env = map[string]*string{"HOME": ptr("/tmp/home")}
				return r
			}(),
			want: bashContext(with(keptByDefault(), "HOME", "/tmp/home")),
		},
		{
			name: "request args are kept",
			opts: DefaultOptions(),
			env:  keptByDefault(),
			req:  Request{Purpose: MCPServer, Command: "npx", Args: []string{"-y", "@playwright/mcp"}, Cwd: "/tmp", Origin: "playwright"},
			want: Context{Purpose: MCPServer, Command: "npx", Args: []string{"-y", "@playwright/mcp"}, Cwd: "/tmp", Env: keptByDefault(), Origin: "playwright"},
		},
		{
			name: "an empty environment gives an empty, non-nil map",
			opts: DefaultOptions(),
			env:  map[string]string{},
			req:  bashRequest(),
			want: bashContext(map[string]string{}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newTestPolicy(t, tt.opts, nil, tt.env)
			got, err := p.Prepare(tt.req)
			if err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			if diff := cmp.Diff(tt.want, maskedContext(got)); diff != "" {
				t.Errorf("Prepare (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrepareTimeZone(t *testing.T) {
	if !setsTZ {
		t.Skip("TZ is not set on this OS")
	}
	tests := []struct {
		name     string
		env      map[string]string
		explicit map[string]*string
		zone     string
		wantTZ   string
		wantSet  bool
	}{
		{name: "TimeZoneID sets TZ", zone: "Europe/Berlin", wantTZ: "Europe/Berlin", wantSet: true},
		{name: "TimeZoneID replaces an inherited TZ", env: map[string]string{"TZ": "UTC"}, zone: "Asia/Tokyo", wantTZ: "Asia/Tokyo", wantSet: true},
		{name: "explicit TZ wins", explicit: map[string]*string{"TZ": ptr("America/New_York")}, zone: "Europe/Berlin", wantTZ: "America/New_York", wantSet: true},
		{name: "explicit removal of TZ wins", env: map[string]string{"TZ": "UTC"}, explicit: map[string]*string{"TZ": nil}, zone: "Europe/Berlin"},
		{name: "no zone keeps the inherited TZ", env: map[string]string{"TZ": "UTC"}, wantTZ: "UTC", wantSet: true},
		{name: "no zone and no TZ", wantSet: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := with(map[string]string{"PATH": "/bin"})
			maps.Copy(env, tt.env)
			p := newTestPolicy(t, DefaultOptions(), nil, env)
			req := bashRequest()
			req.Env = tt.explicit
			req.TimeZoneID = tt.zone
			got, err := p.Prepare(req)
			if err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			tz, ok := got.Env["TZ"]
			if ok != tt.wantSet || tz != tt.wantTZ {
				t.Errorf("TZ = %q (set %v), want %q (set %v)", tz, ok, tt.wantTZ, tt.wantSet)
			}
		})
	}
}

func TestPrepareHooks(t *testing.T) {
	appendToCommand := func(suffix string) Hook {
		return func(c Context) (Context, error) {
			c.Command += suffix
			return c, nil
		}
	}
	tests := []struct {
		name  string
		hooks []Hook
		want  Context
	}{
		{
			name:  "hooks run in order",
			hooks: []Hook{appendToCommand(" a"), appendToCommand(" b"), appendToCommand(" c")},
			want:  with2(bashContext(keptByDefault()), func(c *Context) { c.Command = "env a b c" }),
		},
		{
			name: "a hook rewrites command, args, cwd and env",
			hooks: []Hook{func(c Context) (Context, error) {
				c.Command = "source ~/.profile\n" + c.Command
				c.Args = append(c.Args, "--login")
				c.Cwd = "/elsewhere"
				c.Env["EXTRA"] = "1"
				delete(c.Env, "LANG")
				return c, nil
			}},
			want: with2(bashContext(with(without(keptByDefault(), "LANG"), "EXTRA", "1")), func(c *Context) {
				c.Command = "source ~/.profile\nenv"
				c.Args = []string{"--login"}
				c.Cwd = "/elsewhere"
			}),
		},
		{
			name: "a hook may add a denied variable: hooks are host code",
			hooks: []Hook{func(c Context) (Context, error) {
				c.Env["GITHUB_TOKEN"] = secretGitHub
				return c, nil
			}},
			want: bashContext(with(keptByDefault(), "GITHUB_TOKEN", secretGitHub)),
		},
		{
			name: "a hook cannot change Purpose, Scope, SessionID or Origin",
			hooks: []Hook{func(c Context) (Context, error) {
				return Context{Purpose: Other, Command: c.Command, Cwd: c.Cwd, Env: c.Env, Scope: "chat:2", SessionID: "s2", Origin: "evil"}, nil
			}, func(c Context) (Context, error) {
				if c.Purpose != BashTool || c.Scope != "chat:1" || c.SessionID != "s1" || c.Origin != "bash" {
					return Context{}, errors.New("the second hook saw the first hook's purpose, scope, session or origin")
				}
				return c, nil
			}},
			want: bashContext(keptByDefault()),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := DefaultOptions()
			opts.Hooks = tt.hooks
			p := newTestPolicy(t, opts, nil, hostEnv())
			got, err := p.Prepare(bashRequest())
			if err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			if diff := cmp.Diff(tt.want, maskedContext(got)); diff != "" {
				t.Errorf("Prepare (-want +got):\n%s", diff)
			}
		})
	}
}

// with2 returns c changed by change.
func with2(c Context, change func(*Context)) Context {
	change(&c)
	return c
}

func TestPrepareFailsClosed(t *testing.T) {
	ok := func(c Context) (Context, error) { return c, nil }
	errBoom := errors.New("boom")
	tests := []struct {
		name    string
		env     map[string]string
		hooks   []Hook
		req     func(*Request)
		wantErr []string
		wantIs  error
	}{
		{name: "no command", req: func(r *Request) { r.Command = "" }, wantErr: []string{"no command"}},
		{name: "a blank command", req: func(r *Request) { r.Command = " \n" }, wantErr: []string{"no command"}},
		{name: "no cwd", req: func(r *Request) { r.Cwd = "" }, wantErr: []string{"no working directory"}},
		{name: "explicit empty name", req: func(r *Request) { r.Env = map[string]*string{"": ptr("x")} }, wantErr: []string{"empty name"}},
		{name: "explicit name with =", req: func(r *Request) { r.Env = map[string]*string{"A=B": ptr("x")} }, wantErr: []string{`"A=B"`, "'='"}},
		{name: "explicit name with NUL", req: func(r *Request) { r.Env = map[string]*string{"A\x00B": nil} }, wantErr: []string{"NUL"}},
		{name: "explicit value with NUL", req: func(r *Request) { r.Env = map[string]*string{"SECRETISH": ptr(secretAlias + "\x00")} }, wantErr: []string{`"SECRETISH"`, "NUL"}},
		{name: "NUL in an argument", req: func(r *Request) { r.Args = []string{"ok", "a\x00b"} }, wantErr: []string{"argument 1", "NUL"}},
		{name: "NUL in the command", req: func(r *Request) { r.Command = "env\x00" }, wantErr: []string{"command", "NUL"}},
		{name: "inherited value with NUL", env: map[string]string{"ODD": "a\x00b"}, wantErr: []string{`"ODD"`, "NUL"}},
		{
			name:    "a hook that returns an error",
			hooks:   []Hook{ok, func(Context) (Context, error) { return Context{}, errBoom }},
			wantErr: []string{"hooks[1]", "boom"},
			wantIs:  errBoom,
		},
		{
			name:    "a hook that panics with a string",
			hooks:   []Hook{func(Context) (Context, error) { panic("kaput") }},
			wantErr: []string{"hooks[0]", "panicked", "kaput"},
		},
		{
			name:    "a hook that panics with an error",
			hooks:   []Hook{ok, ok, func(Context) (Context, error) { panic(errBoom) }},
			wantErr: []string{"hooks[2]", "panicked", "boom"},
			wantIs:  errBoom,
		},
		{
			name: "a hook that panics at run time",
			hooks: []Hook{func(c Context) (Context, error) {
				c.Command = c.Args[len(c.Args)] // index out of range
				return c, nil
			}},
			wantErr: []string{"hooks[0]", "panicked"},
		},
		{
			name:    "a hook that returns no command",
			hooks:   []Hook{func(c Context) (Context, error) { c.Command = ""; return c, nil }},
			wantErr: []string{"hooks[0]", "no command"},
		},
		{
			name:    "a hook that returns no cwd",
			hooks:   []Hook{ok, func(c Context) (Context, error) { c.Cwd = ""; return c, nil }},
			wantErr: []string{"hooks[1]", "no working directory"},
		},
		{
			name:    "a hook that returns a nil environment",
			hooks:   []Hook{func(c Context) (Context, error) { c.Env = nil; return c, nil }},
			wantErr: []string{"hooks[0]", "no environment"},
		},
		{
			name:    "a hook that returns the zero context",
			hooks:   []Hook{func(Context) (Context, error) { return Context{}, nil }},
			wantErr: []string{"hooks[0]", "no command"},
		},
		{
			name:    "a hook that adds a name the OS cannot carry",
			hooks:   []Hook{func(c Context) (Context, error) { c.Env["A=B"] = "x"; return c, nil }},
			wantErr: []string{"hooks[0]", `"A=B"`},
		},
		{
			name:    "a hook that adds a value the OS cannot carry",
			hooks:   []Hook{func(c Context) (Context, error) { c.Env["X"] = secretAlias + "\x00"; return c, nil }},
			wantErr: []string{"hooks[0]", `"X"`, "NUL"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := DefaultOptions()
			opts.Hooks = tt.hooks
			env := hostEnv()
			maps.Copy(env, tt.env)
			p := newTestPolicy(t, opts, nil, env)
			req := bashRequest()
			if tt.req != nil {
				tt.req(&req)
			}
			got, err := p.Prepare(req)
			if err == nil {
				t.Fatal("Prepare succeeded, want an error")
			}
			msg := err.Error()
			for _, secret := range testSecrets() {
				if strings.Contains(msg, secret) {
					t.Fatalf("the error message contains secret #%d", slices.Index(testSecrets(), secret))
				}
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not contain %q", msg, want)
				}
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.wantIs)
			}
			if diff := cmp.Diff(Context{}, maskedContext(got)); diff != "" {
				t.Errorf("a failed Prepare returned a context (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrepareIsolatesHooksAndCallers(t *testing.T) {
	shared := hostEnv()
	var firstInput Context
	var lastOutput Context
	opts := DefaultOptions()
	opts.Hooks = []Hook{
		func(c Context) (Context, error) {
			firstInput = c
			return c, nil
		},
		func(c Context) (Context, error) {
			// A misbehaving hook that mutates its input in place.
			clear(c.Env)
			c.Env["ONLY"] = "1"
			c.Args[0] = "mutated"
			lastOutput = c
			return c, nil
		},
	}
	p, err := New(opts, nil, func() map[string]string { return shared })
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	req := bashRequest()
	req.Args = []string{"original"}
	got, err := p.Prepare(req)
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	if diff := cmp.Diff(masked(hostEnv()), masked(shared)); diff != "" {
		t.Errorf("Prepare changed the environ snapshot (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"original"}, req.Args); diff != "" {
		t.Errorf("a hook changed the request's args (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(sortedNames(keptByDefault()), sortedNames(firstInput.Env)); diff != "" {
		t.Errorf("a later hook changed an earlier hook's input (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"original"}, firstInput.Args); diff != "" {
		t.Errorf("a later hook changed an earlier hook's args (-want +got):\n%s", diff)
	}
	// The caller owns what Prepare returns: the hook's own map is not it.
	lastOutput.Env["LATE"] = "1"
	lastOutput.Args[0] = "late"
	if diff := cmp.Diff(map[string]string{"ONLY": "1"}, got.Env); diff != "" {
		t.Errorf("the hook still shares the returned env (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"mutated"}, got.Args); diff != "" {
		t.Errorf("the hook still shares the returned args (-want +got):\n%s", diff)
	}
}

func TestNewRefusesInvalidOptions(t *testing.T) {
	opts := DefaultOptions()
	opts.Allow = []string{"TELEGRAM_BOT_TOKEN"}
	p, err := New(opts, slog.New(slog.DiscardHandler), fixedEnviron(hostEnv()))
	if err == nil {
		t.Fatal("New accepted an explicitly denied name in Allow")
	}
	if p != nil {
		t.Error("New returned a policy with its error")
	}
	if !strings.Contains(err.Error(), "TELEGRAM_BOT_TOKEN") {
		t.Errorf("error %q does not name TELEGRAM_BOT_TOKEN", err)
	}
}

func TestNewWithRealEnvironment(t *testing.T) {
	p, err := New(DefaultOptions(), nil, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	got, err := p.Prepare(bashRequest())
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	if got.Env == nil {
		t.Fatal("Env is nil")
	}
	for name := range got.Env {
		if rule, gone := p.rules.removedBy(name, got.Env[name]); gone {
			t.Errorf("%s passed although %q removes it", name, rule)
		}
	}
}
