package securitytest

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"math/big"
	"net/url"
	"slices"
	"strings"
)

// base62 is the alphabet of the random parts of the fake secrets.
const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// secret is one fake secret set in the bot's environment.
type secret struct {
	// name is the variable that carries it.
	name string
	// value is the fake value, random per run. Never print it.
	value string
	// known reports whether the bot treats the value as a secret (its
	// SecretValues): such a value may be printed into tool output from a
	// file and must come back redacted. A deny-listed value (DB_PASSWORD)
	// is one too: a value a deny rule removes is redacted as well.
	known bool
	// forms are the value's derived forms, the value itself first.
	forms []form
}

// form is one derived form of a secret value: how it was derived, and the
// text to search for.
type form struct {
	name string
	text string
}

// secretSet is every fake secret of one run, with the control.
type secretSet struct {
	// secrets are searched for in every channel.
	secrets []secret
	// control is GH_TOKEN, allowed by PROCESS_ENV_ALLOW: it must reach the
	// agent's environment, or the policy over-filters, and its value must
	// never be seen ("use, not see": an allowed variable's value is a
	// known secret).
	control secret
}

// Names of the variables that carry the fake secrets.
const (
	envBotToken     = "TELEGRAM_BOT_TOKEN"
	envOpenAIKey    = "OPENAI_API_KEY"
	envSpeechKey    = "TELEGRAM_SPEECH_API_KEY"
	envGoogleSecret = "GOOGLE_CLIENT_SECRET"
	// envWebhookSecret is the webhook's secret_token: a secret even while
	// the bot polls and does not use it.
	envWebhookSecret = "TELEGRAM_WEBHOOK_SECRET"
	envDBPassword    = "DB_PASSWORD"
	// envInnocent is a name no deny glob matches: only its listing in
	// PROCESS_ENV_SECRETS makes its value a secret.
	envInnocent = "LEGACY_SIGNING_BLOB"
	// envGitHubToken is deny-listed by *_TOKEN and passed on purpose to
	// the fake MCP server through its configuration's env entry, which
	// makes it a known secret (the MCP loader's Config.Secrets). It is not
	// in PROCESS_ENV_SECRETS: the loader refuses to hand a host secret to
	// a server.
	envGitHubToken = "GITHUB_TOKEN"
	// envControl is allowed through PROCESS_ENV_ALLOW.
	envControl = "GH_TOKEN"
	// envDatabaseURL carries a URL whose password is the secret: the
	// credential URL rule removes the variable, whatever its name, and
	// makes the password a known secret.
	envDatabaseURL = "DATABASE_URL"
	// envCarrier holds GITHUB_TOKEN's value inside a header for git, as a
	// deployment sets one (GIT_CONFIG_COUNT, _KEY_0 and _VALUE_0): no deny
	// rule matches the name and the value is not the secret alone, so only
	// the value rule's search for a secret inside a value removes it. The
	// token is a known secret only through the MCP loader.
	envCarrier = "GIT_CONFIG_VALUE_0"
)

// carrierEnv returns the variables that configure git to send
// GITHUB_TOKEN's value in a header: envCarrier and the two that make git
// read it.
func (s secretSet) carrierEnv() []string {
	return []string{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http.extraHeader",
		envCarrier + "=AUTHORIZATION: bearer " + s.byName(envGitHubToken).value}
}

// envValue returns what the variable carrying sec is set to: the value
// itself, or for DATABASE_URL a database URL with the value as its
// password.
func (sec secret) envValue() string {
	if sec.name == envDatabaseURL {
		return "postgres://app:" + sec.value + "@db.internal:5432/app?sslmode=require"
	}
	return sec.value
}

// randomString returns n characters drawn uniformly from alphabet with
// crypto/rand.
func randomString(alphabet string, n int) (string, error) {
	var b strings.Builder
	limit := big.NewInt(int64(len(alphabet)))
	for range n {
		i, err := rand.Int(rand.Reader, limit)
		if err != nil {
			return "", fmt.Errorf("reading random bytes: %w", err)
		}
		b.WriteByte(alphabet[i.Int64()])
	}
	return b.String(), nil
}

