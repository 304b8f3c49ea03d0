package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
)

// onlineTimeout bounds each of the doctor's network checks.
const onlineTimeout = 10 * time.Second

// doctorOnline checks that the bot token is accepted by the Bot API and
// that the model provider answers with the configured key. The requests are
// built here and their errors rewritten, so no URL (the token is in the Bot
// API's path) and no key ever reaches the output.
func doctorOnline(ctx context.Context, r *report, cfg Config, client *http.Client) {
	r.line("\nConnectivity")
	if name, err := checkTelegram(ctx, client, cfg.APIURL, cfg.BotToken); err != nil {
		r.problem("Telegram: %v", err)
	} else {
		r.line("  Telegram: the token belongs to @%s", name)
		doctorWebhook(ctx, r, cfg, client)
	}
	if cfg.Claude.Enabled {
		r.line("  model provider: claude-code (see Model provider)")
		return
	}
	models, err := checkProvider(ctx, client, cfg.OpenAIBaseURL, cfg.OpenAIKey)
	switch {
	case errors.Is(err, errNoModelList):
		r.warn("model provider: %v", err)
	case err != nil:
		r.problem("model provider: %v", err)
	case len(models) > 0 && !slices.Contains(models, cfg.Model):
		r.warn("model provider: answers, but does not list the model %s (OPENAI_MODEL)", cfg.Model)
	default:
		r.line("  model provider: answers at %s", hostOf(cfg.OpenAIBaseURL))
	}
}

// checkTelegram calls getMe and returns the bot's username.
func checkTelegram(ctx context.Context, client *http.Client, apiURL, token string) (string, error) {
	var me struct {
		OK          bool   `json:"ok"`
		Description string `json:"description"`
		Result      struct {
			Username string `json:"username"`
		} `json:"result"`
	}
	status, err := getJSON(ctx, client, apiURL+"/bot"+token+"/getMe", "", &me)
	switch {
	case err != nil:
		return "", fmt.Errorf("cannot reach %s: %w", hostOf(apiURL), err)
	case status == http.StatusUnauthorized || status == http.StatusNotFound:
		return "", errors.New("TELEGRAM_BOT_TOKEN was rejected (check it with @BotFather)")
	case status != http.StatusOK || !me.OK:
		return "", fmt.Errorf("getMe answered HTTP %d", status)
	}
	return me.Result.Username, nil
}

// errNoModelList reports a provider without a usable /models endpoint: many
// OpenAI-compatible servers have none, so the key cannot be checked.
var errNoModelList = errors.New("it has no /models list, so the key and model could not be checked")

// checkProvider lists the provider's models with the key.
func checkProvider(ctx context.Context, client *http.Client, baseURL, key string) ([]string, error) {
	if key == "" && strings.Contains(hostOf(baseURL), "api.openai.com") {
		return nil, errors.New("OPENAI_API_KEY is not set, and api.openai.com needs one")
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	status, err := getJSON(ctx, client, baseURL+"/models", key, &list)
	switch {
	case err != nil && status == 0:
		return nil, fmt.Errorf("cannot reach %s: %w", hostOf(baseURL), err)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return nil, fmt.Errorf("the key was rejected (HTTP %d): check OPENAI_API_KEY", status)
	case status != http.StatusOK || err != nil:
		return nil, errNoModelList
	}
	models := make([]string, 0, len(list.Data))
	for _, m := range list.Data {
		models = append(models, m.ID)
	}
	return models, nil
}

// getJSON GETs url and decodes a JSON body into v. Its errors never hold
// the URL: a transport error is reduced to its kind.
func getJSON(ctx context.Context, client *http.Client, url, bearer string, v any) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, onlineTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, errors.New("bad URL")
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, transportKind(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return resp.StatusCode, errors.New("the answer was cut off")
	}
	if err := json.Unmarshal(body, v); err != nil {
		return resp.StatusCode, errors.New("the answer is not JSON")
	}
	return resp.StatusCode, nil
}

// transportKind describes a failed request without its URL.
func transportKind(err error) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("no answer within %s", onlineTimeout)
	case errors.Is(err, context.Canceled):
		return errors.New("cancelled")
	}
	msg := err.Error()
	for _, kind := range []string{"connection refused", "no such host", "network is unreachable", "certificate", "connection reset", "i/o timeout"} {
		if strings.Contains(msg, kind) {
			return errors.New(kind)
		}
	}
	return errors.New("the request failed")
}
