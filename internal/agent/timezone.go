package agent

import (
	"fmt"
	"time"
)

// resolveZone turns an IANA id into the id the session keeps and its
// location. An empty id, "Local", or an id that does not resolve gives the
// empty id and the host's local zone: children then inherit the host's TZ
// instead of being moved to UTC by a name the system does not know. The
// error says why a non-empty id was not usable.
func resolveZone(id string) (string, *time.Location, error) {
	if id == "" || id == "Local" {
		return "", time.Local, nil
	}
	loc, err := time.LoadLocation(id)
	if err != nil {
		return "", time.Local, fmt.Errorf("agent: time zone %q: %w", id, err)
	}
	return id, loc, nil
}