// newSecretSet generates the run's fake secrets. Their shapes follow the
// real ones (a bot token has a colon, a Google secret a GOCSPX- prefix), and
// the innocent one carries characters that URL and JSON encoding change, so
// that those forms differ from the raw value.
func newSecretSet() (secretSet, error) {
	type spec struct {
		name, prefix, alphabet string
		n                      int
		known                  bool
	}
	specs := []spec{
		{name: envBotToken, alphabet: base62, n: 35, known: true},
		{name: envOpenAIKey, prefix: "sk-fake-", alphabet: base62, n: 40, known: true},
		{name: envSpeechKey, prefix: "sk-speech-", alphabet: base62, n: 32, known: true},
		{name: envGoogleSecret, prefix: "GOCSPX-", alphabet: base62, n: 28, known: true},
		{name: envWebhookSecret, prefix: "whsec-", alphabet: base62, n: 32, known: true},
		{name: envDBPassword, alphabet: base62, n: 32, known: true},
		{name: envInnocent, alphabet: base62, n: 20, known: true},
		{name: envGitHubToken, prefix: "ghp_", alphabet: base62, n: 36, known: true},
		{name: envDatabaseURL, prefix: "pg-", alphabet: base62, n: 24, known: true},
		{name: envControl, prefix: "gho_", alphabet: base62, n: 36, known: true},
	}
	var set secretSet
	for _, s := range specs {
		body, err := randomString(s.alphabet, s.n)
		if err != nil {
			return secretSet{}, err
		}
		value := s.prefix + body
		switch s.name {
		case envBotToken:
			id, err := randomString("123456789", 10)
			if err != nil {
				return secretSet{}, err
			}
			value = id + ":AA" + body
		case envInnocent:
			tail, err := randomString(base62, 12)
			if err != nil {
				return secretSet{}, err
			}
			// '/', '+', '&' and '=' change under URL encoding, '&'
			// under encoding/json's HTML escaping.
			value = body[:10] + "/" + body[10:] + "+" + tail[:6] + "&v=" + tail[6:]
		}
		sec := secret{name: s.name, value: value, known: s.known, forms: derivedForms(value)}
		if s.name == envControl {
			set.control = sec
			continue
		}
		set.secrets = append(set.secrets, sec)
	}
	return set, nil
}

// byName returns the secret carried by name.
func (s secretSet) byName(name string) secret {
	for _, sec := range s.secrets {
		if sec.name == name {
			return sec
		}
	}
	if s.control.name == name {
		return s.control
	}
	panic("securitytest: no secret named " + name)
}

// searched returns every secret searched for in the channels: the secrets
// and the control.
func (s secretSet) searched() []secret {
	return append(slices.Clone(s.secrets), s.control)
}

// known returns the secrets the bot redacts, the control last, in a fixed
// order.
func (s secretSet) known() []secret {
	var out []secret
	for _, sec := range s.searched() {
		if sec.known {
			out = append(out, sec)
		}
	}
	return out
}

// derivedForms returns value and every derived form the redactor promises
// to catch, deduplicated: base64 (standard and URL-safe alphabets) at the
// three byte alignments inside a longer stream, only the characters that
// depend on the value's bytes alone; hex in lower and upper case;
// percent-encoding (query and path escaping, with upper- and lower-case
// hex); and JSON string escaping (encoding/json with and without HTML
// escaping).
func derivedForms(value string) []form {
	forms := []form{{"raw", value}}
	add := func(name, text string) {
		if text == "" {
			return
		}
		for _, f := range forms {
			if f.text == text {
				return
			}
		}
		forms = append(forms, form{name, text})
	}
	for _, enc := range []struct {
		name string
		enc  *base64.Encoding
	}{{"base64", base64.StdEncoding}, {"base64url", base64.URLEncoding}} {
		for align := range 3 {
			add(fmt.Sprintf("%s@%d", enc.name, align), base64Inner(enc.enc, value, align))
		}
	}
	add("hex", hex.EncodeToString([]byte(value)))
	add("HEX", strings.ToUpper(hex.EncodeToString([]byte(value))))
	for _, esc := range []struct {
		name string
		text string
	}{{"urlquery", url.QueryEscape(value)}, {"urlpath", url.PathEscape(value)}} {
		add(esc.name, esc.text)
		add(esc.name+"-lower", lowerPercent(esc.text))
	}
	add("json", jsonInner(value, true))
	add("json-nohtml", jsonInner(value, false))
	return forms
}

// base64Inner encodes value after align filler bytes (and before two more)
// and returns only the characters whose six bits all come from value's
// bytes: what any stream holding value at that alignment contains.
func base64Inner(enc *base64.Encoding, value string, align int) string {
	buf := make([]byte, 0, align+len(value)+2)
	buf = append(buf, make([]byte, align)...)
	buf = append(buf, value...)
	buf = append(buf, 0, 0)
	encoded := enc.EncodeToString(buf)
	startBit, endBit := 8*align, 8*(align+len(value))
	first := (startBit + 5) / 6
	last := endBit/6 - 1
	if last < first {
		return ""
	}
	return encoded[first : last+1]
}

