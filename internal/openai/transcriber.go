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
// and returns the transcript's text and, for the Whisper models, the
// language they heard. Whisper is asked for verbose_json, the one format
// that names the language; the newer transcription models (gpt-4o-…)
// accept only json and text, so they are asked for json and name none.
func (t *Transcriber) Transcribe(ctx context.Context, fileName string, audio []byte) (text, language string, err error) {
	format := goopenai.AudioResponseFormatJSON
	if strings.HasPrefix(t.model, "whisper") {
		format = goopenai.AudioResponseFormatVerboseJSON
	}
	resp, err := t.client.CreateTranscription(ctx, goopenai.AudioRequest{
		Model:    t.model,
		FilePath: fileName,
		Reader:   bytes.NewReader(audio),
		Format:   format,
	})
	if err != nil {
		return "", "", fmt.Errorf("openai: transcription: %w", err)
	}
	return strings.TrimSpace(resp.Text), strings.TrimSpace(resp.Language), nil
}
