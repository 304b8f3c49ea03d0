package botapi_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/chat/botapi"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// TestUnreachable calls getMe on servers that cannot answer and checks
// that the error tells the host and the kind of failure, and that its text
// holds neither the token nor the request's URL.
func TestUnreachable(t *testing.T) {
	const token = "4242424242:unreachable-token-value-0051"
	refusedAddr := telegramtest.ClosedAddr(t)
	tlsServer := httptest.NewUnstartedServer(http.NotFoundHandler())
	tlsServer.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake the client refuses
	tlsServer.StartTLS()
	t.Cleanup(tlsServer.Close)
	// A name that does not resolve, without asking a resolver: the dial
	// fails as the resolver's answer would.
	noSuchHost := &http.Client{Transport: &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "api.telegram.example", IsNotFound: true}}
	}}}
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	tests := []struct {
		name, base, host, kind string
		client                 *http.Client
	}{
		{"DNS", "https://api.telegram.example", "api.telegram.example", botapi.NetworkDNS, noSuchHost},
		{"refused", "http://" + refusedAddr, refusedAddr, botapi.NetworkRefused, &http.Client{}},
		{"TLS", tlsServer.URL, strings.TrimPrefix(tlsServer.URL, "https://"), botapi.NetworkTLS, &http.Client{}},
		{"timeout", "http://" + silent.Addr().String(), silent.Addr().String(), botapi.NetworkTimeout, &http.Client{Timeout: 100 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := botapi.New(token, redactor.New([]string{token}), botapi.WithBaseURL(tt.base), botapi.WithHTTPClient(tt.client),
				botapi.WithRetryPolicy(botapi.RetryPolicy{Attempts: 1}))
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.GetMe(context.Background())
			host, kind, ok := botapi.Unreachable(err)
			if !ok || host != tt.host || kind != tt.kind {
				t.Errorf("Unreachable = %q, %q, %v; want %q, %q, true (error %v)", host, kind, ok, tt.host, tt.kind, err)
			}
			if text := fmt.Sprint(err); strings.Contains(text, token) || strings.Contains(text, "/bot") || strings.Contains(text, "://") {
				t.Errorf("the error's text holds the token or the URL: %s", strings.ReplaceAll(text, token, "<the token>"))
			}
		})
	}

	t.Run("cancelled", func(t *testing.T) {
		c, err := botapi.New(token, redactor.New(nil), botapi.WithBaseURL("http://"+silent.Addr().String()), botapi.WithRetryPolicy(botapi.RetryPolicy{Attempts: 1}))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		_, err = c.GetMe(ctx)
		if _, _, ok := botapi.Unreachable(err); ok || !errors.Is(err, context.Canceled) {
			t.Errorf("a cancelled call: Unreachable %v, error %v; want not unreachable, context.Canceled", ok, err)
		}
	})
	t.Run("an answer", func(t *testing.T) {
		if _, _, ok := botapi.Unreachable(&botapi.Error{Method: "getMe", Code: 502, Description: "Bad Gateway"}); ok {
			t.Error("an HTTP answer is unreachable")
		}
	})
}