// lowerPercent lower-cases the two hex digits of every %XX escape.
func lowerPercent(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			b.WriteByte('%')
			b.WriteString(strings.ToLower(s[i+1 : i+3]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// jsonInner returns value as a JSON string without its quotes.
func jsonInner(value string, escapeHTML bool) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(value); err != nil {
		return ""
	}
	out := strings.TrimSpace(buf.String())
	return out[1 : len(out)-1]
}

// finding is one secret found in one channel: names and forms only, never
// the value.
type finding struct {
	secret string
	form   string
	where  string
}

// String describes the finding without the value.
func (f finding) String() string {
	return fmt.Sprintf("%s (%s) in %s", f.secret, f.form, f.where)
}

// views returns the texts to search in one piece of channel content: the
// text itself, its HTML-unescaped form, and every string inside it when it
// is JSON (a document, JSON lines, or JSON encoded again inside a JSON
// string), decoded, so that no escaping can hide a value, also with every
// blank taken out, so that no line break can.
func views(text string) []string {
	out := []string{text}
	if u := html.UnescapeString(text); u != text {
		out = append(out, u)
	}
	var strs []string
	decodeJSONStrings(text, 0, &strs)
	if len(strs) > 0 {
		joined := strings.Join(strs, "\n")
		out = append(out, joined)
		if u := html.UnescapeString(joined); u != joined {
			out = append(out, u)
		}
		// An encoded form wrapped at line breaks (base64 -w, blocks of
		// one text joined) reads whole once the blanks are gone.
		if packed := strings.Join(strings.Fields(joined), ""); packed != joined {
			out = append(out, packed)
		}
	}
	return out
}

// maxJSONDepth bounds how many times a JSON string holding JSON is decoded
// again.
const maxJSONDepth = 4

// decodeJSONStrings appends every string inside text to out when text, or
// one of its lines, is a JSON value, and decodes those strings again when
// they are JSON themselves.
func decodeJSONStrings(text string, depth int, out *[]string) {
	if depth >= maxJSONDepth {
		return
	}
	try := func(s string) {
		s = strings.TrimSpace(s)
		if s == "" || (s[0] != '{' && s[0] != '[' && s[0] != '"') {
			return
		}
		var v any
		if json.Unmarshal([]byte(s), &v) != nil {
			return
		}
		var strs []string
		collectStrings(v, &strs)
		for _, str := range strs {
			*out = append(*out, str)
			decodeJSONStrings(str, depth+1, out)
		}
	}
	try(text)
	if strings.Contains(text, "\n") {
		for line := range strings.SplitSeq(text, "\n") {
			try(line)
		}
	}
}

// collectStrings appends every string (keys included) inside a decoded JSON
// value to out.
func collectStrings(v any, out *[]string) {
	switch v := v.(type) {
	case string:
		*out = append(*out, v)
	case []any:
		for _, e := range v {
			collectStrings(e, out)
		}
	case map[string]any:
		for k, e := range v {
			*out = append(*out, k)
			collectStrings(e, out)
		}
	}
}

// partialFraction is how much of a secret's raw value, as one run of
// characters, counts as the secret itself: a fragment left by a cut (half
// a value at the start of a truncated tail) is accepted, a value
// short of its last few characters is not.
const partialFraction = 0.75

// partialForm names a finding of a run of partialFraction of a value.
const partialForm = "partial>=75%"

// scan searches every piece of content (keyed by where it came from) for
// every form of every secret and returns what it found, deduplicated by
// secret, form and place.
func scan(secrets []secret, content []piece) []finding {
	var found []finding
	add := func(fd finding) {
		if !slices.Contains(found, fd) {
			found = append(found, fd)
		}
	}
	for _, p := range content {
		for _, text := range views(p.text) {
			for _, sec := range secrets {
				full := false
				for _, f := range sec.forms {
					if strings.Contains(text, f.text) {
						full = true
						add(finding{secret: sec.name, form: f.name, where: p.where})
					}
				}
				if !full && containsRun(text, sec.value, partialFraction) {
					add(finding{secret: sec.name, form: partialForm, where: p.where})
				}
			}
		}
	}
	return found
}

// piece is one piece of a channel's content and where it came from (a
// request, a file, a log line).
type piece struct {
	where string
	text  string
}

// containsRun reports whether text holds a run of at least fraction of
// value's characters, taken from anywhere in value.
func containsRun(text, value string, fraction float64) bool {
	k := int(float64(len(value))*fraction + 0.999)
	if k < 1 || k > len(value) {
		return false
	}
	for i := 0; i+k <= len(value); i++ {
		if strings.Contains(text, value[i:i+k]) {
			return true
		}
	}
	return false
}
