package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/sandbox"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// ErrUntrusted is wrapped by the error Load returns for a configuration
// file the bot's own user could modify or replace.
var ErrUntrusted = errors.New("refusing an MCP configuration file")

// DefaultFile is the name of the configuration file that once lived in the
// agent dir by default. Nothing reads it there any more (the bot's user
// owns that directory, so the file was always refused); the bot warns of
// one it finds.
const DefaultFile = "mcp.json"

// InlineSource is how errors and warnings name a configuration given inline:
// the JSON itself in the MCP_CONFIG variable.
const InlineSource = "MCP_CONFIG"

// Config is the set of MCP servers the agent may use, as loaded from the
// configuration file or the inline JSON.
type Config struct {
	// Path is the file the configuration was loaded from ("" when it was
	// inline or there was none).
	Path string
	// Inline reports that the configuration was the JSON of MCP_CONFIG
	// itself.
	Inline bool
	// Servers are the configured servers, sorted by name, disabled ones
	// included.
	Servers []ServerConfig
	// Secrets are the values ${VAR} expansion filled in (at least
	// MinimumSecretLength bytes, sorted, without duplicates). The caller
	// adds them to the spawn policy's SecretValues and to the redactor: a
	// value passed on purpose to one server is readable by the agent
	// through that server's /proc entries, so it is redacted everywhere.
	Secrets []string
	// Warnings are problems that do not stop start-up (an argument that
	// expands a variable, a trust check that could not be made). They name
	// sources, servers and variables, never values; the caller logs them.
	Warnings []string
}

// MinimumSecretLength is the shortest value Load treats as a secret: the
// redactor's own minimum, so that the two never disagree.
const MinimumSecretLength = redactor.MinimumSecretLength

// ServerConfig is one MCP server, a stdio command or a Streamable HTTP
// url, with its ${VAR} references already expanded.
type ServerConfig struct {
	// Name is the server's key in the configuration file.
	Name string
	// Command is the executable to run ("" for a Streamable HTTP server).
	Command string
	// Args are its arguments.
	Args []string
	// Env is the server's explicit environment: applied after the spawn
	// policy's filter and never filtered.
	Env map[string]string
	// URL is the endpoint of a Streamable HTTP server ("" for a stdio
	// server).
	URL string
	// Headers are sent with every request to URL, and only to its origin;
	// names are in canonical form.
	Headers map[string]string
	// Disabled servers are neither discovered nor started.
	Disabled bool
	// Sandbox adds paths to this server's sandbox view (its entry's
	// "sandbox": {"read": [...], "write": [...]}, absolute paths).
	Sandbox sandbox.Paths
}

// fileServer is the JSON shape of one server entry.
type fileServer struct {
	Command  *string           `json:"command"`
	Args     []string          `json:"args"`
	Env      map[string]string `json:"env"`
	URL      *string           `json:"url"`
	Headers  map[string]string `json:"headers"`
	Disabled bool              `json:"disabled"`
	Sandbox  sandbox.Paths     `json:"sandbox"`
}

// varRef matches a ${VAR} reference.
var varRef = regexp.MustCompile(`\$\{([^}]*)\}`)

// varName is what a referenced variable's name may be.
var varName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// trustCheck decides whether the configuration file at path may be
// trusted: it returns warnings, or an error when the file must be refused
// (one wrapping fs.ErrNotExist when the file does not exist).
type trustCheck func(path string) ([]string, error)

