package tools

import (
	"path/filepath"
	"strings"
)

// maxImageBytes is the largest image read returns as an image.
const maxImageBytes = 20 << 20

// imageExtension reports whether path's extension names an image type read
// understands.
func imageExtension(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png", ".jpg", ".jpeg", ".gif", ".webp":
		return true
	}
	return false
}
