package chat

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// Transcriber turns a voice note or an audio file into text.
type Transcriber interface {
	Transcribe(ctx context.Context, fileName string, audio []byte) (string, error)
}

// OpenAITranscriber transcribes through an OpenAI-compatible
// /audio/transcriptions endpoint, with go-openai's CreateTranscription.
type OpenAITranscriber struct {
	client *openai.Client
	model  string
}

// TranscriberOption configures an OpenAITranscriber built by
// NewOpenAITranscriber.
type TranscriberOption func(*transcriberConfig)

// transcriberConfig holds a transcriber's optional parts.
type transcriberConfig struct {
	httpClient *http.Client
}

// WithTranscriberHTTPClient sets the HTTP client of the transcription
// requests (default: http.DefaultClient).
func WithTranscriberHTTPClient(c *http.Client) TranscriberOption {
	return func(tc *transcriberConfig) { tc.httpClient = c }
}

// NewOpenAITranscriber returns a transcriber for the endpoint at baseURL
// (TELEGRAM_SPEECH_BASE_URL) with key and model (empty: whisper-1).
func NewOpenAITranscriber(baseURL, key, model string, opts ...TranscriberOption) *OpenAITranscriber {
	var tc transcriberConfig
	for _, o := range opts {
		if o != nil {
			o(&tc)
		}
	}
	cfg := openai.DefaultConfig(key)
	cfg.BaseURL = strings.TrimRight(baseURL, "/")
	if tc.httpClient != nil {
		cfg.HTTPClient = tc.httpClient
	}
	if model == "" {
		model = openai.Whisper1
	}
	return &OpenAITranscriber{client: openai.NewClientWithConfig(cfg), model: model}
}

// Transcribe sends audio and returns the transcript's text.
func (t *OpenAITranscriber) Transcribe(ctx context.Context, fileName string, audio []byte) (string, error) {
	resp, err := t.client.CreateTranscription(ctx, openai.AudioRequest{
		Model:    t.model,
		FilePath: fileName,
		Reader:   bytes.NewReader(audio),
		Format:   openai.AudioResponseFormatJSON,
	})
	if err != nil {
		return "", fmt.Errorf("chat: transcription: %w", err)
	}
	return strings.TrimSpace(resp.Text), nil
}
