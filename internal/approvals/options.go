package approvals

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Mode says which tool calls are asked about (APPROVAL_MODE).
type Mode int

// The modes.
const (
	// ModeRisky asks before the calls the rules match (the default).
	ModeRisky Mode = iota
	// ModeOff asks about nothing.
	ModeOff
	// ModeAll asks before every call but those of the read-only tools,
	// and before the risky ones under their rules.
	ModeAll
)

// String returns the mode as APPROVAL_MODE spells it.
func (m Mode) String() string {
	switch m {
	case ModeOff:
		return "off"
	case ModeAll:
		return "all"
	}
	return "risky"
}

// ParseMode reads APPROVAL_MODE: off, risky or all (any case); empty is
// risky.
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "risky":
		return ModeRisky, nil
	case "off":
		return ModeOff, nil
	case "all":
		return ModeAll, nil
	}
	return ModeRisky, fmt.Errorf("approvals: mode %q: want off, risky or all", s)
}

// DefaultTimeout is how long a call waits for an answer before it is
// denied (APPROVAL_TIMEOUT).
const DefaultTimeout = 10 * time.Minute

// config is what the options set.
type config struct {
	mode     Mode
	timeout  time.Duration
	custom   []customRule
	writable []string
}

// Option configures the extension New builds.
type Option func(*config)

// WithMode sets the mode (default ModeRisky).
func WithMode(m Mode) Option { return func(c *config) { c.mode = m } }

// WithTimeout sets how long a call waits for an answer (default
// DefaultTimeout). Values below or equal to zero are ignored.
func WithTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.timeout = d
		}
	}
}

// WithRules adds the operator's expressions (APPROVAL_RULES, see
// ParseRules): a bash command any of them matches is asked about.
func WithRules(res ...*regexp.Regexp) Option {
	return func(c *config) {
		for _, re := range res {
			if re != nil {
				c.custom = append(c.custom, newCustomRule(re))
			}
		}
	}
}

// WithWritable adds directories that write and edit may change without
// asking, besides the session's workspace (AGENT_SANDBOX_WRITE).
func WithWritable(dirs ...string) Option {
	return func(c *config) { c.writable = append(c.writable, dirs...) }
}