// Load reads the MCP configuration in the common {"mcpServers": {...}}
// shape from source: inline JSON when source starts with "{" (leading
// blanks aside), otherwise the path of a file. It expands every ${VAR} in
// the servers' args and env values, and in the url and headers values of a
// Streamable HTTP server, with lookup (nil means os.LookupEnv).
//
// An empty source or a missing file is an empty configuration. A file the
// current process's user could modify or replace (the file itself or any
// directory on the way to it, symbolic links followed) is refused: the
// agent runs as that user and could rewrite it. When the process runs as
// root the check cannot be made and is skipped with a warning.
//
// A ${VAR} whose value holds one of secrets (the host's own secret values;
// values shorter than MinimumSecretLength are ignored, and each is looked
// for as it is and trimmed, in every form the redactor knows: base64 of a
// credentials file, a run of its bytes), or a value whose ${VAR}s hold one
// together (each too little of it to be known), is an error: the host's credentials are never
// handed to an MCP server. An unknown key, a server with neither a command
// nor a url or with both, a variable that is not set or malformed JSON is an
// error too. Errors name the file (or InlineSource), the server and the
// problem, never a value. Config.Secrets lists the values expansion filled
// in, the credentials headers hold and those written literally into args
// and env (see envCredentials), and Config.Warnings names every
// argument that expands a variable (arguments are readable by every process
// of the same user).
func Load(source string, lookup func(string) (string, bool), secrets []string) (Config, error) {
	host := make([]HostSecret, len(secrets))
	for i, s := range secrets {
		host[i] = HostSecret{Value: s}
	}
	return LoadHostSecrets(source, lookup, host)
}

// HostSecret is one of the host's own secret values and where it came
// from, which a refusal names (never the value): "TELEGRAM_BOT_TOKEN",
// "PROCESS_ENV_SECRETS (DB_PASSWORD)". A variable PROCESS_ENV_ALLOW lets
// through to the agent's processes is not one: agent processes get it
// anyway, so a server may too.
type HostSecret struct {
	Value string
	// Source names where Value came from; "" says only "one of the
	// host's own secrets".
	Source string
}

// LoadHostSecrets is [Load] with each secret's source, so that a refusal
// names which of the host's secrets a ${VAR} holds.
func LoadHostSecrets(source string, lookup func(string) (string, bool), secrets []HostSecret) (Config, error) {
	return load(source, lookup, secrets, checkTrust)
}

// load is Load with the file trust check as a parameter.
func load(source string, lookup func(string) (string, bool), secrets []HostSecret, trust trustCheck) (Config, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	trimmed := strings.TrimSpace(source)
	if trimmed == "" {
		return Config{}, nil
	}
	if strings.HasPrefix(trimmed, "{") {
		cfg, err := parseConfig([]byte(trimmed), InlineSource, lookup, secrets)
		if err != nil {
			return Config{}, fmt.Errorf("mcp: %s: %w", InlineSource, err)
		}
		cfg.Inline = true
		return cfg, nil
	}
	path := source
	warnings, err := trust(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Config{}, nil
	}
	if err != nil {
		return Config{}, fmt.Errorf("mcp: %s: %w", path, err)
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Config{}, nil
	}
	if err != nil {
		return Config{}, fmt.Errorf("mcp: reading %s: %w", path, err)
	}
	cfg, err := parseConfig(data, path, lookup, secrets)
	if err != nil {
		return Config{}, fmt.Errorf("mcp: %s: %w", path, err)
	}
	cfg.Path = path
	cfg.Warnings = append(warnings, cfg.Warnings...)
	return cfg, nil
}

// parseConfig decodes and expands a configuration's content; source names
// it in warnings.
func parseConfig(data []byte, source string, lookup func(string) (string, bool), secrets []HostSecret) (Config, error) {
	var top struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := decodeStrict(data, &top); err != nil {
		return Config{}, err
	}
	names := make([]string, 0, len(top.MCPServers))
	for name := range top.MCPServers {
		names = append(names, name)
	}
	slices.Sort(names)
	x := newExpander(lookup, secrets)
	var cfg Config
	var errs []error
	for _, name := range names {
		sc, warnings, err := parseServer(name, top.MCPServers[name], x)
		for _, w := range warnings {
			cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("mcp: %s: server %q: %s", source, name, w))
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("server %q: %w", name, err))
			continue
		}
		cfg.Servers = append(cfg.Servers, sc)
	}
	if err := errors.Join(errs...); err != nil {
		return Config{}, err
	}
	cfg.Secrets = x.filledIn()
	return cfg, nil
}

