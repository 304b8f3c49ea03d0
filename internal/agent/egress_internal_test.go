package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/volcanic/telegram-agent/internal/redactor"
)

// egressSecret is the fake secret of the boundary's own tests.
const egressSecret = "sk-test-EGRESSVALUE-1234567890"

// nopProvider answers nothing: the internal tests call redactRequest.
type nopProvider struct{}

func (nopProvider) Complete(context.Context, Request, func(string)) (Response, error) {
	return Response{}, nil
}

// TestEgressCache checks that a long text is redacted the same from the
// cache as afresh, that a copy of it is found by its content, and that an
// entry the last egressKeep requests left unused is forgotten.
func TestEgressCache(t *testing.T) {
	e := newEgress(nopProvider{}, redactor.New([]string{egressSecret}))
	long := strings.Repeat("long text ", 40) + egressSecret
	other := strings.Repeat("other text ", 40)
	req := func(texts ...string) Request {
		r := Request{}
		for _, text := range texts {
			r.Messages = append(r.Messages, Message{Role: RoleUser, Content: []Content{Text(text)}})
		}
		return r
	}
	first := e.redactRequest(req(long, other))
	second := e.redactRequest(req(long, other))
	for i, r := range []Request{first, second} {
		if got := r.Messages[0].Content[0].Text; strings.Contains(got, egressSecret) || !strings.Contains(got, redactor.Token) {
			t.Errorf("request %d: the long text is not redacted", i)
		}
	}
	if first.Messages[0].Content[0].Text != second.Messages[0].Content[0].Text {
		t.Error("the cached redaction differs from the fresh one")
	}
	// A copy of the text, as a shortened tool result is rebuilt for each
	// request, in another place of the conversation, is found by its
	// content.
	rebuilt := strings.Clone(long)
	third := e.redactRequest(req(other, rebuilt))
	if third.Messages[1].Content[0].Text != first.Messages[0].Content[0].Text {
		t.Error("the rebuilt text's redaction differs")
	}
	if _, ok := e.byText[textKey{data: unsafe.StringData(rebuilt), n: len(rebuilt)}]; !ok {
		t.Error("the rebuilt text is not remembered")
	}
	hashKey := egressKey{hash: maphash.String(e.seed, long), n: len(long)}
	if entry := e.cache[hashKey]; entry == nil || entry.gen != e.gen {
		t.Error("the rebuilt text was not found by its content")
	}
	// The text was last used by the second request: the sweep after
	// egressKeep requests in all keeps it, the next one forgets it.
	key := textKey{data: unsafe.StringData(long), n: len(long)}
	for e.gen < egressKeep {
		e.redactRequest(req(other))
	}
	if _, ok := e.byText[key]; !ok {
		t.Errorf("an entry used %d requests ago is forgotten", e.gen-2)
	}
	for e.gen < 2*egressKeep {
		e.redactRequest(req(other))
	}
	if _, ok := e.byText[key]; ok {
		t.Errorf("an entry unused by the last %d requests is still remembered", e.gen-2)
	}
	if _, ok := e.cache[hashKey]; ok {
		t.Error("a hash entry long unused is still remembered")
	}
}

// benchConversation returns a conversation of about tokens tokens (four
// bytes a token): user prompts, assistant answers with tool calls, and tool
// results of about 2 KiB.
func benchConversation(tokens int) []Message {
	var msgs []Message
	size := 0
	for i := 0; size < tokens*4; i++ {
		result := strings.Repeat(fmt.Sprintf("line %d of the output of a command, with a path /srv/app/%d and a figure %d\n", i, i, i*7), 28)
		turn := []Message{
			{Role: RoleUser, Content: []Content{Text(fmt.Sprintf("Please look at item %d and tell me what changed since yesterday.", i))}},
			{Role: RoleAssistant, Content: []Content{Text("Looking.")}, ToolCalls: []ToolCall{{ID: fmt.Sprintf("call_%d", i), Name: "bash", Arguments: fmt.Sprintf(`{"command":"git log -p -- item/%d"}`, i)}}},
			{Role: RoleTool, ToolCallID: fmt.Sprintf("call_%d", i), ToolName: "bash", Content: []Content{Text(result)}},
			{Role: RoleAssistant, Content: []Content{Text(strings.Repeat("The item changed in three places; here is what each change does. ", 6))}},
		}
		for _, m := range turn {
			size += len(TextOf(m.Content))
		}
		msgs = append(msgs, turn...)
	}
	return msgs
}

