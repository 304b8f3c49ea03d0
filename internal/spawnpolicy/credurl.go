package spawnpolicy

import (
	"net/url"
	"slices"
	"strings"
)

// ruleCredentialURL is the rule Explain names for a variable removed because
// its value is a URL that carries a credential.
const ruleCredentialURL = "credential URL"

// URLCredentials returns the credentials a variable's value carries when it
// is an absolute URL: the password of its user information (decoded, and as
// the URL spells it when that differs) and the value of every query
// parameter whose name looks like it holds a token (token, key, secret,
// pass, pwd, auth, sig, credential or session in it, in any case; decoded,
// and as spelt). It returns nil for a value that is not such a URL. Empty
// values are left out; short ones are not, so that the caller can say that
// they are too short to redact.
func URLCredentials(value string) []string {
	value = strings.TrimSpace(value)
	if !strings.Contains(value, "://") {
		return nil
	}
	u, err := url.Parse(value)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil
	}
	var out []string
	add := func(v string) {
		if v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	if p, ok := u.User.Password(); ok {
		add(p)
		add(writtenPassword(value))
	}
	for part := range strings.SplitSeq(u.RawQuery, "&") {
		name, written, _ := strings.Cut(part, "=")
		if key, err := url.QueryUnescape(name); err == nil {
			name = key
		}
		if !tokenLikeParam(name) {
			continue
		}
		if decoded, err := url.QueryUnescape(written); err == nil {
			add(decoded)
		}
		add(written)
	}
	return out
}

// credentialURL reports whether value is a URL that carries a credential.
func credentialURL(value string) bool {
	return strings.Contains(value, "://") && len(URLCredentials(value)) > 0
}

// tokenLikeParam reports whether a query parameter's name looks like it
// holds a credential (token=, api_key=, sig=, X-Amz-Signature=,
// client_secret=, password=, auth=, sessionid=).
func tokenLikeParam(name string) bool {
	name = strings.ToLower(name)
	for _, word := range [...]string{"token", "key", "secret", "pass", "pwd", "auth", "sig", "credential", "session"} {
		if strings.Contains(name, word) {
			return true
		}
	}
	return false
}

// writtenPassword returns the password of an absolute URL's user
// information exactly as raw spells it, or "": its escaping (":" as %3A, "$"
// left alone) is not one a redactor derives from the decoded password.
func writtenPassword(raw string) string {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return ""
	}
	if end := strings.IndexAny(rest, "/?#"); end >= 0 {
		rest = rest[:end]
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return ""
	}
	_, pass, ok := strings.Cut(rest[:at], ":")
	if !ok {
		return ""
	}
	return pass
}
