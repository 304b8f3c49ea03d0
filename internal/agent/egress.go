package agent

import (
	"bytes"
	"context"
	"encoding/base64"
	"hash/maphash"
	"slices"
	"sync"
	"unsafe"

	"github.com/volcanic/telegram-agent/internal/redactor"
)

// withheldImage is the text that stands, in a model request, for an image
// whose bytes or base64 hold a known secret.
const withheldImage = "[image withheld: it holds a secret]"

// egressCacheMin is the length from which a text's redaction is remembered
// by content too: a shorter text that is not the same string as before is
// scanned again, which costs less than hashing it.
const egressCacheMin = 256

// egress is the boundary every model request passes, immediately before it
// is handed to the provider: the whole request is redacted there, whatever
// the loop redacted before, because much of it is state read back from disk
// that the agent could have written (transcripts, job prompts, the inbound
// journal, AGENTS.md and SYSTEM.md, compaction summaries). Each session has
// its own, so that its cache follows one conversation.
//
// Redacting a long conversation on every request would scan it whole each
// time, so the redaction of each text is remembered while one of the last
// egressKeep requests used it, in two ways: by the text's identity (its bytes'
// address and length: the conversation's texts are the same strings from
// one request to the next, and a key holding the address keeps those bytes
// alive, so no other text can take their place), and, for texts of at least
// egressCacheMin bytes rebuilt for each request (a shortened old tool
// result), by a hash of their content. Images are remembered by hash. The
// redactor is fixed for the agent's lifetime, so a remembered result stays
// valid. A collision of two texts' hashes could only substitute another
// text's redaction; one of two images' (64-bit, with a seed drawn per
// process, so unpredictable to the agent) would let an image skip its
// check, which is accepted at that cost.
type egress struct {
	provider Provider
	red      *redactor.Redactor
	seed     maphash.Seed

	mu sync.Mutex
	// gen counts the requests; an entry remembers the last one that used
	// it (see sweep).
	gen uint64
	// byText remembers texts by identity, cache texts and images by hash.
	byText map[textKey]*egressEntry
	cache  map[egressKey]*egressEntry
	// lastIn and lastOut are the messages of the last request and their
	// redaction (see messages): a conversation's next request repeats most
	// of them in the same places, and comparing them costs less than
	// looking each of their texts up. Both are the boundary's own copies
	// (their content blocks, tool calls and image bytes included), so a
	// caller that changes the messages it sent, in place, changes neither
	// what they are compared with nor what is sent again for them.
	lastIn, lastOut []Message
}

// textKey identifies a text by its bytes' address and its length.
type textKey struct {
	data *byte
	n    int
}

// egressKey identifies a text or an image by its content.
type egressKey struct {
	hash  uint64
	n     int
	image bool
}

// egressEntry is a remembered result: a text's redaction, or whether an
// image is clean, and the last request that used it.
type egressEntry struct {
	text  string
	clean bool
	gen   uint64
}

// newEgress returns the boundary in front of provider.
func newEgress(provider Provider, red *redactor.Redactor) *egress {
	return &egress{
		provider: provider, red: red, seed: maphash.MakeSeed(),
		byText: map[textKey]*egressEntry{}, cache: map[egressKey]*egressEntry{},
	}
}

// complete redacts req whole and hands it to the provider: the model, the
// system prompt, every message of every role (its text and every other
// string of its blocks, its text blocks joined as a provider sends them,
// its tool calls' ids, names and arguments, the call it answers), every image (one whose bytes or base64 hold a secret is
// replaced by a note) and the tools offered. Details never leave: they are
// for the host, not the model. req is not modified; what did not change is
// shared with it.
func (e *egress) complete(ctx context.Context, req Request, onText func(string)) (Response, error) {
	return e.provider.Complete(ctx, e.redactRequest(req), onText)
}

