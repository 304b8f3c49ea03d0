package openai

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"

	goopenai "github.com/sashabaranov/go-openai"
)

// TranscriberConfig configures [NewTranscriber]. Zero fields take the
// defaults.
type TranscriberConfig struct {
	// APIKey is sent as the bearer token (TELEGRAM_SPEECH_API_KEY).
	APIKey string
	// BaseURL is the API's base URL (TELEGRAM_SPEECH_BASE_URL), default
	// [DefaultBaseURL].
	BaseURL string
	// Model is the transcription model (TELEGRAM_SPEECH_MODEL), default
	// whisper-1.
	Model string
	// HTTPClient is the client to use (default http.DefaultClient).
	HTTPClient *http.Client
}

// Transcriber turns audio into text through an OpenAI-compatible
// /audio/transcriptions endpoint.
type Transcriber struct {
	client *goopenai.Client
	model  string
}

// NewTranscriber returns a transcriber for the endpoint cfg describes.
func NewTranscriber(cfg TranscriberConfig) *Transcriber {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	oc := goopenai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	if cfg.HTTPClient != nil {
		oc.HTTPClient = cfg.HTTPClient
	}
	if cfg.Model == "" {
		cfg.Model = goopenai.Whisper1
	}
	return &Transcriber{client: goopenai.NewClientWithConfig(oc), model: cfg.Model}
}

// Transcribe sends audio, named fileName (its extension tells the format),
// and returns the transcript's text.
func (t *Transcriber) Transcribe(ctx context.Context, fileName string, audio []byte) (string, error) {
	resp, err := t.client.CreateTranscription(ctx, goopenai.AudioRequest{
		Model:    t.model,
		FilePath: fileName,
		Reader:   bytes.NewReader(audio),
		Format:   goopenai.AudioResponseFormatJSON,
	})
	if err != nil {
		return "", fmt.Errorf("openai: transcription: %w", err)
	}
	return strings.TrimSpace(resp.Text), nil
}
