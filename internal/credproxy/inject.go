package credproxy

import (
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
)

// bufferedBodyLimit is the largest request body checked for stand-ins
// before it is sent; a longer one is checked as it streams, and the
// request is cut off where a stand-in shows.
const bufferedBodyLimit = 1 << 20

// useState is what one request to a bound host carried: the variables
// whose real values went into it, the encoded credentials the proxy put
// in (a Basic pair), and a stand-in found in its body as it streamed.
type useState struct {
	host string
	used []string
	// encoded maps each encoded credential the proxy put in to the
	// same encoding of what the agent sent.
	encoded     map[string]string
	bodyRefusal error
}

// inject puts the real values in r's Authorization header in place of
// their stand-ins, where the credential is bound to the request's host:
// as the whole value, after "Bearer " or "token ", or as the user or the
// password of "Basic" (decoded, and encoded again, as git sends it). A
// stand-in anywhere else in the URL or the headers, one in a form the
// proxy does not swap, or one sent to a host its credential is not bound
// to refuses the request: the real value never goes where a host could
// echo it.
func (p *Proxy) inject(r *http.Request, st *useState) error {
	for _, c := range p.creds {
		if inURL(r.URL, c.StandIn) {
			return refuse(http.StatusForbidden, "credential proxy: the request to %s carries the value of %s in its URL (path or query); the real value is put only into the Authorization header, so send it as \"Authorization: Bearer $%s\" (or token, or Basic as git does) and keep it out of URLs", st.host, c.Variable, c.Variable)
		}
	}
	for name, values := range r.Header {
		if name == "Authorization" {
			continue
		}
		for _, v := range values {
			for _, c := range p.creds {
				if strings.Contains(v, c.StandIn) {
					return refuse(http.StatusForbidden, "credential proxy: the request to %s carries the value of %s in its %s header; the real value is put only into the Authorization header (Bearer, token or Basic), so send it there", st.host, c.Variable, name)
				}
			}
		}
	}
	auth := r.Header["Authorization"]
	for i, v := range auth {
		swapped, err := p.swap(v, st)
		if err != nil {
			return err
		}
		auth[i] = swapped
	}
	return nil
}

// inURL reports whether u holds s in its path or query, as written or
// decoded.
func inURL(u *url.URL, s string) bool {
	if strings.Contains(u.Path, s) || strings.Contains(u.RawPath, s) || strings.Contains(u.RawQuery, s) {
		return true
	}
	q, err := url.QueryUnescape(u.RawQuery)
	return err == nil && strings.Contains(q, s)
}

// swap returns one Authorization value with the stand-ins of the
// credentials bound to st.host replaced by their real values.
func (p *Proxy) swap(v string, st *useState) (string, error) {
	scheme, rest, spaced := strings.Cut(v, " ")
	if !spaced {
		scheme, rest = "", v
	}
	switch strings.ToLower(scheme) {
	case "basic":
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(rest))
		if err != nil {
			break
		}
		user, pass, hasPass := strings.Cut(string(raw), ":")
		u, uok, err := p.replace(user, st)
		if err != nil {
			return "", err
		}
		pw, pok, err := p.replace(pass, st)
		if err != nil {
			return "", err
		}
		if uok || pok {
			pair := u
			if hasPass {
				pair += ":" + pw
			}
			enc := base64.StdEncoding.EncodeToString([]byte(pair))
			if st.encoded == nil {
				st.encoded = map[string]string{}
			}
			st.encoded[enc] = strings.TrimSpace(rest)
			return scheme + " " + enc, nil
		}
		if c, ok := p.holds(string(raw)); ok {
			return "", p.notSwapped(c, st)
		}
	case "bearer", "token", "":
		cred := strings.TrimSpace(rest)
		if real, ok, err := p.replace(cred, st); err != nil {
			return "", err
		} else if ok {
			if scheme == "" {
				return real, nil
			}
			return scheme + " " + real, nil
		}
	}
	if c, ok := p.holds(v); ok {
		return "", p.notSwapped(c, st)
	}
	return v, nil
}

// replace returns the real value when s is the stand-in of a credential
// bound to st.host, and records its use; a stand-in of a credential bound
// elsewhere is an error.
func (p *Proxy) replace(s string, st *useState) (string, bool, error) {
	for _, c := range p.creds {
		if s != c.StandIn {
			continue
		}
		if !matchAny(c.Hosts, st.host) {
			return "", false, refuse(http.StatusForbidden, "credential proxy: %s is not for %s: it is bound to %s (CREDENTIAL_HOSTS), so the proxy does not send it here", c.Variable, st.host, strings.Join(c.Hosts, ", "))
		}
		st.used = append(st.used, c.Variable)
		return c.Value, true, nil
	}
	return s, false, nil
}

// holds returns the credential whose stand-in s holds.
func (p *Proxy) holds(s string) (Credential, bool) {
	for _, c := range p.creds {
		if strings.Contains(s, c.StandIn) {
			return c, true
		}
	}
	return Credential{}, false
}

// notSwapped refuses a stand-in in an Authorization value the proxy does
// not swap.
func (p *Proxy) notSwapped(c Credential, st *useState) error {
	return refuse(http.StatusForbidden, "credential proxy: the Authorization header to %s holds the value of %s in a form the proxy does not replace; send it alone, after Bearer or token, or as the user or password of Basic", st.host, c.Variable)
}

// inBody refuses a stand-in in a request body.
func (p *Proxy) inBody(c Credential, st *useState) error {
	return refuse(http.StatusForbidden, "credential proxy: the request to %s carries the value of %s in its body; the real value is put only into the Authorization header (Bearer, token or Basic), so send it there", st.host, c.Variable)
}

// scanBody passes a request body on and fails where a stand-in shows.
type scanBody struct {
	src  io.ReadCloser
	p    *Proxy
	st   *useState
	tail []byte
}

func (b *scanBody) Read(buf []byte) (int, error) {
	n, err := b.src.Read(buf)
	if n > 0 {
		// The tail of what came before, so a stand-in split between
		// reads is seen.
		window := append(b.tail, buf[:n]...)
		if c, ok := b.p.holds(string(window)); ok {
			b.st.bodyRefusal = b.p.inBody(c, b.st)
			return 0, b.st.bodyRefusal
		}
		keep := b.p.longestStandIn() - 1
		if len(window) > keep {
			window = window[len(window)-keep:]
		}
		b.tail = append(b.tail[:0], window...)
	}
	return n, err
}

func (b *scanBody) Close() error { return b.src.Close() }

// longestStandIn is the length of the longest stand-in.
func (p *Proxy) longestStandIn() int {
	n := 1
	for _, c := range p.creds {
		n = max(n, len(c.StandIn))
	}
	return n
}

// answerPatterns is what an answer to a request is matched for: every
// real value, replaced by its stand-in, and the encoded credentials the
// request carried, replaced by what the agent sent in their place.
func (p *Proxy) answerPatterns(st *useState) *patternSet {
	if st == nil {
		return p.answers
	}
	return p.answers.withExtra(st.encoded)
}

// logUse logs a request that a real value went into: names only.
func (p *Proxy) logUse(r *http.Request, st *useState, status int) {
	if len(st.used) == 0 {
		return
	}
	// LogAttrs, not Info: no argument is boxed, so the line costs
	// nothing when the level is off and little when it is on.
	p.logger.LogAttrs(context.Background(), slog.LevelInfo, "credential proxy: credential used",
		slog.String("variable", strings.Join(st.used, ",")),
		slog.String("method", r.Method),
		slog.String("host", st.host),
		slog.String("path", r.URL.Path),
		slog.Int("status", status))
}
