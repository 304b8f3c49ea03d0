package securitytest

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"html"
	"net/url"
	"strings"
	"testing"
)

// TestSecurityScannerFindsEveryForm checks the suite's own detector: each
// encoding of a secret, embedded the way the channels carry it, is found,
// and unrelated text is not. A detector that misses a form would let a leak
// pass silently.
func TestSecurityScannerFindsEveryForm(t *testing.T) {
	set, err := newSecretSet()
	if err != nil {
		t.Fatalf("generating secrets: %v", err)
	}
	b64 := func(enc *base64.Encoding, prefix, v string) string {
		return enc.EncodeToString([]byte(prefix + v + "tail"))
	}
	jsonBody := func(v string) string {
		b, err := json.Marshal(map[string]any{"messages": []any{map[string]string{"role": "tool", "content": "out: " + v}}})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	tests := []struct {
		name string
		wrap func(v string) string
	}{
		{"raw in text", func(v string) string { return "before " + v + " after" }},
		{"base64 aligned", func(v string) string { return b64(base64.StdEncoding, "", v) }},
		{"base64 shifted by one", func(v string) string { return b64(base64.StdEncoding, "x", v) }},
		{"base64 shifted by two", func(v string) string { return b64(base64.StdEncoding, "xy", v) }},
		{"base64url shifted by one", func(v string) string { return b64(base64.RawURLEncoding, "x", v) }},
		{"hex", func(v string) string { return "0a" + hex.EncodeToString([]byte(v)) }},
		{"HEX", func(v string) string { return strings.ToUpper(hex.EncodeToString([]byte(v))) }},
		{"query escaped", func(v string) string { return "a=" + url.QueryEscape(v) }},
		{"path escaped, lower-case hex", func(v string) string { return lowerPercent(url.PathEscape(v)) }},
		{"JSON body", jsonBody},
		{"JSON body inside a JSON string", func(v string) string { b, _ := json.Marshal(jsonBody(v)); return string(b) }},
		{"HTML escaped", func(v string) string { return "<pre>" + html.EscapeString(v) + "</pre>" }},
		{"base64 wrapped at a line break in a JSON body", func(v string) string {
			enc := b64(base64.StdEncoding, "", v)
			return jsonBody(enc[:len(enc)/2] + "\n" + enc[len(enc)/2:])
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, sec := range set.secrets {
				found := scan([]secret{sec}, []piece{{where: "test", text: tc.wrap(sec.value)}})
				if len(found) == 0 {
					t.Errorf("%s (%d bytes) not found", sec.name, len(sec.value))
				}
			}
		})
	}
	t.Run("a value short of its end", func(t *testing.T) {
		for _, sec := range set.secrets {
			cut := sec.value[:len(sec.value)*4/5]
			found := scan([]secret{sec}, []piece{{where: "test", text: "progress: " + cut}})
			if len(found) != 1 || found[0].form != partialForm {
				t.Errorf("%s cut to %d of %d bytes: found %v, want one %s finding", sec.name, len(cut), len(sec.value), found, partialForm)
			}
		}
	})
	t.Run("half a value is an accepted fragment", func(t *testing.T) {
		for _, sec := range set.secrets {
			if found := scan([]secret{sec}, []piece{{where: "test", text: sec.value[len(sec.value)/2:]}}); len(found) > 0 {
				t.Errorf("%s: half of it reported as %v", sec.name, found)
			}
		}
	})
	t.Run("no false positive", func(t *testing.T) {
		text := "[REDACTED] " + strings.Repeat("filler line\n", 100)
		if found := scan(set.secrets, []piece{{where: "test", text: text}}); len(found) > 0 {
			t.Errorf("found %v in text without secrets", found)
		}
	})
}