// redactRequest returns the redacted copy of req that complete sends.
func (e *egress) redactRequest(req Request) Request {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.gen++
	defer e.sweep()
	out := Request{
		Model:  e.text(req.Model),
		System: e.text(req.System),
	}
	if req.Messages != nil {
		out.Messages = e.messages(req.Messages)
	}
	if req.Tools != nil {
		out.Tools = make([]ToolSpec, len(req.Tools))
		for i, t := range req.Tools {
			out.Tools[i] = ToolSpec{Name: e.text(t.Name), Description: e.text(t.Description), Parameters: t.Parameters}
			if params := string(t.Parameters); e.text(params) != params {
				out.Tools[i].Parameters = []byte(e.text(params))
			}
		}
	}
	return out
}

// messages returns the redaction of msgs. A message in the same place as in
// the last request, and the same, gets the same redaction back without a
// look at its texts. When the last request's messages all come first
// again, as they do while a conversation grows, the new messages are
// appended to the last request's redaction in place: every earlier request
// was handed a slice no longer than it (and capped at its length, so its
// provider cannot append to it), so none of them sees the change.
func (e *egress) messages(msgs []Message) []Message {
	n := 0
	for n < len(msgs) && n < len(e.lastIn) && sameMessage(msgs[n], e.lastIn[n]) {
		n++
	}
	var in, out []Message
	if n == len(e.lastOut) {
		in, out = e.lastIn, e.lastOut
	} else {
		in, out = make([]Message, n, len(msgs)), make([]Message, n, len(msgs))
		copy(in, e.lastIn[:n])
		copy(out, e.lastOut[:n])
	}
	for i := n; i < len(msgs); i++ {
		if i < len(e.lastIn) && sameMessage(msgs[i], e.lastIn[i]) {
			in, out = append(in, e.lastIn[i]), append(out, e.lastOut[i])
		} else {
			m := cloneMessage(msgs[i])
			in, out = append(in, m), append(out, e.message(m))
		}
	}
	e.lastIn, e.lastOut = in, out
	return out[:len(out):len(out)]
}

// message returns the redacted copy of m, without its Details.
func (e *egress) message(m Message) Message {
	out := Message{
		Role:       Role(e.text(string(m.Role))),
		Content:    m.Content,
		ToolCalls:  m.ToolCalls,
		ToolCallID: e.text(m.ToolCallID),
		ToolName:   e.text(m.ToolName),
		IsError:    m.IsError,
		Time:       m.Time,
	}
	for i, c := range m.Content {
		if rc := e.content(c); !sameContent(rc, c) {
			if &out.Content[0] == &m.Content[0] {
				out.Content = slices.Clone(m.Content)
			}
			out.Content[i] = rc
		}
	}
	for i, c := range m.ToolCalls {
		if rc := (ToolCall{ID: e.text(c.ID), Name: e.text(c.Name), Arguments: e.text(c.Arguments)}); rc != c {
			if &out.ToolCalls[0] == &m.ToolCalls[0] {
				out.ToolCalls = slices.Clone(m.ToolCalls)
			}
			out.ToolCalls[i] = rc
		}
	}
	if joined := e.joined(out.Content); joined != nil {
		out.Content = joined
	}
	return out
}

// joined returns content with its text blocks replaced by one, in the
// first one's place, holding their text as [TextOf] joins it, redacted,
// when that text holds a secret that none of the blocks held alone; nil
// otherwise. A provider sends a message's text blocks as that one text, so
// a secret's encoded form split between two blocks (an MCP tool's result
// in several items) would reach the model whole, wrapped at the line
// break, which is a form the redactor knows.
func (e *egress) joined(content []Content) []Content {
	n := 0
	for _, c := range content {
		if c.Type == TextContent {
			n++
		}
	}
	if n < 2 {
		return nil
	}
	text := TextOf(content)
	red := e.text(text)
	if red == text {
		return nil
	}
	out := make([]Content, 0, len(content)-n+1)
	placed := false
	for _, c := range content {
		switch {
		case c.Type != TextContent:
			out = append(out, c)
		case !placed:
			out = append(out, Text(red))
			placed = true
		}
	}
	return out
}

