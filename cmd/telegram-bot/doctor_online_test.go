package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

func TestCheckTelegram(t *testing.T) {
	const token = "123456:fake-token-for-getme-0009"
	tg := telegramtest.New(t, telegramtest.WithToken(token))
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	tests := []struct {
		name, url, token, wantErr string
	}{
		{name: "accepted", url: tg.URL(), token: token},
		{name: "rejected", url: tg.URL(), token: "123456:another-fake-token-0010", wantErr: "TELEGRAM_BOT_TOKEN was rejected"},
		{name: "unreachable", url: closed.URL, token: token, wantErr: "cannot reach 127.0.0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name, err := checkTelegram(context.Background(), &http.Client{}, tt.url, tt.token)
			if tt.wantErr == "" {
				if err != nil || name == "" {
					t.Fatalf("checkTelegram = %q, %v; want a bot name", name, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("checkTelegram error = %v, want %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), tt.token) || strings.Contains(err.Error(), "/bot") {
				t.Errorf("the error shows the token or the request path (length %d)", len(err.Error()))
			}
		})
	}
}

func TestCheckProvider(t *testing.T) {
	const key = "sk-fake-provider-key-0011"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/nolist/models":
			http.NotFound(w, r)
		case r.Header.Get("Authorization") != "Bearer "+key:
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":{"message":"Incorrect API key provided"}}`)
		default:
			fmt.Fprint(w, `{"data":[{"id":"gpt-test"},{"id":"other"}]}`)
		}
	}))
	defer srv.Close()
	tests := []struct {
		name, base, key string
		want            []string
		wantErr         string
		wantNoList      bool
	}{
		{name: "lists models", base: srv.URL + "/v1", key: key, want: []string{"gpt-test", "other"}},
		{name: "bad key", base: srv.URL + "/v1", key: "sk-wrong-key-000000012", wantErr: "the key was rejected (HTTP 401)"},
		{name: "no model list", base: srv.URL + "/nolist", key: key, wantNoList: true},
		{name: "openai without a key", base: "https://api.openai.com/v1", wantErr: "OPENAI_API_KEY is not set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := checkProvider(context.Background(), &http.Client{}, tt.base, tt.key)
			switch {
			case tt.wantNoList:
				if !errors.Is(err, errNoModelList) {
					t.Fatalf("checkProvider error = %v, want errNoModelList", err)
				}
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("checkProvider error = %v, want %q", err, tt.wantErr)
				}
				if tt.key != "" && strings.Contains(err.Error(), tt.key) {
					t.Error("the error shows the key")
				}
			default:
				if err != nil || strings.Join(got, ",") != strings.Join(tt.want, ",") {
					t.Fatalf("checkProvider = %q, %v; want %q", got, err, tt.want)
				}
			}
		})
	}
}
