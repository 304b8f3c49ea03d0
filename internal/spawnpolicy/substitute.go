package spawnpolicy

import (
	"fmt"
	"maps"
	"slices"
)

// validateSubstitutes reports the problems of StandIns, Withhold and
// Extra: a name or value the OS cannot carry, a glob in Withhold, and a
// stand-in or extra value that holds one of SecretValues (it would hand a
// secret to every child, or be redacted from what the agent sees). Errors
// name variables, never values.
func (o Options) validateSubstitutes() []error {
	var problems []error
	secrets := compileRules(Options{SecretValues: o.SecretValues})
	for _, list := range []struct {
		what string
		m    map[string]string
	}{{"stand-ins", o.StandIns}, {"extra", o.Extra}} {
		for _, name := range slices.Sorted(maps.Keys(list.m)) {
			v := list.m[name]
			if err := checkName(name); err != nil {
				problems = append(problems, fmt.Errorf("spawnpolicy: %s: %w", list.what, err))
				continue
			}
			if err := checkValue(name, v); err != nil {
				problems = append(problems, fmt.Errorf("spawnpolicy: %s: %w", list.what, err))
			}
			if secrets.holdsSecret(v) {
				problems = append(problems, fmt.Errorf("spawnpolicy: %s: the value for %s holds a secret value", list.what, name))
			}
		}
	}
	for i, name := range o.Withhold {
		if err := checkName(name); err != nil || isGlob(name) {
			problems = append(problems, fmt.Errorf("spawnpolicy: withhold entry %d (%q) is not a variable name", i, name))
		}
	}
	return problems
}

// substitute gives env, the filtered inherited environment, the stand-ins
// of the variables it kept and then the extra variables.
func substitute(env map[string]string, standIns, extra map[string]string) {
	for name, v := range standIns {
		if _, kept := env[name]; kept {
			env[name] = v
		}
	}
	for name, v := range extra {
		setVar(env, name, v, foldNames)
	}
}

// Lookup returns the value an agent process gets for the variable name
// from the environment the policy sees now, before a request's own
// variables and the hooks: nothing when the rules remove it, its stand-in
// when it has one, the extra value when Options.Extra sets it, else the
// inherited value. It is the view to expand ${VAR} with for what agent
// processes start with (an MCP server's env), so that a bound credential
// goes there as its stand-in too, never real.
func (p *Policy) Lookup(name string) (string, bool) {
	if v, ok := p.extra[name]; ok {
		return v, true
	}
	v, ok := p.environ()[name]
	if !ok {
		return "", false
	}
	if _, gone := p.rules.removedBy(name, v); gone {
		return "", false
	}
	if s, ok := p.standIns[name]; ok {
		return s, true
	}
	return v, true
}

// StandInNames returns, sorted, the variables that reach agent processes
// as stand-ins.
func (p *Policy) StandInNames() []string {
	return slices.Sorted(maps.Keys(p.standIns))
}

// Allows reports whether Allow names the variable name (by name or glob)
// and neither Withhold nor an explicit Deny name removes it: a variable
// the host means agent processes to have, for which it may configure a
// stand-in. The options must be valid.
func (o Options) Allows(name string) bool {
	for _, w := range o.Withhold {
		if equalFold(w, name) {
			return false
		}
	}
	for _, d := range o.Deny {
		if !isGlob(d) && equalFold(d, name) {
			return false
		}
	}
	for _, a := range o.Allow {
		if p := compilePattern(a); p.match(name) {
			return true
		}
	}
	return false
}