// sameMessage reports whether two messages send the same thing (Details,
// which never leave, aside). Equal strings are compared at the cost of a
// pointer comparison when they are the same string, as a conversation's
// texts are from one request to the next.
func sameMessage(a, b Message) bool {
	if a.Role != b.Role || a.ToolCallID != b.ToolCallID || a.ToolName != b.ToolName || a.IsError != b.IsError ||
		!a.Time.Equal(b.Time) || len(a.Content) != len(b.Content) || !slices.Equal(a.ToolCalls, b.ToolCalls) {
		return false
	}
	for i := range a.Content {
		x, y := a.Content[i], b.Content[i]
		if x.Type != y.Type || x.Text != y.Text || x.MIMEType != y.MIMEType || !bytes.Equal(x.Data, y.Data) {
			return false
		}
	}
	return true
}

// sameContent reports whether a redacted block is the block it came from.
func sameContent(a, b Content) bool {
	return a.Type == b.Type && a.Text == b.Text && a.MIMEType == b.MIMEType && len(a.Data) == len(b.Data)
}

// content returns the redacted copy of one block: an image that holds a
// secret becomes a text note.
func (e *egress) content(c Content) Content {
	if len(c.Data) > 0 && !e.cleanImage(c.Data) {
		return Text(withheldImage)
	}
	c.Type = ContentType(e.text(string(c.Type)))
	c.Text = e.text(c.Text)
	c.MIMEType = e.text(c.MIMEType)
	return c
}

// text returns s redacted, remembered: see [egress]. A text shorter than
// the shortest secret cannot hold one.
func (e *egress) text(s string) string {
	if len(s) < redactor.MinimumSecretLength {
		return s
	}
	tk := textKey{data: unsafe.StringData(s), n: len(s)}
	if entry, ok := e.byText[tk]; ok {
		entry.gen = e.gen
		return entry.text
	}
	var red string
	if len(s) < egressCacheMin {
		red = e.red.Redact(s)
	} else {
		k := egressKey{hash: maphash.String(e.seed, s), n: len(s)}
		if entry, ok := e.lookup(k); ok {
			red = entry.text
		} else {
			red = e.red.Redact(s)
			e.cache[k] = &egressEntry{text: red, gen: e.gen}
		}
	}
	e.byText[tk] = &egressEntry{text: red, gen: e.gen}
	return red
}

// cleanImage reports whether neither data nor its base64 holds a secret,
// from the cache when data was seen before.
func (e *egress) cleanImage(data []byte) bool {
	k := egressKey{hash: maphash.Bytes(e.seed, data), n: len(data), image: true}
	if entry, ok := e.lookup(k); ok {
		return entry.clean
	}
	raw := string(data)
	encoded := base64.StdEncoding.EncodeToString(data)
	clean := e.red.Redact(raw) == raw && e.red.Redact(encoded) == encoded
	e.cache[k] = &egressEntry{clean: clean, gen: e.gen}
	return clean
}

// lookup finds k in the cache and marks it used by this request.
func (e *egress) lookup(k egressKey) (*egressEntry, bool) {
	entry, ok := e.cache[k]
	if ok {
		entry.gen = e.gen
	}
	return entry, ok
}

// egressKeep is how many requests an entry outlives its last use by; the
// cache is swept of older ones every egressKeep requests, which keeps the
// sweep's cost off most requests.
const egressKeep = 8

// sweep ends a request: every egressKeep requests, the entries none of the
// last egressKeep requests used are forgotten.
func (e *egress) sweep() {
	if e.gen%egressKeep != 0 {
		return
	}
	for k, entry := range e.byText {
		if entry.gen+egressKeep <= e.gen {
			delete(e.byText, k)
		}
	}
	for k, entry := range e.cache {
		if entry.gen+egressKeep <= e.gen {
			delete(e.cache, k)
		}
	}
}
