package spawnpolicy

import (
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/scaletest"
)

// randomName builds a variable name from pieces that the default globs and
// random rules care about, in random case.
func randomName(r *rand.Rand) string {
	pieces := []string{"TOKEN", "KEY", "API", "SECRET", "PASSWORD", "PATH", "HOME", "_", "__", "GH", "X", "APIKEY", "Token", "secret"}
	var b strings.Builder
	for n := 1 + r.Intn(4); n > 0; n-- {
		piece := pieces[r.Intn(len(pieces))]
		if r.Intn(3) == 0 {
			piece = strings.ToLower(piece)
		}
		b.WriteString(piece)
	}
	return b.String()
}

// randomEntry builds a Deny or Allow entry: a name, or a glob with one or
// two stars.
func randomEntry(r *rand.Rand) string {
	name := randomName(r)
	switch r.Intn(4) {
	case 0:
		return "*" + name
	case 1:
		return name + "*"
	case 2:
		return "*" + name[len(name)/2:] + "*" + name[:len(name)/2]
	default:
		return name
	}
}

// referenceKeeps is the filter's precedence spelled out with referenceMatch.
func referenceKeeps(opts Options, name, value string) bool {
	for _, d := range opts.Deny {
		if !isGlob(d) && referenceMatch(d, name) {
			return false
		}
	}
	for _, a := range opts.Allow {
		if referenceMatch(a, name) {
			return true
		}
	}
	for _, d := range opts.Deny {
		if isGlob(d) && referenceMatch(d, name) {
			return false
		}
	}
	return len(value) < MinimumSecretLength || !slices.Contains(opts.SecretValues, value)
}

// TestPrepareProperty checks, for seeded random environments, options and
// explicit variables, that every name Prepare returns is explicitly set or
// kept by the rules, and that every inherited name the rules keep and the
// request does not remove is there with its value.
func TestPrepareProperty(t *testing.T) {
	r := rand.New(rand.NewSource(20260926))
	values := []string{"short", "plain-value-1", "plain-value-2", secretAlias, secretGitHub, "1234567"}
	// The seed stays; reduced (scaletest), the first eighth of its cases run.
	for iteration := range scaletest.N(500) {
		opts := Options{SecretValues: []string{secretAlias, "1234567"}}
		if r.Intn(2) == 0 {
			opts.Deny = defaultDeny()
		}
		for n := r.Intn(4); n > 0; n-- {
			opts.Deny = append(opts.Deny, randomEntry(r))
		}
		for n := r.Intn(3); n > 0; n-- {
			opts.Allow = append(opts.Allow, randomEntry(r))
		}
		if opts.Validate() != nil {
			continue // an explicit name in both lists: New refuses it
		}
		env := map[string]string{}
		for n := r.Intn(30); n > 0; n-- {
			env[randomName(r)] = values[r.Intn(len(values))]
		}
		explicit := map[string]*string{}
		for n := r.Intn(4); n > 0; n-- {
			if r.Intn(3) == 0 {
				explicit[randomName(r)] = nil
			} else {
				explicit[randomName(r)] = ptr(values[r.Intn(len(values))])
			}
		}
		p := newTestPolicy(t, opts, nil, env)
		req := bashRequest()
		req.Env = explicit
		got, err := p.Prepare(req)
		if err != nil {
			t.Fatalf("iteration %d: Prepare: %v", iteration, err)
		}
		for name, value := range got.Env {
			if set, ok := explicit[name]; ok {
				if set == nil || *set != value {
					t.Errorf("iteration %d: %s differs from its explicit setting (%d bytes)", iteration, name, len(value))
				}
				continue
			}
			inherited, ok := env[name]
			if !ok || inherited != value {
				t.Errorf("iteration %d: %s is neither inherited nor explicit", iteration, name)
				continue
			}
			if !referenceKeeps(opts, name, value) {
				t.Errorf("iteration %d: %s passed (value %d bytes) though a rule removes it; deny %q, allow %q", iteration, name, len(value), opts.Deny, opts.Allow)
			}
		}
		for name, value := range env {
			if _, ok := explicit[name]; ok || !referenceKeeps(opts, name, value) {
				continue
			}
			if _, ok := got.Env[name]; !ok {
				t.Errorf("iteration %d: %s was removed though no rule removes it; deny %q, allow %q", iteration, name, opts.Deny, opts.Allow)
			}
		}
	}
}
