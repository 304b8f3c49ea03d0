package openaitest_test

import (
	"bytes"
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	openai "github.com/sashabaranov/go-openai"

	"github.com/volcanic/telegram-agent/internal/openaitest"
)

func TestTranscription(t *testing.T) {
	audio := []byte("OggS\x00\x02fake-voice-note")
	tests := []struct {
		name       string
		transcript openaitest.Transcript
		format     openai.AudioResponseFormat
		wantText   string
		wantStatus int
	}{
		{name: "default json", transcript: openaitest.Transcript{Text: "hello there"}, wantText: "hello there"},
		{name: "json", transcript: openaitest.Transcript{Text: "hello there"}, format: openai.AudioResponseFormatJSON, wantText: "hello there"},
		{name: "verbose json", transcript: openaitest.Transcript{Text: "hi"}, format: openai.AudioResponseFormatVerboseJSON, wantText: "hi"},
		{name: "text", transcript: openaitest.Transcript{Text: "plain words"}, format: openai.AudioResponseFormatText, wantText: "plain words"},
		{
			name:       "error",
			transcript: openaitest.Transcript{Error: &openaitest.HTTPError{Status: 400, Message: "Invalid file format.", Type: "invalid_request_error"}},
			wantStatus: 400,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := openaitest.New(t)
			srv.EnqueueTranscripts(tt.transcript)
			resp, err := newClient(srv).CreateTranscription(testContext(t), openai.AudioRequest{
				Model:    openai.Whisper1,
				FilePath: "voice.ogg",
				Reader:   bytes.NewReader(audio),
				Format:   tt.format,
				Language: "en",
			})
			if tt.wantStatus != 0 {
				var apiErr *openai.APIError
				if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != tt.wantStatus {
					t.Fatalf("error = %v, want an APIError with status %d", err, tt.wantStatus)
				}
			} else if err != nil {
				t.Fatalf("CreateTranscription: %v", err)
			}
			if resp.Text != tt.wantText {
				t.Errorf("text = %q, want %q", resp.Text, tt.wantText)
			}
			got := srv.TranscriptionRequests()
			if len(got) != 1 {
				t.Fatalf("got %d transcription requests, want 1", len(got))
			}
			want := openaitest.TranscriptionRequest{
				Model: openai.Whisper1, Filename: "voice.ogg", File: audio,
				ResponseFormat: string(tt.format), Language: "en",
			}
			if diff := cmp.Diff(want, got[0], cmpopts.IgnoreFields(openaitest.TranscriptionRequest{}, "Fields")); diff != "" {
				t.Errorf("recorded request (-want +got):\n%s", diff)
			}
			if srv.Requests()[0].Path != "/v1/audio/transcriptions" || srv.Requests()[0].Method != http.MethodPost {
				t.Errorf("recorded %s %s", srv.Requests()[0].Method, srv.Requests()[0].Path)
			}
		})
	}
}

func TestTranscriptionUnscripted(t *testing.T) {
	tb := &fakeTB{TB: t}
	srv := openaitest.New(tb)
	_, err := newClient(srv).CreateTranscription(testContext(t), openai.AudioRequest{
		Model: openai.Whisper1, FilePath: "a.ogg", Reader: bytes.NewReader([]byte("x")),
	})
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.Message != openaitest.NoScriptedResponse {
		t.Errorf("error = %v, want the APIError %q", err, openaitest.NoScriptedResponse)
	}
	if tb.errorCount() != 1 {
		t.Errorf("server reported %d test errors, want 1", tb.errorCount())
	}
}

// A transcriber answers each request from its own audio once the queued
// transcripts are used up.
func TestTranscriber(t *testing.T) {
	srv := openaitest.New(t,
		openaitest.WithTranscripts(openaitest.Transcript{Text: "queued first"}),
		openaitest.WithTranscriber(func(req openaitest.TranscriptionRequest) openaitest.Transcript {
			if bytes.HasPrefix(req.File, []byte("fail")) {
				return openaitest.Transcript{Error: &openaitest.HTTPError{Status: 500, Message: "broken", Type: "server_error"}}
			}
			return openaitest.Transcript{Text: "heard " + string(req.File)}
		}))
	transcribe := func(audio string) (string, error) {
		resp, err := newClient(srv).CreateTranscription(testContext(t), openai.AudioRequest{
			Model: openai.Whisper1, FilePath: "voice.ogg", Reader: bytes.NewReader([]byte(audio)),
		})
		return resp.Text, err
	}
	var got []string
	for _, audio := range []string{"one", "two", "three"} {
		text, err := transcribe(audio)
		if err != nil {
			t.Fatalf("transcribing %q: %v", audio, err)
		}
		got = append(got, text)
	}
	if diff := cmp.Diff([]string{"queued first", "heard two", "heard three"}, got); diff != "" {
		t.Errorf("transcripts (-want +got):\n%s", diff)
	}
	var apiErr *openai.APIError
	if _, err := transcribe("fail now"); !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 500 {
		t.Errorf("error = %v, want the transcriber's 500", err)
	}
}
