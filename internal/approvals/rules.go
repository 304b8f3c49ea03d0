package approvals

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Rule is a reason to ask before a tool call runs. Its ID is what a chat's
// "Always in this chat" decision is kept under, so it never changes for a
// built-in rule.
type Rule struct {
	ID          string
	Description string
}

// The built-in rules' IDs.
const (
	RuleRecursiveDelete  = "recursive-delete"
	RuleGitForcePush     = "git-force-push"
	RuleGitResetHard     = "git-reset-hard"
	RuleGitClean         = "git-clean"
	RuleDD               = "dd"
	RuleMkfs             = "mkfs"
	RuleRecursiveChmod   = "recursive-chmod"
	RuleDownloadToShell  = "download-to-shell"
	RuleSudo             = "sudo"
	RuleKill             = "kill"
	RuleProcessControl   = "process-control"
	RuleShutdown         = "shutdown"
	RuleDeviceWrite      = "device-write"
	RuleSQLDrop          = "sql-drop"
	RulePackageRemoval   = "package-removal"
	RuleComputedCommand  = "computed-command"
	RuleUnparsable       = "unparsable"
	RuleWriteOutsideView = "write-outside-workspace"
)

// Prefixes of the IDs of rules that are not built in.
const (
	// customPrefix starts the ID of an operator's rule (APPROVAL_RULES):
	// the prefix and the regular expression itself, so that a decision
	// stays with its expression when the list is reordered.
	customPrefix = "custom:"
	// toolPrefix starts the ID of the rule APPROVAL_MODE=all adds for
	// every call of one tool.
	toolPrefix = "tool:"
)

// builtinRules describes the built-in rules, in the order they are listed.
var builtinRules = []Rule{
	{RuleRecursiveDelete, "a recursive delete (rm -r, find -delete, rsync --delete)"},
	{RuleGitForcePush, "a forced git push (--force, -f, --force-with-lease, +ref, --mirror)"},
	{RuleGitResetHard, "git reset --hard"},
	{RuleGitClean, "git clean (removes untracked files)"},
	{RuleDD, "dd writing to a file or device"},
	{RuleMkfs, "formatting a disk (mkfs, mkswap, wipefs)"},
	{RuleRecursiveChmod, "a recursive chmod, chown or chgrp"},
	{RuleDownloadToShell, "a download run as a script (curl | sh)"},
	{RuleSudo, "running as another user (sudo, doas, su, runuser, sg, pkexec)"},
	{RuleKill, "sending a signal to processes (kill, pkill, killall)"},
	{RuleProcessControl, "changing another process's limits, scheduling, CPUs or I/O priority, or attaching to it (prlimit --pid, renice, chrt -p, taskset -p, ionice -p, strace -p)"},
	{RuleShutdown, "shutting down or rebooting the machine"},
	{RuleDeviceWrite, "writing to a device under /dev"},
	{RuleSQLDrop, "DROP or TRUNCATE in a SQL client"},
	{RulePackageRemoval, "removing installed packages"},
	{RuleComputedCommand, "a command or script computed only when it runs (eval, sh -c \"$x\", $cmd, a script from a pipe)"},
	{RuleUnparsable, "a command the shell parser cannot read"},
	{RuleWriteOutsideView, "writing a file outside the workspace"},
}

// BuiltinRules returns the built-in rules, for listings.
func BuiltinRules() []Rule { return append([]Rule(nil), builtinRules...) }

// Describe returns the rule with the given ID, described for the chat: a
// built-in rule, an operator's expression or a tool in APPROVAL_MODE=all.
// An ID it does not know (a rule removed since a decision was kept) is
// described as such.
func Describe(id string) Rule {
	for _, r := range builtinRules {
		if r.ID == id {
			return r
		}
	}
	switch {
	case strings.HasPrefix(id, customPrefix):
		return Rule{id, "the operator's rule " + strings.TrimPrefix(id, customPrefix)}
	case strings.HasPrefix(id, toolPrefix):
		return Rule{id, "every " + strings.TrimPrefix(id, toolPrefix) + " call"}
	}
	return Rule{id, "a rule this version does not know (" + id + ")"}
}

// customRule is an operator's expression and its rule.
type customRule struct {
	re   *regexp.Regexp
	rule Rule
}

// newCustomRule wraps re as a rule.
func newCustomRule(re *regexp.Regexp) customRule {
	return customRule{re: re, rule: Describe(customPrefix + re.String())}
}

// ParseRules reads APPROVAL_RULES: regular expressions (Go's syntax)
// separated by commas. A comma inside brackets, braces or parentheses
// belongs to its expression ("a{1,3}"), and "\," is a literal comma. Blank
// entries are skipped; every expression that does not compile is reported,
// joined.
func ParseRules(s string) ([]*regexp.Regexp, error) {
	var res []*regexp.Regexp
	var errs []error
	for _, expr := range splitRules(s) {
		expr = strings.TrimSpace(expr)
		if expr == "" {
			continue
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			errs = append(errs, fmt.Errorf("approvals: rule %q: %w", expr, err))
			continue
		}
		res = append(res, re)
	}
	return res, errors.Join(errs...)
}

// splitRules splits s at the commas outside brackets, braces and
// parentheses that no backslash escapes.
func splitRules(s string) []string {
	var parts []string
	depth, start := 0, 0
	inClass := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			i++ // the escaped byte is never a separator
		case inClass:
			if c == ']' {
				inClass = false
			}
		case c == '[':
			inClass = true
		case c == '(' || c == '{':
			depth++
		case (c == ')' || c == '}') && depth > 0:
			depth--
		case c == ',' && depth == 0:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}