// parseServer decodes one server entry and expands its references. It
// returns the server, warnings about it and its problems.
func parseServer(name string, raw json.RawMessage, x *expander) (ServerConfig, []string, error) {
	if strings.TrimSpace(name) == "" {
		return ServerConfig{}, nil, errors.New("the server name is empty")
	}
	var fsrv fileServer
	if err := decodeStrict(raw, &fsrv); err != nil {
		return ServerConfig{}, nil, err
	}
	if err := checkTransport(fsrv); err != nil {
		return ServerConfig{}, nil, err
	}
	if fsrv.URL != nil {
		return parseRemote(name, fsrv, x)
	}
	if fsrv.Command == nil || strings.TrimSpace(*fsrv.Command) == "" {
		return ServerConfig{}, nil, errors.New(`no command: set "command" (a stdio server) or "url" (a Streamable HTTP server)`)
	}
	sc := ServerConfig{Name: name, Command: *fsrv.Command, Disabled: fsrv.Disabled, Sandbox: fsrv.Sandbox}
	var errs, refused []error
	for _, p := range append(slices.Clone(fsrv.Sandbox.Read), fsrv.Sandbox.Write...) {
		if !filepath.IsAbs(p) {
			errs = append(errs, fmt.Errorf("sandbox: %q is not an absolute path", p))
		}
	}
	var warnings []string
	for i, a := range fsrv.Args {
		v, names, err := x.expand(a)
		if errors.Is(err, errHostSecret) {
			refused = append(refused, fmt.Errorf("args[%d]: %w", i, err))
		} else if err != nil {
			errs = append(errs, fmt.Errorf("args[%d]: %w", i, err))
		}
		if len(names) > 0 && !sc.Disabled {
			warnings = append(warnings, fmt.Sprintf("args[%d] expands %s: a process's arguments are readable by every process of the bot's user in /proc/<pid>/cmdline; pass the value through \"env\" instead",
				i, strings.Join(names, ", ")))
		}
		if len(names) == 0 && err == nil {
			// A credential written into the arguments is as readable as
			// an expanded one, and no redactor knows it unless it is
			// remembered.
			var prev string
			if i > 0 {
				prev = fsrv.Args[i-1]
			}
			if creds := argCredentials(prev, v); len(creds) > 0 {
				for _, c := range creds {
					x.remember(c)
				}
				if !sc.Disabled {
					warnings = append(warnings, fmt.Sprintf("args[%d] holds a credential written in the configuration: a process's arguments are readable by every process of the bot's user in /proc/<pid>/cmdline; pass it through \"env\" with ${VAR} instead", i))
				}
			}
		}
		sc.Args = append(sc.Args, v)
	}
	envNames := slices.Sorted(maps.Keys(fsrv.Env))
	if len(envNames) > 0 {
		sc.Env = make(map[string]string, len(envNames))
	}
	for _, k := range envNames {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			errs = append(errs, fmt.Errorf("env: %q is not a variable name", k))
			continue
		}
		v, names, err := x.expand(fsrv.Env[k])
		if errors.Is(err, errHostSecret) {
			refused = append(refused, fmt.Errorf("env %s: %w", k, err))
		} else if err != nil {
			errs = append(errs, fmt.Errorf("env %s: %w", k, err))
		}
		if len(names) == 0 && err == nil {
			// A credential written into the configuration is no secret a
			// redactor knows unless it is remembered, and the server may
			// print it (an HTTP client's error quoting its headers).
			for _, c := range envCredentials(v) {
				x.remember(c)
			}
		}
		sc.Env[k] = v
	}
	// A host secret is refused even for a disabled server: no
	// configuration may name one.
	if err := errors.Join(refused...); err != nil {
		return ServerConfig{}, warnings, errors.Join(err, errors.Join(errs...))
	}
	if err := errors.Join(errs...); err != nil {
		// Only a disabled server may reference variables that are not
		// set: it never runs, and an operator may disable a server whose
		// token is not deployed.
		if !sc.Disabled {
			return ServerConfig{}, warnings, err
		}
	}
	return sc, warnings, nil
}

