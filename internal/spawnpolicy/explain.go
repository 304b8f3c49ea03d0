package spawnpolicy

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Removal is one inherited variable a child would lose, and why.
type Removal struct {
	// Name is the variable's name. Its value is never reported.
	Name string
	// Rule is the Deny entry that removes it, as configured, or
	// "secret value" when its value holds one of the SecretValues.
	Rule string
}

// Explain returns, for the environment the policy sees now, each variable
// a child would lose and the rule that removes it, sorted by name; nil when
// nothing would be removed. It reports names only, never values, and knows
// nothing of a request's explicit variables or of the hooks.
func (p *Policy) Explain() []Removal {
	var out []Removal
	for name, value := range p.environ() {
		if rule, gone := p.rules.removedBy(name, value); gone {
			out = append(out, Removal{Name: name, Rule: rule})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return cmp.Or(cmp.Compare(out[i].Name, out[j].Name), cmp.Compare(out[i].Rule, out[j].Rule)) < 0
	})
	return out
}

// DenyCount returns the number of Deny entries the policy was built with.
func (p *Policy) DenyCount() int {
	return p.denyCount
}

// AllowNames returns a copy of the Allow entries the policy was built with,
// in their configured order.
func (p *Policy) AllowNames() []string {
	return slices.Clone(p.allow)
}

// Summary returns the start-up log line, names only:
// "Process environment: <n> deny rules, allow: <names>", with "none" when
// nothing is allowed.
func (p *Policy) Summary() string {
	allow := "none"
	if len(p.allow) > 0 {
		allow = strings.Join(p.allow, ", ")
	}
	return fmt.Sprintf("Process environment: %d deny rules, allow: %s", p.denyCount, allow)
}
