package botapi

import (
	"mime"
	"net/http"
	"path"
	"strings"
)

// extensionTypes are the types of common files the standard library's
// built-in table leaves out (it knows the web's: .css, .gif, .html, .jpeg,
// .js, .json, .pdf, .png, .svg, .wasm, .webp, .xml), so that they do not
// depend on the host's /etc/mime.types, which slim images lack.
var extensionTypes = map[string]string{
	".csv":  "text/csv; charset=utf-8",
	".tsv":  "text/tab-separated-values; charset=utf-8",
	".txt":  "text/plain; charset=utf-8",
	".log":  "text/plain; charset=utf-8",
	".md":   "text/markdown; charset=utf-8",
	".yaml": "application/yaml",
	".yml":  "application/yaml",
	".toml": "application/toml",
	".ics":  "text/calendar; charset=utf-8",
	".zip":  "application/zip",
	".gz":   "application/gzip",
	".tgz":  "application/gzip",
	".tar":  "application/x-tar",
	".xz":   "application/x-xz",
	".7z":   "application/x-7z-compressed",
	".mp3":  "audio/mpeg",
	".ogg":  "audio/ogg",
	".oga":  "audio/ogg",
	".wav":  "audio/wav",
	".m4a":  "audio/mp4",
	".mp4":  "video/mp4",
	".webm": "video/webm",
	".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
	".odt":  "application/vnd.oasis.opendocument.text",
	".ods":  "application/vnd.oasis.opendocument.spreadsheet",
}

// ContentType returns the media type an upload named name with content
// data is sent as. The name's extension tells (a CSV sniffs as plain text,
// an .xlsx as a zip archive), unless it claims text for bytes that are not
// text: then the content's sniffed type does (a PNG named report.txt is a
// PNG). A name with no known extension gets the sniffed type, which is
// text/plain for text and application/octet-stream for bytes it cannot
// name.
func ContentType(name string, data []byte) string {
	sniffed := http.DetectContentType(data)
	ext := strings.ToLower(path.Ext(name))
	byName, known := extensionTypes[ext]
	if !known && ext != "" {
		byName = mime.TypeByExtension(ext)
	}
	if byName == "" {
		return sniffed
	}
	if textual(byName) && !strings.HasPrefix(sniffed, "text/") {
		return sniffed
	}
	return byName
}

// textual reports whether media type t is text a person reads.
func textual(t string) bool {
	base, _, _ := strings.Cut(t, ";")
	switch base {
	case "application/json", "application/yaml", "application/toml", "application/javascript", "application/xml", "image/svg+xml":
		return true
	}
	return strings.HasPrefix(base, "text/")
}
