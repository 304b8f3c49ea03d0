package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// schema is the subset of JSON Schema the loop checks tool arguments
// against: type, properties, required, enum, additionalProperties: false and
// items. Other keywords are accepted and ignored.
type schema struct {
	types      []string
	properties map[string]*schema
	required   []string
	enum       []any
	noExtra    bool
	items      *schema
}

// wireSchema is the JSON form parseSchema reads.
type wireSchema struct {
	Type                 json.RawMessage            `json:"type"`
	Properties           map[string]json.RawMessage `json:"properties"`
	Required             []string                   `json:"required"`
	Enum                 []any                      `json:"enum"`
	AdditionalProperties json.RawMessage            `json:"additionalProperties"`
	Items                json.RawMessage            `json:"items"`
}

// parseSchema parses a tool's parameter schema. An empty one accepts any
// object.
func parseSchema(raw json.RawMessage) (*schema, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return &schema{types: []string{"object"}}, nil
	}
	var w wireSchema
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&w); err != nil {
		return nil, fmt.Errorf("parsing the parameter schema: %w", err)
	}
	s := &schema{required: w.Required, enum: w.Enum}
	if len(w.Type) > 0 {
		var one string
		if err := json.Unmarshal(w.Type, &one); err == nil {
			s.types = []string{one}
		} else if err := json.Unmarshal(w.Type, &s.types); err != nil {
			return nil, fmt.Errorf("parsing the schema type: %w", err)
		}
	}
	if len(w.Properties) > 0 {
		s.properties = make(map[string]*schema, len(w.Properties))
		for name, p := range w.Properties {
			ps, err := parseSchema(p)
			if err != nil {
				return nil, fmt.Errorf("property %q: %w", name, err)
			}
			s.properties[name] = ps
		}
	}
	s.noExtra = string(bytes.TrimSpace(w.AdditionalProperties)) == "false"
	if len(w.Items) > 0 {
		is, err := parseSchema(w.Items)
		if err != nil {
			return nil, fmt.Errorf("items: %w", err)
		}
		s.items = is
	}
	return s, nil
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