// decodeStrict decodes one JSON value into v, rejecting unknown keys and
// trailing data.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	if dec.More() {
		return errors.New("invalid JSON: unexpected data after the object")
	}
	return nil
}

// argCredentials returns the credentials a literal argument arg carries:
// the value of a credential option (--api-key=..., --token=...), arg itself
// after such an option written alone (prev), and the password and
// token-like query values of a URL. An option that names a file
// (--token-file, --key-path) and a value that is a path are not
// credentials: the file holds it, and the agent's view decides who reads
// that.
func argCredentials(prev, arg string) []string {
	out := spawnpolicy.URLCredentials(arg)
	if name, value, ok := strings.Cut(arg, "="); ok && credentialOption(name) && !isPath(value) {
		out = append(out, value)
	} else if !strings.Contains(prev, "=") && credentialOption(prev) && !strings.HasPrefix(arg, "-") && !isPath(arg) {
		out = append(out, arg)
	}
	return slices.DeleteFunc(out, func(v string) bool { return len(v) < MinimumSecretLength })
}

// envCredentials returns the credentials a literal env value carries,
// whatever its name (the spawn policy's deny rules judge names, and the
// bot counts the values of the names they match as secrets): a value
// written as an authorization header's ("Bearer <token>", "Basic ...":
// the whole value and the token alone), the password and token-like query
// values of a URL, and in a value that is a JSON object (headers, as
// OPENAPI_MCP_HEADERS holds them) every string under a key that says it is
// a credential, at any depth, and every URL's.
func envCredentials(value string) []string {
	var out []string
	add := func(v string) {
		out = append(out, v)
		if scheme, cred, ok := strings.Cut(strings.TrimSpace(v), " "); ok && authScheme(scheme) {
			out = append(out, strings.TrimSpace(cred))
		}
	}
	if scheme, _, ok := strings.Cut(strings.TrimSpace(value), " "); ok && authScheme(scheme) {
		add(value)
	}
	out = append(out, spawnpolicy.URLCredentials(value)...)
	var doc any
	if strings.HasPrefix(strings.TrimSpace(value), "{") && json.Unmarshal([]byte(value), &doc) == nil {
		jsonCredentials(doc, false, add)
	}
	return slices.DeleteFunc(out, func(v string) bool { return len(v) < MinimumSecretLength })
}

// authScheme reports whether word is an HTTP authorization scheme that a
// credential follows.
func authScheme(word string) bool {
	switch strings.ToLower(word) {
	case "bearer", "basic", "token", "bot", "apikey", "api-key", "digest":
		return true
	}
	return false
}

// jsonCredentials passes to add every string of doc that lies under a key
// credentialHeader accepts (under is true below one), and the credentials
// of every URL in it.
func jsonCredentials(doc any, under bool, add func(string)) {
	switch d := doc.(type) {
	case string:
		if under {
			add(d)
		}
		for _, c := range spawnpolicy.URLCredentials(d) {
			add(c)
		}
	case []any:
		for _, e := range d {
			jsonCredentials(e, under, add)
		}
	case map[string]any:
		for k, e := range d {
			jsonCredentials(e, under || credentialHeader(k), add)
		}
	}
}

// envName matches a variable's name, as in an argument NAME=value that a
// wrapper such as env sets.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// credentialOption reports whether opt is a command-line option (or a
// variable an env wrapper sets, API_KEY=...) whose value is a credential:
// its name says so, as a credential header's does, and does not say that
// the value names a file.
func credentialOption(opt string) bool {
	name := strings.ToLower(strings.TrimLeft(opt, "-"))
	if (!strings.HasPrefix(opt, "-") && !envName.MatchString(opt)) || name == "" {
		return false
	}
	for _, w := range []string{"file", "path", "dir"} {
		if strings.Contains(name, w) {
			return false
		}
	}
	return credentialHeader(name)
}

// isPath reports whether v is written as a file path.
func isPath(v string) bool {
	return strings.HasPrefix(v, "/") || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") || strings.HasPrefix(v, "~/")
}
