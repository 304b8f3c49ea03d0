package mcp

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/imagesafe"
	"github.com/volcanic/telegram-agent/internal/redactor"
)

// sanitizedFakePNG is fakePNG as the agent gets it: re-encoded.
func sanitizedFakePNG(t *testing.T) []byte {
	t.Helper()
	img, err := imagesafe.Sanitize(fakePNG, nil)
	if err != nil {
		t.Fatalf("Sanitize: %v", err)
	}
	return img.Data
}

// TestConvertImage checks that an MCP image reaches the agent re-encoded
// from its pixels, and that one that is not what it claims, or that holds a
// secret the redactor knows, is replaced by a note saying why.
func TestConvertImage(t *testing.T) {
	const secret = "sk-mcp-image-FAKE-secret-0123456789"
	red := redactor.New([]string{secret})
	tests := []struct {
		name string
		data []byte
		want agent.Content
	}{
		{"a PNG with trailing bytes", append(bytes.Clone(fakePNG), secret...), agent.Image("image/png", sanitizedFakePNG(t))},
		{"text behind PNG magic", []byte("\x89PNG\r\n\x1a\n" + secret), agent.Text("[image image/png, 43 bytes, not shown: not a valid PNG]")},
		{"not an image", []byte(secret), agent.Text("[image image/png, 35 bytes, not shown: " + imagesafe.ReasonNotImage + "]")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := convertContent(&mcp.ImageContent{MIMEType: "image/png", Data: tt.data}, red)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("content (-want +got):\n%s", diff)
			}
		})
	}
}
