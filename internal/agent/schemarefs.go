package agent

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// unsafeRefs says why jsonschema-go must not validate against the decoded
// schema root, or returns "": when following its references can lead back
// to where they started, jsonschema-go, which has no depth limit, may
// validate the same value forever, until the stack overflows and the bot
// dies with it (`{"$ref":"#"}` is enough). A reference that is not a JSON
// pointer into the schema (an anchor, a URI) cannot be followed here, so
// it counts as unsafe too. A recursive schema that would be safe (a tree
// whose recursion goes through properties) is refused with the rest: its
// tool is then checked only as an object, as a server's unreadable schema
// is.
func unsafeRefs(root any) string {
	const (
		visiting = 1
		done     = 2
	)
	state := make(map[string]int)
	var visit func(ptr string, v any) string
	visit = func(ptr string, v any) string {
		switch state[ptr] {
		case visiting:
			return fmt.Sprintf("its references lead back to %q", "#"+ptr)
		case done:
			return ""
		}
		type node struct {
			ptr string
			v   any
		}
		var next []node
		switch x := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				next = append(next, node{ptr + "/" + escapePointer(k), x[k]})
			}
			for _, kw := range []string{"$ref", "$dynamicRef", "$recursiveRef"} {
				ref, ok := x[kw].(string)
				if !ok {
					continue
				}
				target, ok := strings.CutPrefix(ref, "#")
				if ok && target != "" && !strings.HasPrefix(target, "/") {
					ok = false
				}
				if ok {
					target, ok = unescapeFragment(target)
				}
				if !ok {
					return fmt.Sprintf("%s %q is not a JSON pointer into the schema", kw, ref)
				}
				if tv, found := lookupPointer(root, target); found {
					next = append(next, node{target, tv})
				}
			}
		case []any:
			for i, e := range x {
				next = append(next, node{ptr + "/" + strconv.Itoa(i), e})
			}
		default:
			return ""
		}
		state[ptr] = visiting
		for _, n := range next {
			if why := visit(n.ptr, n.v); why != "" {
				return why
			}
		}
		state[ptr] = done
		return ""
	}
	return visit("", root)
}

// unescapeFragment undoes a URI fragment's percent-encoding, leaving the
// JSON pointer it holds.
func unescapeFragment(s string) (string, bool) {
	p, err := url.PathUnescape(s)
	return p, err == nil
}

// escapePointer escapes a key as a JSON pointer token.
func escapePointer(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// lookupPointer returns the value at the JSON pointer ptr in root.
func lookupPointer(root any, ptr string) (any, bool) {
	if ptr == "" {
		return root, true
	}
	v := root
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case map[string]any:
			e, ok := x[tok]
			if !ok {
				return nil, false
			}
			v = e
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}
