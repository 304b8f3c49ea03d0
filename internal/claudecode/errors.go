package claudecode

import (
	"errors"
	"fmt"
	"time"
)

// The kinds of failure a turn names, instead of claude's own output.
var (
	// ErrNotLoggedIn: claude has no valid login for the plan.
	ErrNotLoggedIn = errors.New("claudecode: Claude Code is not logged in: run `telegram-bot claude-login` in the bot's terminal, or set CLAUDE_CODE_OAUTH_TOKEN from `claude setup-token`")
	// ErrCLIMissing: the claude executable was not found.
	ErrCLIMissing = errors.New("claudecode: the Claude Code CLI (claude) is not installed: install @anthropic-ai/claude-code with npm")
	// ErrCLITooOld: claude does not know a flag the provider needs.
	ErrCLITooOld = errors.New("claudecode: the installed Claude Code CLI is too old for the flags the bot uses: install a newer @anthropic-ai/claude-code")
	// ErrUnsafeInit: claude's init event did not show exactly the bridge's
	// tools, the bridge connected and no API key; the turn was aborted.
	ErrUnsafeInit = errors.New("claudecode: Claude Code did not start as required, so the turn was stopped")
	// ErrTurnTimeout: the turn ran longer than the provider allows.
	ErrTurnTimeout = errors.New("claudecode: the Claude Code turn took too long and was stopped")
)

// PlanLimitError reports that the plan's usage limit is reached.
type PlanLimitError struct {
	// Resets is when the limit resets (zero when claude did not say).
	Resets time.Time
	// Window names the limit ("five_hour", "seven_day", ...), when known.
	Window string
}

func (e *PlanLimitError) Error() string {
	if e.Resets.IsZero() {
		return "claudecode: the Claude plan's usage limit is reached"
	}
	return fmt.Sprintf("claudecode: the Claude plan's usage limit is reached; it resets at %s", e.Resets.UTC().Format("Mon 2 Jan 15:04 MST"))
}

// errNoConversation: --resume named a session claude no longer has.
var errNoConversation = errors.New("claudecode: claude no longer has the session")

// errSessionInUse: --session-id named a session claude already has.
var errSessionInUse = errors.New("claudecode: claude already has the session")
