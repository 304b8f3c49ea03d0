package agent

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// schema is the subset of JSON Schema the loop checks tool arguments
// against: type, properties, required, enum, additionalProperties: false,
// items (one schema) and the boolean schemas true and false. Other keywords
// are left to the model.
type schema struct {
	types      []string
	properties map[string]*schema
	required   []string
	enum       []any
	noExtra    bool
	items      *schema
	// never is the schema false: no value is valid.
	never bool
}

// parseSchema parses a tool's parameter schema. An empty one accepts any
// object. A keyword of the subset in a form the loop cannot read (a type
// that is not a name or a list of names, items as a list, ...) is skipped,
// and so is one the loop does not follow ($ref, anyOf, ...): what it would
// check is not checked. Each skip is described in the returned notes. Only
// a schema that is not JSON, or whose top is neither an object nor a
// boolean, is an error: no call of the tool could be checked.
func parseSchema(raw json.RawMessage) (*schema, []string, error) {
	text := bytes.TrimSpace(raw)
	if len(text) == 0 || string(text) == "null" {
		return &schema{types: []string{"object"}}, nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, nil, fmt.Errorf("parsing the parameter schema: %w", err)
	}
	if dec.More() {
		return nil, nil, errors.New("parsing the parameter schema: unexpected data after it")
	}
	switch v.(type) {
	case map[string]any, bool:
	default:
		return nil, nil, fmt.Errorf("the parameter schema is a JSON %s, not an object", typeName(v))
	}
	var p schemaParser
	return p.parse("", v), p.notes, nil
}

// schemaParser collects the notes of one parseSchema.
type schemaParser struct {
	notes []string
}

// skip notes that the keyword at path was skipped, and why.
func (p *schemaParser) skip(path, keyword, why string) {
	p.notes = append(p.notes, fmt.Sprintf("%s (%s)", joinPath(path, keyword), why))
}

// parse reads the schema v found at path.
func (p *schemaParser) parse(path string, v any) *schema {
	var m map[string]any
	switch x := v.(type) {
	case bool:
		return &schema{never: !x}
	case map[string]any:
		m = x
	default:
		p.notes = append(p.notes, fmt.Sprintf("%s (a JSON %s, not a schema)", cmp.Or(path, "the schema"), typeName(v)))
		return &schema{}
	}
	s := &schema{}
	for _, key := range slices.Sorted(maps.Keys(m)) {
		val := m[key]
		switch key {
		case "type":
			if types, ok := stringList(val); ok {
				s.types = types
			} else {
				p.skip(path, key, "not a type name or a list of them")
			}
		case "required":
			if names, ok := stringList(val); ok {
				s.required = names
			} else {
				p.skip(path, key, "not a list of names")
			}
		case "enum":
			if values, ok := val.([]any); ok {
				s.enum = values
			} else {
				p.skip(path, key, "not a list")
			}
		case "additionalProperties":
			// Only false is checked; a schema for the other properties is
			// left to the model.
			if b, ok := val.(bool); ok {
				s.noExtra = !b
			}
		case "properties":
			props, ok := val.(map[string]any)
			if !ok {
				p.skip(path, key, "not an object")
				continue
			}
			s.properties = make(map[string]*schema, len(props))
			for _, name := range slices.Sorted(maps.Keys(props)) {
				s.properties[name] = p.parse(joinPath(path, key, name), props[name])
			}
		case "items":
			switch val.(type) {
			case map[string]any, bool:
				s.items = p.parse(joinPath(path, key), val)
			case []any:
				p.skip(path, key, "a list of schemas is not checked")
			default:
				p.skip(path, key, "not a schema")
			}
		case "$ref", "allOf", "anyOf", "oneOf", "not", "if", "patternProperties", "prefixItems":
			// These shape what is valid, but the loop does not follow
			// them: it checks less than the schema says.
			p.skip(path, key, "not followed")
		}
	}
	return s
}

// joinPath names a place in a schema, as dot-separated keys.
func joinPath(parts ...string) string {
	return strings.Join(slices.DeleteFunc(parts, func(s string) bool { return s == "" }), ".")
}

// stringList reads a string or a list of strings.
func stringList(v any) ([]string, bool) {
	switch x := v.(type) {
	case string:
		return []string{x}, true
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}

// parseArguments parses a tool call's arguments (empty means {}) and checks
// them against s. The error is worded for the model.
func parseArguments(s *schema, args string) (json.RawMessage, error) {
	text := strings.TrimSpace(args)
	if text == "" {
		text = "{}"
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("the arguments are not valid JSON: %w", err)
	}
	if dec.More() {
		return nil, errors.New("the arguments are not valid JSON: unexpected data after the object")
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, errors.New("the arguments must be a JSON object")
	}
	if err := s.validate("arguments", v); err != nil {
		return nil, err
	}
	return json.RawMessage(text), nil
}

// validate checks v (decoded with UseNumber) against s; path names v in
// the error.
func (s *schema) validate(path string, v any) error {
	if s.never {
		return fmt.Errorf("%s: not allowed", path)
	}
	if len(s.types) > 0 && !slices.ContainsFunc(s.types, func(t string) bool { return hasType(v, t) }) {
		return fmt.Errorf("%s: expected %s, got %s", path, strings.Join(s.types, " or "), typeName(v))
	}
	if len(s.enum) > 0 && !slices.ContainsFunc(s.enum, func(e any) bool { return jsonEqual(e, v) }) {
		return fmt.Errorf("%s: must be one of %s", path, enumText(s.enum))
	}
	switch x := v.(type) {
	case map[string]any:
		for _, name := range s.required {
			if _, ok := x[name]; !ok {
				return fmt.Errorf("%s: missing required property %q", path, name)
			}
		}
		names := make([]string, 0, len(x))
		for name := range x {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			ps, known := s.properties[name]
			if !known {
				if s.noExtra {
					return fmt.Errorf("%s: unknown property %q", path, name)
				}
				continue
			}
			if err := ps.validate(path+"."+name, x[name]); err != nil {
				return err
			}
		}
	case []any:
		if s.items != nil {
			for i, e := range x {
				if err := s.items.validate(fmt.Sprintf("%s[%d]", path, i), e); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// hasType reports whether v is of the JSON Schema type t.
func hasType(v any, t string) bool {
	switch t {
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "null":
		return v == nil
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		f, err := n.Float64()
		return err == nil && f == math.Trunc(f)
	}
	return true
}

// typeName names v's JSON type for an error message.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return fmt.Sprintf("%T", v)
}

// jsonEqual compares two decoded JSON values, numbers by value.
func jsonEqual(a, b any) bool {
	an, aok := a.(json.Number)
	bn, bok := b.(json.Number)
	if aok && bok {
		af, err1 := an.Float64()
		bf, err2 := bn.Float64()
		return err1 == nil && err2 == nil && af == bf
	}
	ab, err1 := json.Marshal(a)
	bb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ab, bb)
}

// enumText lists enum values as JSON.
func enumText(enum []any) string {
	parts := make([]string, len(enum))
	for i, e := range enum {
		b, _ := json.Marshal(e)
		parts[i] = string(b)
	}
	return strings.Join(parts, ", ")
}
