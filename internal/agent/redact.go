package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/volcanic/telegram-agent/internal/redactor"
)

// redactResult returns a copy of r with every known secret replaced: the
// text of every text block, and every string inside Details (keys too),
// however deeply nested. Images are left alone. r is not modified.
func redactResult(red *redactor.Redactor, r Result) Result {
	return redactResultWith(red.Redact, red.Redact, r)
}

// redactProgress is redactResult for a progress snapshot of a tool that is
// still running: in its text blocks, a trailing run that could be the
// beginning of a secret is left out (redactor.Redactor.RedactPartial), so
// output printed slowly never shows a growing prefix of a secret. Details
// get the full redaction: their keys and values are names and figures, not
// a stream, and cutting their last characters would garble them (a tool
// that streams output into Details must redact the stream itself, with
// ToolContext.Redactor).
func redactProgress(red *redactor.Redactor, r Result) Result {
	return redactResultWith(red.RedactPartial, red.Redact, r)
}

// redactMessage returns a copy of m with every known secret replaced in
// what a model or a tool wrote: the text blocks, the tool calls' names, IDs
// and arguments (a secret inside the JSON text becomes the token, which
// keeps it JSON), the name and ID of the call a tool message answers, and
// Details. Images are left alone. m is not modified.
func redactMessage(red *redactor.Redactor, m Message) Message {
	r := redactResult(red, Result{Content: m.Content, Details: m.Details, IsError: m.IsError})
	m.Content, m.Details = r.Content, r.Details
	if m.ToolCalls != nil {
		calls := make([]ToolCall, len(m.ToolCalls))
		for i, c := range m.ToolCalls {
			calls[i] = ToolCall{ID: red.Redact(c.ID), Name: red.Redact(c.Name), Arguments: red.Redact(c.Arguments)}
		}
		m.ToolCalls = calls
	}
	m.ToolCallID, m.ToolName = red.Redact(m.ToolCallID), red.Redact(m.ToolName)
	return m
}

// redactArguments returns a tool call's JSON arguments with every known
// secret replaced, in the text and in every string it decodes to: a value
// written with escapes ("\u0041" for "A") decodes to more of a secret than
// the text shows, and a front end shows the decoded value (cut short). The
// text is redacted as it is (a secret becomes the token, which keeps it
// JSON); only when that leaves an escape, and a decoded string still holds
// something to redact, are the arguments decoded, redacted and encoded
// again. Arguments that are no JSON are redacted as text.
func redactArguments(red *redactor.Redactor, args string) string {
	out := red.Redact(args)
	if !strings.Contains(out, `\`) {
		return out
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return out
	}
	rv := redactValue(red.Redact, v)
	if reflect.DeepEqual(rv, v) {
		return out
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(rv) != nil {
		return out
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// redactResultWith returns a copy of r with redactText applied to the text
// of every text block and redact to every string inside Details.
func redactResultWith(redactText, redact func(string) string, r Result) Result {
	out := Result{IsError: r.IsError}
	if r.Content != nil {
		out.Content = make([]Content, len(r.Content))
		for i, c := range r.Content {
			if c.Type == TextContent || c.Text != "" {
				c.Text = redactText(c.Text)
			}
			out.Content[i] = c
		}
	}
	if r.Details != nil {
		out.Details = redactMap(redact, r.Details)
	}
	return out
}

// redactMap returns a redacted deep copy of m.
func redactMap(redact func(string) string, m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[redact(k)] = redactValue(redact, v)
	}
	return out
}

// redactValue returns a redacted deep copy of v. The JSON shapes
// (map[string]any, []any, string, json.Number, numbers, bools) and the
// common []string and map[string]string are walked directly; anything else
// goes through a JSON round trip first, so no string inside it escapes. A
// number whose text is a secret becomes the redaction token.
func redactValue(redact func(string) string, v any) any {
	switch x := v.(type) {
	case nil, bool:
		return x
	case string:
		return redact(x)
	case json.Number:
		return json.Number(redact(string(x)))
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
		s := fmt.Sprint(x)
		if redact(s) != s {
			return redactor.Token
		}
		return x
	case []string:
		out := make([]string, len(x))
		for i, s := range x {
			out[i] = redact(s)
		}
		return out
	case map[string]string:
		out := make(map[string]string, len(x))
		for k, s := range x {
			out[redact(k)] = redact(s)
		}
		return out
	case map[string]any:
		return redactMap(redact, x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = redactValue(redact, e)
		}
		return out
	}
	if rv := reflect.ValueOf(v); (rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Map || rv.Kind() == reflect.Slice) && rv.IsNil() {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return redact(fmt.Sprint(v))
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return redact(string(b))
	}
	return redactValue(redact, generic)
}
