package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// argumentSchema checks a tool's call arguments against its parameter
// schema, with jsonschema-go (draft 2020-12 and draft-07, the drafts MCP
// servers write). The built-in tools' schemas come from [NewTool], so
// they always resolve; an MCP server's may not, and then only "a JSON
// object" is checked: the server checks its own arguments, and a tool is
// worth more to the model than a check the loop cannot make.
type argumentSchema struct {
	// resolved is nil when only "a JSON object" is checked.
	resolved *jsonschema.Resolved
}

// parseSchema reads a tool's parameter schema. An empty one accepts any
// object. A schema jsonschema-go cannot read or resolve (a keyword in a
// form no draft allows, a remote $ref, a draft it does not validate), or
// must not follow (references in a cycle, see unsafeRefs), is checked only
// as an object, and note says why. Only a schema that is not
// JSON, or whose top is neither an object nor a boolean, is an error: no
// call of the tool could be checked.
func parseSchema(raw json.RawMessage) (s *argumentSchema, note string, err error) {
	text := bytes.TrimSpace(raw)
	if len(text) == 0 || string(text) == "null" {
		return &argumentSchema{}, "", nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(text))
	if err := dec.Decode(&v); err != nil {
		return nil, "", fmt.Errorf("parsing the parameter schema: %w", err)
	}
	if dec.More() {
		return nil, "", errors.New("parsing the parameter schema: unexpected data after it")
	}
	switch v.(type) {
	case map[string]any, bool:
	default:
		return nil, "", fmt.Errorf("the parameter schema is a JSON %s, not an object", typeName(v))
	}
	if why := unsafeRefs(v); why != "" {
		return &argumentSchema{}, "not followed: " + why, nil
	}
	var js jsonschema.Schema
	if err := json.Unmarshal(text, &js); err != nil {
		if te := (*json.UnmarshalTypeError)(nil); errors.As(err, &te) {
			// Its text spells out jsonschema-go's internal types.
			err = fmt.Errorf("a JSON %s where a schema belongs", te.Value)
		}
		return &argumentSchema{}, fmt.Sprintf("not a schema jsonschema-go reads: %v", err), nil
	}
	draft, ok := canonicalDraft(js.Schema)
	if !ok {
		return &argumentSchema{}, fmt.Sprintf("$schema %q is a draft jsonschema-go does not validate", js.Schema), nil
	}
	js.Schema = draft
	resolved, err := js.Resolve(nil)
	if err != nil {
		return &argumentSchema{}, fmt.Sprintf("not resolved: %v", err), nil
	}
	return &argumentSchema{resolved: resolved}, "", nil
}

// canonicalDraft returns the spelling jsonschema-go knows of the draft a
// $schema names, and whether it validates that draft: it takes each draft
// in one spelling, and servers write the others too. No $schema means the
// newest draft.
func canonicalDraft(id string) (string, bool) {
	const (
		draft07   = "http://json-schema.org/draft-07/schema#"
		draft07s  = "https://json-schema.org/draft-07/schema#"
		draft2020 = "https://json-schema.org/draft/2020-12/schema"
	)
	switch id {
	case "", draft07, draft07s, draft2020:
		return id, true
	case strings.TrimSuffix(draft07, "#"), strings.TrimSuffix(draft07s, "#"):
		return id + "#", true
	case draft2020 + "#":
		return draft2020, true
	}
	return "", false
}

// parseArguments parses a tool call's arguments (empty means {}) and checks
// them against s. The error is worded for the model.
func (s *argumentSchema) parseArguments(args string) (json.RawMessage, error) {
	text := strings.TrimSpace(args)
	if text == "" {
		text = "{}"
	}
	dec := json.NewDecoder(strings.NewReader(text))
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
	if s.resolved != nil {
		if err := s.validate(v); err != nil {
			return nil, errors.New(strings.TrimPrefix(err.Error(), "validating root: "))
		}
	}
	return json.RawMessage(text), nil
}

// validate checks v against the resolved schema. A panic in jsonschema-go,
// on a server's schema it was never tried with, refuses the call instead
// of ending the turn's goroutine, and the bot with it.
func (s *argumentSchema) validate(v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the tool's schema could not be checked (%v)", r)
		}
	}()
	return s.resolved.Validate(v)
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
	case float64:
		return "number"
	case []any:
		return "array"
	}
	return fmt.Sprintf("%T", v)
}
