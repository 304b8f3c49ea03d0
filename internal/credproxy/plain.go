package credproxy

import (
	"net/http"
)

// forwardPlain forwards a plain HTTP request (HTTP_PROXY): refused for a
// bound host, whose credential goes only over TLS, and for a host the
// tier does not let agents reach; passed on as it is otherwise.
func (p *Proxy) forwardPlain(w http.ResponseWriter, r *http.Request) {
	if r.URL.Scheme != "http" {
		writeRefusal(w, refuse(http.StatusBadRequest, "credential proxy: only http:// URLs are forwarded in plain; https goes through CONNECT"))
		return
	}
	host, _ := splitTarget(r.URL.Host, "80")
	if p.bound(host) {
		writeRefusal(w, refuse(http.StatusForbidden, "credential proxy: plain HTTP to %s is refused: it is a bound host, whose credential goes only over HTTPS; use https://%s", host, host))
		return
	}
	if err := p.reachable(host); err != nil {
		writeRefusal(w, err)
		return
	}
	p.plain.ServeHTTP(w, r)
}
