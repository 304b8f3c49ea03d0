package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// DefaultFile is the name of the configuration file in the agent dir when
// MCP_CONFIG names none.
const DefaultFile = "mcp.json"

// Config is the set of MCP servers the agent may use, as loaded from the
// configuration file.
type Config struct {
	// Path is the file the configuration was loaded from ("" when none).
	Path string
	// Servers are the configured servers, sorted by name, disabled ones
	// included.
	Servers []ServerConfig
}

// ServerConfig is one stdio MCP server, with its ${VAR} references already
// expanded.
type ServerConfig struct {
	// Name is the server's key in the configuration file.
	Name string
	// Command is the executable to run.
	Command string
	// Args are its arguments.
	Args []string
	// Env is the server's explicit environment: applied after the spawn
	// policy's filter and never filtered (spec §2).
	Env map[string]string
	// Disabled servers are neither discovered nor started.
	Disabled bool
}

// fileServer is the JSON shape of one server entry.
type fileServer struct {
	Command  *string           `json:"command"`
	Args     []string          `json:"args"`
	Env      map[string]string `json:"env"`
	Disabled bool              `json:"disabled"`
}

// varRef matches a ${VAR} reference.
var varRef = regexp.MustCompile(`\$\{([^}]*)\}`)

// varName is what a referenced variable's name may be.
var varName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Load reads the MCP configuration file at path, in the common
// {"mcpServers": {...}} shape, and expands every ${VAR} in the servers' args
// and env values with lookup (nil means os.LookupEnv). A missing file is an
// empty configuration. An unknown key, a server without a command, a
// variable that is not set or a malformed file is an error naming the file,
// the server and the problem, never a value.
func Load(path string, lookup func(string) (string, bool)) (Config, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Config{}, nil
	}
	if err != nil {
		return Config{}, fmt.Errorf("mcp: reading %s: %w", path, err)
	}
	cfg, err := parseConfig(data, lookup)
	if err != nil {
		return Config{}, fmt.Errorf("mcp: %s: %w", path, err)
	}
	cfg.Path = path
	return cfg, nil
}

// DefaultPath returns where the configuration lives when MCP_CONFIG is empty:
// DefaultFile in the agent dir.
func DefaultPath(agentDir string) string { return filepath.Join(agentDir, DefaultFile) }

// parseConfig decodes and expands a configuration file's content.
func parseConfig(data []byte, lookup func(string) (string, bool)) (Config, error) {
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
	var cfg Config
	var errs []error
	for _, name := range names {
		sc, err := parseServer(name, top.MCPServers[name], lookup)
		if err != nil {
			errs = append(errs, fmt.Errorf("server %q: %w", name, err))
			continue
		}
		cfg.Servers = append(cfg.Servers, sc)
	}
	if err := errors.Join(errs...); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// parseServer decodes one server entry and expands its references.
func parseServer(name string, raw json.RawMessage, lookup func(string) (string, bool)) (ServerConfig, error) {
	if strings.TrimSpace(name) == "" {
		return ServerConfig{}, errors.New("the server name is empty")
	}
	var fsrv fileServer
	if err := decodeStrict(raw, &fsrv); err != nil {
		return ServerConfig{}, err
	}
	if fsrv.Command == nil || strings.TrimSpace(*fsrv.Command) == "" {
		return ServerConfig{}, errors.New("no command")
	}
	sc := ServerConfig{Name: name, Command: *fsrv.Command, Disabled: fsrv.Disabled}
	var errs []error
	for i, a := range fsrv.Args {
		v, err := expand(a, lookup)
		if err != nil {
			errs = append(errs, fmt.Errorf("args[%d]: %w", i, err))
		}
		sc.Args = append(sc.Args, v)
	}
	envNames := make([]string, 0, len(fsrv.Env))
	for k := range fsrv.Env {
		envNames = append(envNames, k)
	}
	slices.Sort(envNames)
	if len(envNames) > 0 {
		sc.Env = make(map[string]string, len(envNames))
	}
	for _, k := range envNames {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			errs = append(errs, fmt.Errorf("env: %q is not a variable name", k))
			continue
		}
		v, err := expand(fsrv.Env[k], lookup)
		if err != nil {
			errs = append(errs, fmt.Errorf("env %s: %w", k, err))
		}
		sc.Env[k] = v
	}
	if err := errors.Join(errs...); err != nil {
		// Only a disabled server may reference variables that are not
		// set: it never runs, and an operator may disable a server whose
		// token is not deployed.
		if !sc.Disabled {
			return ServerConfig{}, err
		}
	}
	return sc, nil
}

// expand replaces every ${VAR} in s with the variable's value. The error
// names the first variable that is not set (names only, never values).
func expand(s string, lookup func(string) (string, bool)) (string, error) {
	var missing []string
	out := varRef.ReplaceAllStringFunc(s, func(ref string) string {
		name := ref[2 : len(ref)-1]
		if !varName.MatchString(name) {
			missing = append(missing, fmt.Sprintf("%q is not a variable reference", ref))
			return ""
		}
		v, ok := lookup(name)
		if !ok {
			missing = append(missing, fmt.Sprintf("variable %s is not set", name))
			return ""
		}
		return v
	})
	if len(missing) > 0 {
		return "", errors.New(strings.Join(missing, "; "))
	}
	return out, nil
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
