package imagesafe

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeSecret is the value the tests hide in images; failure messages never
// print it.
const fakeSecret = "sk-imagesafe-FAKE-secret-0123456789"

// finder is a Checker that knows fakeSecret raw and in base64 at every
// alignment, as the redactor does.
type finder struct{}

func (finder) Redact(s string) string {
	forms := []string{fakeSecret}
	for pad := range 3 {
		enc := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("x", pad) + fakeSecret))
		forms = append(forms, enc[(pad*4+2)/3+1:len(enc)-4])
	}
	for _, f := range forms {
		s = strings.ReplaceAll(s, f, "[REDACTED]")
	}
	return s
}

// tinyWebP is a 1×1 lossless WebP.
const tinyWebP = "RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00"

// testImage returns a w×h gradient.
func testImage(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.NRGBA{R: uint8(x), G: uint8(y), B: uint8(x + y), A: 255})
		}
	}
	return img
}

func encodePNG(t *testing.T, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodeJPEG(t *testing.T, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// pngChunk returns one PNG chunk.
func pngChunk(typ string, data []byte) []byte {
	var b bytes.Buffer
	_ = binary.Write(&b, binary.BigEndian, uint32(len(data)))
	b.WriteString(typ)
	b.Write(data)
	_ = binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	return b.Bytes()
}

// withTextChunk inserts a tEXt chunk holding the secret after IHDR.
func withTextChunk(p []byte) []byte {
	const afterIHDR = 8 + 25
	out := append([]byte{}, p[:afterIHDR]...)
	out = append(out, pngChunk("tEXt", []byte("Comment\x00"+fakeSecret))...)
	return append(out, p[afterIHDR:]...)
}

// withJPEGMetadata inserts an EXIF APP1 segment and a COM segment, both
// holding the secret, after the SOI marker.
func withJPEGMetadata(j []byte) []byte {
	segment := func(marker byte, data []byte) []byte {
		s := []byte{0xff, marker, 0, 0}
		binary.BigEndian.PutUint16(s[2:], uint16(len(data)+2))
		return append(s, data...)
	}
	out := append([]byte{}, j[:2]...)
	out = append(out, segment(0xe1, []byte("Exif\x00\x00"+fakeSecret))...)
	out = append(out, segment(0xfe, []byte(fakeSecret))...)
	return append(out, j[2:]...)
}

// withGIFComment adds a comment extension holding the secret after the
// header and the global colour table.
func withGIFComment(t *testing.T) []byte {
	t.Helper()
	pal := image.NewPaletted(image.Rect(0, 0, 4, 4), color.Palette{color.Black, color.White})
	var b bytes.Buffer
	if err := gif.Encode(&b, pal, nil); err != nil {
		t.Fatal(err)
	}
	g := b.Bytes()
	// Header (6), screen descriptor (7), a two-entry global table (6).
	const head = 6 + 7 + 6
	comment := append([]byte{0x21, 0xfe, byte(len(fakeSecret))}, fakeSecret...)
	comment = append(comment, 0)
	out := append([]byte{}, g[:head]...)
	out = append(out, comment...)
	return append(out, g[head:]...)
}

// hugePNG returns a PNG header that declares w×h pixels.
func hugePNG(w, h uint32) []byte {
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr, w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, 6
	out := append([]byte("\x89PNG\r\n\x1a\n"), pngChunk("IHDR", ihdr)...)
	out = append(out, pngChunk("IDAT", []byte{0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01})...)
	return append(out, pngChunk("IEND", nil)...)
}

// withDamagedProfile inserts an iCCP chunk whose CRC is wrong, as some
// real files have (the MCP everything server's logo among them).
func withDamagedProfile(p []byte) []byte {
	const afterIHDR = 8 + 25
	bad := pngChunk("iCCP", []byte("profile\x00\x00"+fakeSecret))
	bad[len(bad)-1] ^= 0xff
	out := append([]byte{}, p[:afterIHDR]...)
	out = append(out, bad...)
	return append(out, p[afterIHDR:]...)
}

// withDamagedPixels flips a byte of the IDAT chunk's CRC.
func withDamagedPixels(p []byte) []byte {
	out := bytes.Clone(p)
	i := bytes.Index(out, []byte("IEND"))
	out[i-5] ^= 0xff
	return out
}

func TestSanitize(t *testing.T) {
	small := testImage(40, 30)
	tests := []struct {
		name       string
		data       []byte
		wantMIME   string
		wantW      int
		wantH      int
		wantScaled bool
		wantErr    string
	}{
		{name: "a plain PNG", data: encodePNG(t, small), wantMIME: "image/png", wantW: 40, wantH: 30},
		{name: "a PNG with trailing bytes", data: append(encodePNG(t, small), []byte("\n"+fakeSecret+"\n")...), wantMIME: "image/png", wantW: 40, wantH: 30},
		{name: "a PNG with a tEXt chunk", data: withTextChunk(encodePNG(t, small)), wantMIME: "image/png", wantW: 40, wantH: 30},
		{name: "a PNG with a damaged ICC profile", data: withDamagedProfile(encodePNG(t, small)), wantMIME: "image/png", wantW: 40, wantH: 30},
		{name: "a PNG with damaged pixel data", data: withDamagedPixels(encodePNG(t, small)), wantErr: "not a valid PNG"},
		{name: "a JPEG with an EXIF segment and a comment", data: withJPEGMetadata(encodeJPEG(t, small)), wantMIME: "image/jpeg", wantW: 40, wantH: 30},
		{name: "a GIF with a comment", data: withGIFComment(t), wantMIME: "image/png", wantW: 4, wantH: 4},
		{name: "a WebP with trailing bytes", data: append([]byte(tinyWebP), fakeSecret...), wantMIME: "image/png", wantW: 1, wantH: 1},
		{name: "a wide PNG is scaled down", data: encodePNG(t, testImage(3000, 1000)), wantMIME: "image/png", wantW: 2048, wantH: 682, wantScaled: true},
		{name: "a tall JPEG is scaled down", data: encodeJPEG(t, testImage(500, 4096)), wantMIME: "image/jpeg", wantW: 250, wantH: 2048, wantScaled: true},
		{name: "text behind PNG magic", data: append([]byte("\x89PNG\r\n\x1a\n"), fakeSecret...), wantErr: "not a valid PNG"},
		{name: "text behind JPEG magic", data: append([]byte("\xff\xd8\xff"), fakeSecret...), wantErr: "not a valid JPEG"},
		{name: "text behind WebP magic", data: []byte("RIFF\x10\x00\x00\x00WEBPVP8 " + fakeSecret), wantErr: "not a valid WebP"},
		{name: "a PNG cut short", data: encodePNG(t, small)[:60], wantErr: "not a valid PNG"},
		{name: "not an image", data: []byte(fakeSecret), wantErr: ReasonNotImage},
		{name: "a declared decompression bomb", data: hugePNG(100000, 100000), wantErr: "too large: 100000×100000 pixels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Sanitize(tt.data, finder{})
			if tt.wantErr != "" {
				var e *Error
				if !errors.As(err, &e) || e.Reason != tt.wantErr {
					t.Fatalf("Sanitize error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Sanitize: %v", err)
			}
			type shape struct {
				MIME   string
				W, H   int
				Scaled bool
			}
			if diff := cmp.Diff(shape{tt.wantMIME, tt.wantW, tt.wantH, tt.wantScaled}, shape{got.MIMEType, got.Width, got.Height, got.Scaled}); diff != "" {
				t.Errorf("image (-want +got):\n%s", diff)
			}
			if bytes.Contains(got.Data, []byte(fakeSecret)) || (finder{}).Redact(base64.StdEncoding.EncodeToString(got.Data)) != base64.StdEncoding.EncodeToString(got.Data) {
				t.Error("the re-encoded image holds the secret")
			}
			decoded, _, err := image.Decode(bytes.NewReader(got.Data))
			if err != nil {
				t.Fatalf("the re-encoded image does not decode: %v", err)
			}
			if b := decoded.Bounds(); b.Dx() != got.Width || b.Dy() != got.Height {
				t.Errorf("the re-encoded image is %v, want %d×%d", b, got.Width, got.Height)
			}
		})
	}
}

// TestSanitizeKeepsPixels checks that re-encoding a PNG keeps every pixel.
func TestSanitizeKeepsPixels(t *testing.T) {
	src := testImage(16, 9)
	got, err := Sanitize(append(encodePNG(t, src), "trailing"...), nil)
	if err != nil {
		t.Fatalf("Sanitize: %v", err)
	}
	decoded, err := png.Decode(bytes.NewReader(got.Data))
	if err != nil {
		t.Fatal(err)
	}
	for y := range 9 {
		for x := range 16 {
			if a, b := color.NRGBAModel.Convert(decoded.At(x, y)), src.At(x, y); a != b {
				t.Fatalf("pixel (%d,%d) = %v, want %v", x, y, a, b)
			}
		}
	}
}

// flagging is a Checker that finds a secret in one form of the image only.
type flagging struct{ base64 bool }

func (f flagging) Redact(s string) string {
	// A PNG starts with \x89PNG raw and with iVBORw0KGgo in base64.
	marker := "\x89PNG"
	if f.base64 {
		marker = "iVBORw0KGgo"
	}
	return strings.ReplaceAll(s, marker, "[REDACTED]")
}

// TestSanitizeWithholdsWhatStillHoldsASecret checks that the re-encoded
// bytes and their base64 are both checked.
func TestSanitizeWithholdsWhatStillHoldsASecret(t *testing.T) {
	data := encodePNG(t, testImage(8, 8))
	for _, c := range []flagging{{base64: false}, {base64: true}} {
		_, err := Sanitize(data, c)
		var e *Error
		if !errors.As(err, &e) || e.Reason != ReasonSecret {
			t.Errorf("base64 %v: Sanitize error = %v, want %q", c.base64, err, ReasonSecret)
		}
	}
}

func TestSniff(t *testing.T) {
	tests := []struct {
		head string
		want string
	}{
		{"\x89PNG\r\n\x1a\nrest", "image/png"},
		{"\xff\xd8\xff\xe0", "image/jpeg"},
		{"GIF89a...", "image/gif"},
		{"GIF87a...", "image/gif"},
		{tinyWebP, "image/webp"},
		{"RIFF\x00\x00\x00\x00WAVE", ""},
		{"plain text", ""},
	}
	for _, tt := range tests {
		got, ok := Sniff([]byte(tt.head))
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("Sniff(%q) = %q, %v; want %q", tt.head, got, ok, tt.want)
		}
	}
}

// BenchmarkSanitize re-encodes a 12-megapixel JPEG photo, scaled down to
// 2048 px: the largest common case.
func BenchmarkSanitize(b *testing.B) {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, testImage(4000, 3000), nil); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	for b.Loop() {
		if _, err := Sanitize(data, finder{}); err != nil {
			b.Fatal(err)
		}
	}
}
