package securitytest

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"path/filepath"
	"strings"
	"testing"
)

// The crafted images in the secrets directory: each hides every known
// secret where a naive image path would carry it to the model.
const (
	// imageTrailing is a valid PNG with the secrets after its end.
	imageTrailing = "trailing.png"
	// imageText is a valid PNG with the secrets in a tEXt chunk.
	imageText = "text.png"
	// imageZTXt is a valid PNG with the secrets compressed in a zTXt chunk.
	imageZTXt = "ztxt.png"
	// imageEXIF is a valid JPEG with the secrets in an EXIF segment and a
	// comment.
	imageEXIF = "exif.jpg"
	// imageFake is the PNG signature followed by the secrets: no image.
	imageFake = "fake.png"
)

// secretImages returns the crafted images, by file name, for secrets (one
// a line).
func secretImages(t *testing.T, secrets string) map[string][]byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, 16, 12))
	for y := range 12 {
		for x := range 16 {
			img.Set(x, y, color.NRGBA{R: uint8(16 * x), G: uint8(20 * y), B: 128, A: 255})
		}
	}
	var p, j bytes.Buffer
	if err := png.Encode(&p, img); err != nil {
		t.Fatal(err)
	}
	if err := jpeg.Encode(&j, img, nil); err != nil {
		t.Fatal(err)
	}
	pngData, jpegData := p.Bytes(), j.Bytes()

	chunk := func(typ string, data []byte) []byte {
		var b bytes.Buffer
		_ = binary.Write(&b, binary.BigEndian, uint32(len(data)))
		b.WriteString(typ)
		b.Write(data)
		_ = binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), data...)))
		return b.Bytes()
	}
	const afterIHDR = 8 + 25
	text := append(bytes.Clone(pngData[:afterIHDR]), chunk("tEXt", []byte("Comment\x00"+secrets))...)
	text = append(text, pngData[afterIHDR:]...)
	ztxt := append(bytes.Clone(pngData[:afterIHDR]), chunk("zTXt", append([]byte("Comment\x00\x00"), zlibBytes([]byte(strings.Repeat("a comment on the picture\n", 40)+secrets))...))...)
	ztxt = append(ztxt, pngData[afterIHDR:]...)

	segment := func(marker byte, data string) []byte {
		s := []byte{0xff, marker, 0, 0}
		binary.BigEndian.PutUint16(s[2:], uint16(len(data)+2))
		return append(s, data...)
	}
	exif := append(bytes.Clone(jpegData[:2]), segment(0xe1, "Exif\x00\x00"+secrets)...)
	exif = append(exif, segment(0xfe, secrets)...)
	exif = append(exif, jpegData[2:]...)

	return map[string][]byte{
		imageTrailing: append(bytes.Clone(pngData), "\n"+secrets...),
		imageText:     text,
		imageZTXt:     ztxt,
		imageEXIF:     exif,
		imageFake:     append([]byte("\x89PNG\r\n\x1a\n"), secrets...),
	}
}

// writeSecretImages writes the crafted images into the secrets directory,
// readable by the bot's user only.
func (l *layout) writeSecretImages(t *testing.T, set secretSet) {
	t.Helper()
	var all strings.Builder
	for _, sec := range set.known() {
		all.WriteString(sec.value + "\n")
	}
	for name, data := range secretImages(t, all.String()) {
		writeBotFile(t, l, filepath.Join(l.secretsDir, name), string(data))
	}
}

// imageVectors are the image attacks: the read tool and an MCP tool handed
// each crafted image. A valid one must reach the model re-encoded, without
// the secrets; the fake one must be refused.
func imageVectors() []vector {
	read := func(name, file string, expect expectation, forbid ...string) vector {
		return vector{name: name, family: "image", tool: "read", expect: []expectation{expect}, forbid: forbid,
			args: func(p vectorPaths) string { return pathArgs(filepath.Join(p.secrets, file)) }}
	}
	viaMCP := func(name, file string, expect expectation, forbid ...string) vector {
		return vector{name: name, family: "image", tool: mcpToolName(mcpToolReadImage), expect: []expectation{expect}, forbid: forbid,
			args: func(p vectorPaths) string { return pathArgs(filepath.Join(p.secrets, file)) }}
	}
	return []vector{
		read("read-png-trailing-bytes", imageTrailing, expectImageRead, "not a valid"),
		read("read-png-text-chunk", imageText, expectImageRead, "not a valid"),
		read("read-jpeg-exif-comment", imageEXIF, expectImageRead, "not a valid"),
		read("read-not-a-png", imageFake, expectNotPNG),
		viaMCP("mcp-image-trailing-bytes", imageTrailing, expectMCPImage, "not shown"),
		viaMCP("mcp-image-text-chunk", imageText, expectMCPImage, "not shown"),
		viaMCP("mcp-image-not-a-png", imageFake, expectNotPNG),
	}
}

// Expectations of the image vectors.
var (
	// expectImageRead: the read tool returned an image.
	expectImageRead = expectation{what: "the read tool's image note", text: func(secretSet) string { return "Read image file " }}
	// expectMCPImage: the MCP tool's text before its image arrived.
	expectMCPImage = expectation{what: "the MCP tool's image note", text: func(secretSet) string { return mcpImageNote }}
	// expectNotPNG: the fake image was refused, saying why.
	expectNotPNG = expectation{what: "the refusal of the fake PNG", text: func(secretSet) string { return "not a valid PNG" }}
)
