package openaitest_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	openai "github.com/sashabaranov/go-openai"

	"github.com/volcanic/telegram-agent/internal/openaitest"
)

func TestRecordsChatRequest(t *testing.T) {
	const secret = "hunter2-secret-value"
	params := json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)
	req := openai.ChatCompletionRequest{
		Model: testModel,
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: "You are helpful."},
			{Role: openai.ChatMessageRoleUser, MultiContent: []openai.ChatMessagePart{
				{Type: openai.ChatMessagePartTypeText, Text: "What is in this photo?"},
				{Type: openai.ChatMessagePartTypeImageURL, ImageURL: &openai.ChatMessageImageURL{
					URL: "data:image/png;base64,iVBORw0KGgo=", Detail: openai.ImageURLDetailAuto,
				}},
				{Type: openai.ChatMessagePartTypeText, Text: "Be brief."},
			}},
			{Role: openai.ChatMessageRoleAssistant, ToolCalls: []openai.ToolCall{{
				ID: "call_1", Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: "bash", Arguments: `{"command":"env"}`},
			}}},
			{Role: openai.ChatMessageRoleTool, ToolCallID: "call_1", Content: "TOKEN=" + secret},
		},
		Tools: []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: "bash", Description: "Run a command.", Parameters: params,
		}}},
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	}
	srv := openaitest.New(t, openaitest.WithScript(openaitest.Text("ok")))
	streamAll(t, srv, req)

	want := []openaitest.ChatRequest{{
		Model: testModel,
		Messages: []openaitest.Message{
			{Role: "system", Content: "You are helpful."},
			{Role: "user", Parts: []openaitest.ContentPart{
				{Type: "text", Text: "What is in this photo?"},
				{Type: "image_url", ImageURL: "data:image/png;base64,iVBORw0KGgo=", ImageDetail: "auto"},
				{Type: "text", Text: "Be brief."},
			}},
			{Role: "assistant", ToolCalls: []openaitest.ToolCall{{ID: "call_1", Name: "bash", Arguments: `{"command":"env"}`}}},
			{Role: "tool", ToolCallID: "call_1", Content: "TOKEN=" + secret},
		},
		Tools:        []openaitest.Tool{{Type: "function", Name: "bash", Description: "Run a command.", Parameters: params}},
		Stream:       true,
		IncludeUsage: true,
	}}
	got := srv.ChatRequests()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ChatRequests (-want +got):\n%s", diff)
	}
	if text := got[0].Messages[1].Text(); text != "What is in this photo?\nBe brief." {
		t.Errorf("Text() of multi-part message = %q", text)
	}

	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Method != http.MethodPost || reqs[0].Path != "/v1/chat/completions" {
		t.Fatalf("Requests() = %d requests, first %s %s", len(reqs), reqs[0].Method, reqs[0].Path)
	}
	if reqs[0].Header.Get("Authorization") != "Bearer "+testKey {
		t.Error("Authorization header does not carry the test key") // Never print the header.
	}
	found := false
	for _, body := range srv.AllBodies() {
		found = found || bytes.Contains(body, []byte(secret))
	}
	if !found {
		t.Error("AllBodies() does not contain the value the client sent")
	}
}

func TestRecordsCopies(t *testing.T) {
	srv := openaitest.New(t, openaitest.WithScript(openaitest.Text("ok")))
	if _, err := newClient(srv).CreateChatCompletion(testContext(t), chatRequest("hi")); err != nil {
		t.Fatalf("CreateChatCompletion: %v", err)
	}
	first := srv.Requests()
	first[0].Body[0] = 'X'
	first[0].Header.Set("Authorization", "changed")
	srv.AllBodies()[0][0] = 'Y'
	again := srv.Requests()
	if again[0].Body[0] != '{' || again[0].Header.Get("Authorization") == "changed" {
		t.Error("changing what Requests or AllBodies returned changed the server's log")
	}
}

func TestRecordsUnknownPaths(t *testing.T) {
	srv := openaitest.New(t)
	_, err := newClient(srv).ListModels(testContext(t))
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != http.StatusNotFound {
		t.Errorf("ListModels error = %v, want a 404 APIError", err)
	}
	got := srv.Requests()
	if len(got) != 1 || got[0].Path != "/v1/models" || got[0].Method != http.MethodGet {
		t.Errorf("Requests() = %+v, want one GET /v1/models", got)
	}
}

func TestWaitForRequests(t *testing.T) {
	tests := []struct {
		name    string
		send    int
		wait    int
		wantErr bool
	}{
		{name: "already there", send: 2, wait: 2},
		{name: "fewer than sent", send: 3, wait: 1},
		{name: "times out", send: 1, wait: 2, wantErr: true},
		{name: "none wanted", send: 0, wait: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := openaitest.New(t, openaitest.WithResponder(func(openaitest.ChatRequest) openaitest.Response {
				return openaitest.Text("ok")
			}))
			client := newClient(srv)
			ctx := testContext(t)
			var wg sync.WaitGroup
			for range tt.send {
				wg.Go(func() {
					if _, err := client.CreateChatCompletion(ctx, chatRequest("hi")); err != nil {
						t.Errorf("CreateChatCompletion: %v", err)
					}
				})
			}
			got, err := srv.WaitForRequests(tt.wait, 200*time.Millisecond)
			wg.Wait()
			if (err != nil) != tt.wantErr {
				t.Fatalf("WaitForRequests error = %v, want error: %v", err, tt.wantErr)
			}
			if err == nil && len(got) < tt.wait {
				t.Errorf("WaitForRequests returned %d requests, want at least %d", len(got), tt.wait)
			}
		})
	}
}

// With a record limit the server keeps the latest requests only: at least
// the limit, never more than twice it, the newest last.
func TestRecordLimit(t *testing.T) {
	srv := openaitest.New(t, openaitest.WithRecordLimit(3), openaitest.WithResponder(func(req openaitest.ChatRequest) openaitest.Response {
		return openaitest.Text("ok")
	}))
	for i := range 10 {
		if _, err := newClient(srv).CreateChatCompletion(testContext(t), chatRequest("hi "+strconv.Itoa(i))); err != nil {
			t.Fatalf("CreateChatCompletion: %v", err)
		}
	}
	got := srv.ChatRequests()
	if len(got) < 3 || len(got) > 6 {
		t.Fatalf("kept %d requests, want 3 to 6", len(got))
	}
	if last := got[len(got)-1].LastMessage().Text(); last != "hi 9" {
		t.Errorf("the newest kept request says %q, want %q", last, "hi 9")
	}
}