// BenchmarkEgress measures the boundary on a conversation near a 128k-token
// window against the JSON encoding of the same request, in the same run.
// The conversation grows by one new tool result a request, as a turn does,
// from 128k tokens on for 64 requests, then starts over from 128k tokens (a
// compaction), so each new text is one the boundary has never seen:
// "cached" is that steady state, "uncached" a boundary that has seen
// nothing, "json" the encoding the provider adapter does anyway (of the
// agent's request; the adapter's own request has the same texts), and
// "interleaved" the first and the third on the same requests, one after the
// other, so that the load of a shared machine weighs on both alike, with
// the boundary's time as a share of the encoding's.
func BenchmarkEgress(b *testing.B) {
	const growth = 64
	secrets := make([]string, 10)
	for i := range secrets {
		secrets[i] = fmt.Sprintf("sk-bench-secret-%02d-0123456789abcdef", i)
	}
	red := redactor.New(secrets)
	msgs := benchConversation(128000)
	base := len(msgs)
	for i := range growth {
		msgs = append(msgs, Message{Role: RoleTool, ToolCallID: fmt.Sprintf("call_new_%d", i), ToolName: "bash",
			Content: []Content{Text(strings.Repeat(fmt.Sprintf("new output %d of the latest command\n", i), 60))}})
	}
	system := strings.Repeat("You are a helpful agent. Follow the operator's AGENTS.md. ", 60)
	request := func(i int) Request {
		return Request{Model: "bench-model", System: system, Messages: msgs[:base+1+i%growth]}
	}
	b.Run("cached", func(b *testing.B) {
		e := newEgress(nopProvider{}, red)
		i := 0
		for b.Loop() {
			e.redactRequest(request(i))
			i++
		}
	})
	b.Run("interleaved", func(b *testing.B) {
		e := newEgress(nopProvider{}, red)
		var inEgress, inJSON time.Duration
		i := 0
		for b.Loop() {
			req := request(i)
			i++
			start := time.Now()
			e.redactRequest(req)
			mid := time.Now()
			if _, err := json.Marshal(req); err != nil {
				b.Fatal(err)
			}
			inEgress += mid.Sub(start)
			inJSON += time.Since(mid)
		}
		b.ReportMetric(float64(inEgress.Nanoseconds())/float64(b.N), "egress-ns/op")
		b.ReportMetric(float64(inJSON.Nanoseconds())/float64(b.N), "json-ns/op")
		b.ReportMetric(100*inEgress.Seconds()/inJSON.Seconds(), "%-of-json")
	})
	b.Run("uncached", func(b *testing.B) {
		i := 0
		for b.Loop() {
			newEgress(nopProvider{}, red).redactRequest(request(i))
			i++
		}
	})
	b.Run("json", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if _, err := json.Marshal(request(i)); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

// TestEgressIgnoresMessagesChangedInPlace: a caller that changes the
// messages it sent, in place (a text block, a tool call, an image's bytes),
// and sends them again, must get the change redacted, not the remembered
// result of what the memory held before. The boundary keeps its own copies.
func TestEgressIgnoresMessagesChangedInPlace(t *testing.T) {
	secretPNG := append([]byte("\x89PNG\r\n\x1a\n"), egressSecret...)
	tests := []struct {
		name   string
		msg    func() Message
		change func(*Message)
	}{
		{"text block", func() Message {
			return Message{Role: RoleUser, Content: []Content{Text("harmless text")}}
		}, func(m *Message) { m.Content[0].Text = "now " + egressSecret }},
		{"tool call", func() Message {
			return Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"true"}`}}}
		}, func(m *Message) { m.ToolCalls[0].Arguments = `{"command":"` + egressSecret + `"}` }},
		{"image bytes", func() Message {
			return Message{Role: RoleUser, Content: []Content{{Type: ImageContent, MIMEType: "image/png", Data: []byte(strings.Repeat("p", len(secretPNG)))}}}
		}, func(m *Message) { copy(m.Content[0].Data, secretPNG) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			red := redactor.New([]string{egressSecret})
			e := newEgress(nopProvider{}, red)
			msgs := []Message{tt.msg()}
			e.redactRequest(Request{Messages: msgs})
			tt.change(&msgs[0])
			out := e.redactRequest(Request{Messages: msgs})
			b, err := json.Marshal(out)
			if err != nil {
				t.Fatal(err)
			}
			// The redactor finds the secret in any form, an image's base64 too.
			if red.Redact(string(b)) != string(b) {
				t.Error("the message changed in place went out with the secret")
			}
		})
	}
}
