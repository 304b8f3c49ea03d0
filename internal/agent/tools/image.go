package tools

import (
	"bytes"
	"path/filepath"
	"strings"
)

// maxImageBytes is the largest image read returns as an image.
const maxImageBytes = 20 << 20

// sniffImage returns the media type of an image read returns as an image:
// PNG, JPEG, GIF or WebP, recognised by its leading bytes. ok is false for
// anything else.
func sniffImage(head []byte) (mimeType string, ok bool) {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png", true
	case bytes.HasPrefix(head, []byte("\xff\xd8\xff")):
		return "image/jpeg", true
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return "image/gif", true
	case len(head) >= 12 && bytes.HasPrefix(head, []byte("RIFF")) && bytes.Equal(head[8:12], []byte("WEBP")):
		return "image/webp", true
	}
	return "", false
}

// imageExtension reports whether path's extension names an image type read
// understands.
func imageExtension(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png", ".jpg", ".jpeg", ".gif", ".webp":
		return true
	}
	return false
}
