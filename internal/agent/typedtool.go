package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// ToolFunc runs one call of a tool built by [NewTool], with the call's
// arguments validated against the tool's schema and decoded into args.
type ToolFunc[Args any] func(ctx context.Context, call *Call, args Args) (Result, error)

// NewTool returns a tool that offers spec to the model with the parameter
// schema jsonschema-go infers from Args, and runs fn with each call's
// arguments decoded into an Args: the Go type that decodes the arguments is
// the schema the model is shown, so the two cannot drift apart. Args is a
// struct whose exported fields are the parameters, named by their json
// tags and described by their jsonschema tags; a field is required unless
// its json tag says omitempty or omitzero, and no other parameter is
// accepted. A pointer field is an optional parameter whose absence fn can
// tell from a zero: the schema offers its type only, not null, because
// leaving it out is how the model says "none".
//
// NewTool panics if spec already holds Parameters, if Args has no schema
// (it is not a struct, or holds a func or a channel), or if spec.Effects is
// inconsistent: a Command or WritesPath that names no string parameter of
// Args, a ReadOnly tool that runs or writes something, Deferred without a
// Command. Those are mistakes in the program, which the first test that
// builds the tool finds, as with the MCP go-sdk's AddTool.
func NewTool[Args any](spec ToolSpec, fn ToolFunc[Args]) Tool {
	params, err := inferParameters[Args](spec.Effects)
	if err == nil && len(spec.Parameters) > 0 {
		err = errors.New("the spec already has parameters")
	}
	if err == nil && fn == nil {
		err = errors.New("no function to run")
	}
	if err != nil {
		panic(fmt.Sprintf("agent: NewTool %q: %v", spec.Name, err))
	}
	spec.Parameters = params
	return &typedTool[Args]{spec: spec, fn: fn}
}

// typedTool is a tool built by NewTool.
type typedTool[Args any] struct {
	spec ToolSpec
	fn   ToolFunc[Args]
}

// Spec returns the spec with the inferred schema.
func (t *typedTool[Args]) Spec() ToolSpec { return t.spec }

// Execute decodes the arguments and runs the tool's function. The loop has
// validated them against the schema already, so a decoding failure is rare
// (a number too large for the field, a caller that skipped the loop); it is
// an error result worded for the model.
func (t *typedTool[Args]) Execute(ctx context.Context, call *Call) (Result, error) {
	var args Args
	raw := call.Arguments
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return ErrorResult(fmt.Sprintf("invalid arguments: %v", err)), nil
	}
	return t.fn(ctx, call, args)
}

// inferParameters infers Args' parameter schema, checks fx against it and
// returns it as the model is shown it.
func inferParameters[Args any](fx Effects) (json.RawMessage, error) {
	s, err := jsonschema.For[Args](nil)
	if err != nil {
		return nil, err
	}
	if s.Type != "object" {
		return nil, fmt.Errorf("the arguments are a %s, not a struct", s.Type)
	}
	if s.Properties == nil {
		// An object without properties is written out with an empty
		// "properties", as providers expect of a function's parameters.
		s.Properties = map[string]*jsonschema.Schema{}
	}
	dropNull(s)
	if err := checkEffects(s, fx); err != nil {
		return nil, err
	}
	return json.Marshal(s)
}

// dropNull makes every schema that jsonschema-go wrote as "a T or null"
// (for a pointer or a slice) a plain T, at every depth.
func dropNull(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && slices.Contains(s.Types, "null") {
		s.Type = s.Types[0]
		if s.Type == "null" {
			s.Type = s.Types[1]
		}
		s.Types = nil
	}
	for _, p := range s.Properties {
		dropNull(p)
	}
	dropNull(s.Items)
	dropNull(s.AdditionalProperties)
}

// checkEffects checks that fx names string parameters of s and does not
// contradict itself.
func checkEffects(s *jsonschema.Schema, fx Effects) error {
	for _, arg := range []struct{ what, name string }{{"Command", fx.Command}, {"WritesPath", fx.WritesPath}} {
		if arg.name == "" {
			continue
		}
		p, ok := s.Properties[arg.name]
		if !ok || p.Type != "string" {
			return fmt.Errorf("effects: %s names %q, which is not a string parameter", arg.what, arg.name)
		}
	}
	switch {
	case fx.ReadOnly && (fx.Command != "" || fx.WritesPath != ""):
		return errors.New("effects: ReadOnly with a Command or a WritesPath")
	case fx.Deferred && fx.Command == "":
		return errors.New("effects: Deferred without a Command")
	}
	return nil
}
