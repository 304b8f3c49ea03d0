package turnview

// The tool status modes (TOOL_STATUS, and a chat's /verbose).
const (
	// ToolStatusAll shows every tool call of a turn, and the status stays
	// as it ended once the answer is delivered.
	ToolStatusAll = "all"
	// ToolStatusLast shows the running call while the turn runs, and folds
	// the status into one line once the answer is delivered: the default.
	ToolStatusLast = "last"
	// ToolStatusOff shows no status message (/status and /stop still
	// work).
	ToolStatusOff = "off"
)

// ValidToolStatus reports whether mode is a tool status mode.
func ValidToolStatus(mode string) bool {
	switch mode {
	case ToolStatusAll, ToolStatusLast, ToolStatusOff:
		return true
	}
	return false
}
