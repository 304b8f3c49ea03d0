package credproxy

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// Binding ties an environment variable holding a credential to the hosts
// it is for: the proxy puts its real value in requests to those hosts
// alone.
type Binding struct {
	// Variable is the variable's name.
	Variable string
	// Hosts are host names, lower case, or "*.domain" globs.
	Hosts []string
	// Builtin reports a built-in binding, not one CREDENTIAL_HOSTS made.
	Builtin bool
}

// String returns the binding as CREDENTIAL_HOSTS writes it.
func (b Binding) String() string { return b.Variable + "=" + strings.Join(b.Hosts, ",") }

// github are the hosts a github.com token is sent to: the API, git over
// HTTPS, uploads of release assets, and raw files of private repositories.
var github = []string{"api.github.com", "github.com", "uploads.github.com", "raw.githubusercontent.com"}

// BuiltinBindings returns the bindings of the well-known credential
// variables, sorted by name: GH_TOKEN and GITHUB_TOKEN to github.com's
// hosts, GH_ENTERPRISE_TOKEN and GITHUB_ENTERPRISE_TOKEN to GH_HOST (and
// its api. name) when environ sets it, NPM_TOKEN and NODE_AUTH_TOKEN to
// npm's registry, HF_TOKEN and HUGGING_FACE_HUB_TOKEN to huggingface.co,
// GITLAB_TOKEN to gitlab.com, CARGO_REGISTRY_TOKEN to crates.io,
// TWINE_PASSWORD to PyPI's upload host, SLACK_BOT_TOKEN to slack.com and
// LINEAR_API_KEY to api.linear.app. CREDENTIAL_HOSTS overrides any of them.
func BuiltinBindings(environ map[string]string) []Binding {
	m := map[string][]string{
		"GH_TOKEN":               github,
		"GITHUB_TOKEN":           github,
		"NPM_TOKEN":              {"registry.npmjs.org"},
		"NODE_AUTH_TOKEN":        {"registry.npmjs.org"},
		"HF_TOKEN":               {"huggingface.co"},
		"HUGGING_FACE_HUB_TOKEN": {"huggingface.co"},
		"GITLAB_TOKEN":           {"gitlab.com"},
		"CARGO_REGISTRY_TOKEN":   {"crates.io"},
		"TWINE_PASSWORD":         {"upload.pypi.org"},
		"SLACK_BOT_TOKEN":        {"slack.com"},
		"LINEAR_API_KEY":         {"api.linear.app"},
	}
	if h, err := parseHost(normalHost(environ["GH_HOST"]), false); err == nil && !strings.HasPrefix(h, "*") {
		hosts := []string{h}
		if !strings.HasPrefix(h, "api.") {
			hosts = append(hosts, "api."+h)
		}
		m["GH_ENTERPRISE_TOKEN"] = hosts
		m["GITHUB_ENTERPRISE_TOKEN"] = hosts
	}
	var out []Binding
	for _, name := range slices.Sorted(maps.Keys(m)) {
		out = append(out, Binding{Variable: name, Hosts: slices.Clone(m[name]), Builtin: true})
	}
	return out
}

// ParseBindings reads CREDENTIAL_HOSTS: bindings separated by ";", each a
// variable name, "=", and a comma-separated host list, as in
// "GH_TOKEN=api.github.com,github.com;NPM_TOKEN=registry.npmjs.org". A
// host may be a glob "*.example.com"; a bare "*", a port, an IP address or
// a variable bound twice is an error. Every problem is reported, naming
// the variable and the host, and nothing else (the list holds no values).
func ParseBindings(spec string) ([]Binding, error) {
	var out []Binding
	var errs []error
	for part := range strings.SplitSeq(spec, ";") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		name, list, ok := strings.Cut(part, "=")
		name = strings.TrimSpace(name)
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("CREDENTIAL_HOSTS: %q is not VARIABLE=host,host", strings.TrimSpace(part)))
			continue
		case !validName(name):
			errs = append(errs, fmt.Errorf("CREDENTIAL_HOSTS: %q is not a variable name", name))
			continue
		case slices.ContainsFunc(out, func(b Binding) bool { return b.Variable == name }):
			errs = append(errs, fmt.Errorf("CREDENTIAL_HOSTS: %s is bound twice; list all its hosts in one binding", name))
			continue
		}
		hosts, err := parseHostList("CREDENTIAL_HOSTS: "+name, list, false)
		if err != nil {
			errs = append(errs, err)
		}
		if len(hosts) == 0 && err == nil {
			errs = append(errs, fmt.Errorf("CREDENTIAL_HOSTS: %s has no hosts", name))
		}
		if len(hosts) > 0 {
			out = append(out, Binding{Variable: name, Hosts: hosts})
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// Resolve returns the bindings in force, sorted by variable: configured
// (from [ParseBindings]) and, for every variable configured does not bind,
// the built-in one (builtin, from [BuiltinBindings]) when allowed reports
// the variable may reach agent processes and set reports it has a value.
// A configured binding for a variable allowed refuses is an error naming
// it: agent processes never get that variable, so a binding would only
// hide the mistake.
func Resolve(builtin, configured []Binding, allowed, set func(name string) bool) ([]Binding, error) {
	var out []Binding
	var errs []error
	for _, b := range configured {
		if !allowed(b.Variable) {
			errs = append(errs, fmt.Errorf("CREDENTIAL_HOSTS: %s is not allowed (PROCESS_ENV_ALLOW), so agent processes never get it; allow it or remove its binding", b.Variable))
			continue
		}
		if set(b.Variable) {
			out = append(out, b)
		}
	}
	for _, b := range builtin {
		if slices.ContainsFunc(configured, func(c Binding) bool { return c.Variable == b.Variable }) {
			continue
		}
		if allowed(b.Variable) && set(b.Variable) {
			out = append(out, b)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Variable < out[j].Variable })
	return out, errors.Join(errs...)
}

// validName reports whether name can be an environment variable's name.
func validName(name string) bool {
	if name == "" || (name[0] >= '0' && name[0] <= '9') {
		return false
	}
	for _, r := range name {
		if r != '_' && (r < '0' || r > '9') && (r < 'A' || r > 'Z') && (r < 'a' || r > 'z') {
			return false
		}
	}
	return true
}
