package main

import (
	"errors"
	"slices"
	"strings"

	"github.com/volcanic/telegram-agent/internal/credproxy"
)

// credentialSettings is CREDENTIAL_HOSTS, AGENT_EGRESS and
// AGENT_EGRESS_ALLOW, checked against the spawn policy's options.
type credentialSettings struct {
	// Credentials are the bindings in force for the variables that are
	// allowed and set, with their real values (trimmed).
	Credentials []credproxy.Credential
	// Egress is AGENT_EGRESS; Allow is AGENT_EGRESS_ALLOW.
	Egress credproxy.Egress
	Allow  []string
	// Named are the hosts the operator wrote (CREDENTIAL_HOSTS and
	// AGENT_EGRESS_ALLOW), which may resolve to private addresses.
	Named []string
	// Clear names the variables passed to agent processes with their
	// real values (redacted) because no binding covers them.
	Clear []string
}

// names returns the bound variables' names.
func (s credentialSettings) names() []string {
	var out []string
	for _, c := range s.Credentials {
		out = append(out, c.Variable)
	}
	return out
}

// parseCredentials reads the credential proxy's settings. A binding in
// CREDENTIAL_HOSTS for a variable PROCESS_ENV_ALLOW does not allow is an
// error naming it; a built-in binding applies to an allowed variable that
// is set. passed are the variables the policy passes on purpose (their
// values redacted): those no binding covers are held in the clear.
func parseCredentials(e Env, c Config, environ map[string]string) (credentialSettings, error) {
	var s credentialSettings
	var errs []error
	configured, err := credproxy.ParseBindings(e.CredentialHosts)
	if err != nil {
		errs = append(errs, err)
	}
	bindings, err := credproxy.Resolve(credproxy.BuiltinBindings(environ), configured,
		c.Policy.Allows,
		func(name string) bool { return strings.TrimSpace(environ[name]) != "" })
	if err != nil {
		errs = append(errs, err)
	}
	for _, b := range bindings {
		s.Credentials = append(s.Credentials, credproxy.Credential{Binding: b, Value: strings.TrimSpace(environ[b.Variable])})
	}
	for _, b := range configured {
		s.Named = append(s.Named, b.Hosts...)
	}
	if s.Egress, err = credproxy.ParseEgress(e.AgentEgress); err != nil {
		errs = append(errs, err)
	}
	if s.Allow, err = credproxy.ParseAllow(e.AgentEgressAllow); err != nil {
		errs = append(errs, err)
	}
	s.Named = append(s.Named, s.Allow...)
	bound := s.names()
	for _, name := range c.Passed {
		if !slices.Contains(bound, name) {
			s.Clear = append(s.Clear, name)
		}
	}
	return s, errors.Join(errs...)
}
