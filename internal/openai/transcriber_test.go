package openai

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/volcanic/telegram-agent/internal/openaitest"
)

func TestTranscribe(t *testing.T) {
	audio := []byte("OggS fake audio")
	tests := []struct {
		name       string
		model      string
		wantModel  string
		wantFormat string
		// wantLanguage is what Transcribe reports: Whisper's verbose_json
		// names it, json does not.
		wantLanguage string
	}{
		{name: "default model", wantModel: "whisper-1", wantFormat: "verbose_json", wantLanguage: "german"},
		{name: "configured model", model: "gpt-4o-transcribe", wantModel: "gpt-4o-transcribe", wantFormat: "json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := openaitest.New(t, openaitest.WithTranscripts(openaitest.Transcript{Text: "  water the plants\n", Language: "german"}))
			tr := NewTranscriber(TranscriberConfig{APIKey: "sk-speech-key", BaseURL: srv.URL() + "/", Model: tt.model})
			got, language, err := tr.Transcribe(context.Background(), "voice.ogg", audio)
			if err != nil {
				t.Fatalf("Transcribe: %v", err)
			}
			if diff := cmp.Diff("water the plants", got); diff != "" {
				t.Errorf("transcript (-want +got):\n%s", diff)
			}
			if language != tt.wantLanguage {
				t.Errorf("language %q, want %q", language, tt.wantLanguage)
			}
			reqs := srv.TranscriptionRequests()
			if len(reqs) != 1 {
				t.Fatalf("got %d transcription requests, want 1", len(reqs))
			}
			r := reqs[0]
			if r.Model != tt.wantModel || r.Filename != "voice.ogg" || string(r.File) != string(audio) {
				t.Errorf("request model %q, file %q of %d bytes", r.Model, r.Filename, len(r.File))
			}
			if r.ResponseFormat != tt.wantFormat {
				t.Errorf("response_format %q, want %q", r.ResponseFormat, tt.wantFormat)
			}
		})
	}
}

func TestTranscribeError(t *testing.T) {
	srv := openaitest.New(t, openaitest.WithTranscripts(openaitest.Transcript{
		Error: &openaitest.HTTPError{Status: 503, Message: "service unavailable"},
	}))
	tr := NewTranscriber(TranscriberConfig{APIKey: "sk-speech-key", BaseURL: srv.URL()})
	_, _, err := tr.Transcribe(context.Background(), "voice.ogg", []byte("audio"))
	if err == nil {
		t.Fatal("Transcribe succeeded against a 503")
	}
	if !strings.HasPrefix(err.Error(), "openai: transcription: ") || !strings.Contains(err.Error(), "service unavailable") {
		t.Errorf("error %q does not name the operation and the server's message", err)
	}
}
