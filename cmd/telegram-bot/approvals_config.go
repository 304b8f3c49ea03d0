package main

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/volcanic/telegram-agent/internal/approvals"
)

// approvalSettings is how the bot asks before risky tool calls.
type approvalSettings struct {
	Mode    approvals.Mode
	Timeout time.Duration
	Rules   []*regexp.Regexp
}

// options returns the approvals extension's options.
func (a approvalSettings) options() []approvals.Option {
	return []approvals.Option{approvals.WithMode(a.Mode), approvals.WithTimeout(a.Timeout), approvals.WithRules(a.Rules...)}
}

// parseApprovals reads APPROVAL_MODE, APPROVAL_TIMEOUT and APPROVAL_RULES;
// every problem is reported, joined, naming the variable. Blank values
// mean the defaults.
func parseApprovals(e Env) (approvalSettings, error) {
	var a approvalSettings
	var errs []error
	mode, err := approvals.ParseMode(e.ApprovalMode)
	if err != nil {
		errs = append(errs, fmt.Errorf("APPROVAL_MODE must be off, risky or all, not %q", strings.TrimSpace(e.ApprovalMode)))
	}
	a.Mode = mode
	a.Timeout = approvals.DefaultTimeout
	if s := strings.TrimSpace(e.ApprovalTimeout); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			errs = append(errs, errors.New("APPROVAL_TIMEOUT must be a positive duration such as 10m or 90s"))
		} else {
			a.Timeout = d
		}
	}
	rules, err := approvals.ParseRules(e.ApprovalRules)
	if err != nil {
		errs = append(errs, fmt.Errorf("APPROVAL_RULES: %w", err))
	}
	a.Rules = rules
	return a, errors.Join(errs...)
}

// summary describes the settings in one line, for the doctor.
func (a approvalSettings) summary() string {
	if a.Mode == approvals.ModeOff {
		return "off: tool calls run without asking"
	}
	what := "the commands the built-in rules match"
	if a.Mode == approvals.ModeAll {
		what = "every tool call but read"
	}
	if n := len(a.Rules); n > 0 {
		what += fmt.Sprintf(" and %d operator rule(s)", n)
	}
	return fmt.Sprintf("%s: the chat is asked before %s; no answer within %s denies", a.Mode, what, a.Timeout)
}

// doctorApprovals shows the approval mode, its timeout and the operator's
// rules.
func doctorApprovals(r *report, cfg Config) {
	r.line("\nApprovals")
	r.line("  %s", cfg.Approvals.summary())
	for _, re := range cfg.Approvals.Rules {
		r.line("  operator rule: %s", re)
	}
}
