package sandbox

import (
	"fmt"
	"strings"
)

// Mode is how the bot uses the sandbox (AGENT_SANDBOX).
type Mode int

const (
	// Auto confines the agent's processes where the kernel has Landlock and
	// starts without it (one warning) where it does not.
	Auto Mode = iota
	// Required refuses to start without Landlock.
	Required
	// Off starts processes as they are and leaves the file tools unconfined.
	Off
)

// String returns the mode's name as AGENT_SANDBOX spells it.
func (m Mode) String() string {
	switch m {
	case Auto:
		return "auto"
	case Required:
		return "required"
	case Off:
		return "off"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode reads an AGENT_SANDBOX value: auto, required or off (case and
// surrounding blanks ignored; empty is auto).
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto":
		return Auto, nil
	case "required":
		return Required, nil
	case "off":
		return Off, nil
	}
	return Auto, fmt.Errorf("sandbox: mode %q is not auto, required or off", s)
}
