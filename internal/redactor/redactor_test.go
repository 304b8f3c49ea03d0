package redactor

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"unsafe"
)

const (
	secretA = "ghp_abcdefghijklmnop1234"
	secretB = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
)

func TestRedact(t *testing.T) {
	tests := []struct {
		name    string
		secrets []string
		in      string
		want    string
	}{
		{"empty set", nil, "token " + secretA, "token " + secretA},
		{"only short values", []string{"admin", "1234567", "true"}, "admin 1234567 true", "admin 1234567 true"},
		{"short value ignored, long kept", []string{"admin", secretA}, "admin " + secretA, "admin " + Token},
		{"single", []string{secretA}, "a " + secretA + " b", "a " + Token + " b"},
		{"whole input", []string{secretA}, secretA, Token},
		{"every occurrence", []string{secretA}, secretA + " x " + secretA + secretA, Token + " x " + Token},
		{"duplicates removed", []string{secretA, secretA}, "<" + secretA + ">", "<" + Token + ">"},
		{"containment", []string{"abcdefghijkl", "cdefghij"}, "x abcdefghijkl y cdefghij z", "x " + Token + " y " + Token + " z"},
		{"containment, shorter first", []string{"cdefghij", "abcdefghijkl"}, "[abcdefghijkl]", "[" + Token + "]"},
		{"overlap", []string{"abcdefgh", "efghijkl"}, "<abcdefghijkl>", "<" + Token + ">"},
		{"overlap, both orders", []string{"efghijkl", "abcdefgh"}, "<efghijklabcdefgh>", "<" + Token + ">"},
		{"adjacent", []string{"abcdefgh", "ijklmnop"}, "<abcdefghijklmnop>", "<" + Token + ">"},
		{"adjacent same", []string{"abcdefgh"}, "<abcdefghabcdefgh>", "<" + Token + ">"},
		{"separated by one byte", []string{"abcdefgh"}, "abcdefgh abcdefgh", Token + " " + Token},
		{"chain of overlaps", []string{"aaaaaaaa"}, strings.Repeat("a", 50), Token},
		{"late long match reaches back", []string{"bcdefghi", "klmnopqr", "abcdefghijklmnopqrst"}, "<abcdefghijklmnopqrst>", "<" + Token + ">"},
		{"late long match over earlier spans", []string{"bcdefghi", "mnopqrst", "abcdefghijklmnopqrstuv"}, "bcdefghi-abcdefghijklmnopqrstuv", Token + "-" + Token},
		{"a piece shorter than a fragment is kept", []string{secretA}, "<" + secretA[:11] + ">", "<" + secretA[:11] + ">"},
		{"a fragment is redacted", []string{secretA}, "<" + secretA[:12] + ">", "<" + Token + ">"},
		{"a cut secret is redacted", []string{secretA}, secretA[:len(secretA)-1], Token},
		{"binary bytes", []string{"\x00\xff\x01\xfe\x02\xfd\x03\xfc"}, "a\x00\xff\x01\xfe\x02\xfd\x03\xfcb", "a" + Token + "b"},
		{"token inside secret", []string{"x" + Token + "y"}, "(x" + Token + "y)", "(" + Token + ")"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := New(tt.secrets).Redact(tt.in)
			if d := mismatch(tt.want, got); d != "" {
				t.Errorf("Redact mismatch: %s", d)
			}
		})
	}
}

