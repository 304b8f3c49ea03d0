// Package agent is the engine behind every chat: a session sends the
// conversation and the tools to a model, streams the answer, runs the tool
// calls through the spawn policy and the redactor, feeds the results back and
// repeats until the model is done. Extensions plug in through [API].
package agent

// ContentType says what a [Content] block holds.
type ContentType string

// The content types a message or a tool result can hold.
const (
	TextContent  ContentType = "text"
	ImageContent ContentType = "image"
)

// Content is one block of a message or a tool result: text, or an image.
type Content struct {
	Type ContentType `json:"type"`
	// Text is the text of a TextContent block.
	Text string `json:"text,omitempty"`
	// MIMEType is the media type of an ImageContent block (image/png, ...).
	MIMEType string `json:"mime_type,omitempty"`
	// Data is the raw image of an ImageContent block (base64 in JSON).
	Data []byte `json:"data,omitempty"`
}

// Text returns a text block.
func Text(s string) Content { return Content{Type: TextContent, Text: s} }

// Image returns an image block.
func Image(mimeType string, data []byte) Content {
	return Content{Type: ImageContent, MIMEType: mimeType, Data: data}
}
