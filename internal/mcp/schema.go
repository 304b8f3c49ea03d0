package mcp

import (
	"encoding/json"
	"fmt"
)

// toolSchema turns a server's input schema into the tool's parameter schema.
// The agent checks arguments against a subset of JSON Schema (type,
// properties, required, enum, additionalProperties, items) and skips, with
// a warning at start-up, the keywords of that subset it cannot read. So
// they are normalised here to the forms it reads (a keyword in another form
// is dropped, and only checks the server itself makes are lost), which
// keeps the model's view of the schema well-formed and the log quiet; every
// other keyword is passed on to the model untouched. The top level is
// always an object schema.
func toolSchema(in any) (json.RawMessage, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("encoding the input schema: %w", err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("decoding the input schema: %w", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		m = map[string]any{}
	}
	m = normalizeSchema(m)
	if _, ok := m["type"]; !ok {
		m["type"] = "object"
	}
	if _, ok := m["properties"]; !ok {
		m["properties"] = map[string]any{}
	}
	out, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encoding the input schema: %w", err)
	}
	return out, nil
}

// normalizeSchema returns m with the keywords the agent checks in the forms
// it reads, recursively through properties and items.
func normalizeSchema(m map[string]any) map[string]any {
	if t, ok := m["type"]; ok && !isTypeValue(t) {
		delete(m, "type")
	}
	if r, ok := m["required"]; ok && !isStringArray(r) {
		delete(m, "required")
	}
	if e, ok := m["enum"]; ok {
		if _, isArray := e.([]any); !isArray {
			delete(m, "enum")
		}
	}
	if p, ok := m["properties"]; ok {
		props, isObject := p.(map[string]any)
		if !isObject {
			delete(m, "properties")
		} else {
			for name, ps := range props {
				props[name] = subSchema(ps)
			}
		}
	}
	if it, ok := m["items"]; ok {
		if items, isObject := it.(map[string]any); isObject {
			m["items"] = normalizeSchema(items)
		} else {
			delete(m, "items")
		}
	}
	return m
}

// subSchema normalises a nested schema; a boolean schema (true, false) or
// anything else that is not an object becomes the empty schema.
func subSchema(v any) map[string]any {
	if m, ok := v.(map[string]any); ok {
		return normalizeSchema(m)
	}
	return map[string]any{}
}

// isTypeValue reports whether t is a type name or a list of them.
func isTypeValue(t any) bool {
	switch t := t.(type) {
	case string:
		return true
	case []any:
		return isStringArray(t)
	}
	return false
}

// isStringArray reports whether v is a JSON array of strings.
func isStringArray(v any) bool {
	a, ok := v.([]any)
	if !ok {
		return false
	}
	for _, e := range a {
		if _, ok := e.(string); !ok {
			return false
		}
	}
	return true
}
