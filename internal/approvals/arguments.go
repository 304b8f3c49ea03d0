package approvals

import "encoding/json"

// stringArgument returns the string argument name of a call's arguments:
// "" when it is absent or null, and ok false when the arguments are not an
// object or the argument is not a string.
func stringArgument(raw json.RawMessage, name string) (value string, ok bool) {
	var args map[string]json.RawMessage
	if json.Unmarshal(raw, &args) != nil {
		return "", false
	}
	v, present := args[name]
	if !present {
		return "", true
	}
	return value, json.Unmarshal(v, &value) == nil
}