func TestRedactMultiLine(t *testing.T) {
	const key = "-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG\nshort\n-----END KEY-----"
	crlf := strings.ReplaceAll(key, "\n", "\r\n")
	tests := []struct {
		name    string
		secrets []string
		in      string
		want    string
	}{
		{"as given", []string{key}, "k=" + key + ";", "k=" + Token + ";"},
		{"CRLF in text, LF secret", []string{key}, "k=" + crlf + ";", "k=" + Token + ";"},
		{"LF in text, CRLF secret", []string{crlf}, "k=" + key + ";", "k=" + Token + ";"},
		{"one long line alone", []string{key}, "line MIIEvQIBADANBgkqhkiG only", "line " + Token + " only"},
		{"short line not alone", []string{key}, "short", "short"},
		{"JSON of the key", []string{key}, mustJSON(key), `"` + Token + `"`},
		{"JSON of the CRLF key", []string{key}, mustJSON(crlf), `"` + Token + `"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := New(tt.secrets).Redact(tt.in)
			if d := mismatch(tt.want, got); d != "" {
				t.Errorf("Redact mismatch: %s", d)
			}
		})
	}
}

func mustJSON(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// encodings are independent (stdlib) producers of each derived form, applied
// to prefix + secret + suffix.
var encodings = []struct {
	name   string
	encode func(string) string
}{
	{"raw", func(s string) string { return s }},
	{"base64 std padded", func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }},
	{"base64 std raw", func(s string) string { return base64.RawStdEncoding.EncodeToString([]byte(s)) }},
	{"base64 url padded", func(s string) string { return base64.URLEncoding.EncodeToString([]byte(s)) }},
	{"base64 url raw", func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }},
	{"query escape", url.QueryEscape},
	{"query escape lower", func(s string) string { return lowerPercentHex(url.QueryEscape(s)) }},
	{"path escape", url.PathEscape},
	{"path escape lower", func(s string) string { return lowerPercentHex(url.PathEscape(s)) }},
	{"json encoding/json", mustJSON},
	{"json no HTML escape", func(s string) string {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			panic(err)
		}
		return strings.TrimSuffix(b.String(), "\n")
	}},
	{"hex lower", func(s string) string { return hex.EncodeToString([]byte(s)) }},
	{"hex upper", func(s string) string { return strings.ToUpper(hex.EncodeToString([]byte(s))) }},
}

func TestRedactDerivedForms(t *testing.T) {
	secrets := []struct{ name, value string }{
		{"alphanumeric", "Zq8wXv3KpL0mNb7T"},
		{"bot token", secretB},
		{"symbols", `p@ss w/rd&"x"+<y>?é\%`},
		{"control chars", "tab\there\x01line\nend"},
	}
	const fill = "~!.,;:"
	for _, sec := range secrets {
		r := New([]string{sec.value})
		for _, enc := range encodings {
			for p := range 6 {
				for q := range 6 {
					prefix, suffix := strings.Repeat("P", p), strings.Repeat("s", q)
					if strings.HasPrefix(enc.name, "base64") {
						// Vary the bytes too, not just their count.
						prefix, suffix = fill[:p], fill[len(fill)-q:]
					}
					t.Run(sec.name+"/"+enc.name+"/"+string(rune('0'+p))+string(rune('0'+q)), func(t *testing.T) {
						in := "value=" + enc.encode(prefix+sec.value+suffix) + " done"
						got := r.Redact(in)
						if !strings.Contains(got, Token) {
							t.Fatalf("no redaction (input length %d)", len(in))
						}
						if how := leak(got, sec.value); how != "" {
							t.Errorf("secret survives as %s", how)
						}
						if !strings.HasPrefix(got, "value=") || !strings.HasSuffix(got, " done") {
							t.Errorf("surrounding text damaged: got length %d", len(got))
						}
					})
				}
			}
		}
	}
}

func TestRedactJavaScriptJSON(t *testing.T) {
	// JSON.stringify leaves <, >, &, U+2028 alone and uses short escapes for
	// \b and \f; Python's json.dumps escapes every non-ASCII rune.
	const secret = "a<b>&c\u2028d\be\ff\x1fg😀"
	tests := []struct{ name, encoded string }{
		{"JSON.stringify", `a<b>&c` + "\u2028" + `d\be\ff\u001fg😀`},
		{"json.dumps ensure_ascii", `a<b>&c\u2028d\be\ff\u001fg\ud83d\ude00`},
	}
	r := New([]string{secret})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.Redact(`{"k":"` + tt.encoded + `"}`); got != `{"k":"`+Token+`"}` {
				t.Errorf("not redacted: got length %d", len(got))
			}
		})
	}
}

func TestRedactNoMatchReturnsInput(t *testing.T) {
	inputs := []struct {
		name    string
		secrets []string
		in      string
	}{
		{"empty set", nil, "hello world"},
		{"no match", []string{secretA, secretB}, strings.Repeat("log line without secrets\n", 100)},
		{"near miss", []string{secretA}, secretA[13:] + " " + secretA[:11] + " " + secretA[5:16]},
		{"empty input", []string{secretA}, ""},
	}
	for _, tt := range inputs {
		t.Run(tt.name, func(t *testing.T) {
			r := New(tt.secrets)
			got := r.Redact(tt.in)
			if got != tt.in || unsafe.StringData(got) != unsafe.StringData(tt.in) {
				t.Errorf("Redact did not return its input itself")
			}
			if allocs := testing.AllocsPerRun(100, func() { r.Redact(tt.in) }); allocs != 0 {
				t.Errorf("Redact allocated %v times per run, want 0", allocs)
			}
		})
	}
}

func TestRedactNil(t *testing.T) {
	var r *Redactor
	if got := r.Redact("abc"); got != "abc" {
		t.Errorf("nil Redactor changed its input")
	}
}

func TestPatternsAreLongEnough(t *testing.T) {
	ps := patterns([]string{"12345678", "a\nbcdefghi\r\nj", "\x00\x01\x02\x03\x04\x05\x06\x07"}, fragmentLen)
	for _, p := range append(ps.raw, ps.encoded...) {
		if len(p) < MinimumSecretLength {
			t.Errorf("pattern of length %d is shorter than %d", len(p), MinimumSecretLength)
		}
	}
}

func TestRedactMatchesReference(t *testing.T) {
	secrets := []string{"abcdefgh", "defghijk", "ghijklmnopq", "xxxxxxxx", "a\nbcdefghi", secretA, secretB}
	r := New(secrets)
	inputs := []string{
		"abcdefghijklmnopq", "xxxxxxxxxxxxxxx abcdefg hijk", "a\r\nbcdefghi a\nbcdefghi",
		hex.EncodeToString([]byte("zz" + secretA)), base64.StdEncoding.EncodeToString([]byte("q" + secretB + "r")),
		url.QueryEscape(secretB), "defghijkdefghijk-abcdefgh",
	}
	for i, in := range inputs {
		t.Run(string(rune('a'+i)), func(t *testing.T) {
			if d := mismatch(naiveRedact(r.patterns, in), r.Redact(in)); d != "" {
				t.Errorf("redactor differs from reference: %s", d)
			}
		})
	}
}
