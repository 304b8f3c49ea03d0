// Package imagesafe makes an image fit to send to the model: decoded
// strictly (PNG, JPEG, GIF or WebP, told by its leading bytes), re-encoded
// from its pixels, which drops whatever else the file carried (bytes after
// the image's end, tEXt, zTXt and iTXt chunks, EXIF and other APP segments,
// comments, a GIF's extensions), scaled down when larger than the provider
// takes, and checked, bytes and base64, for the secrets a redactor knows.
// A file that does not decode, or whose re-encoding still holds a secret in
// some form, is refused with an [*Error] whose text says why in a few
// words, fit for a tool result. Pixels that draw a secret are out of scope.
//
// It imports no other package of the project.
package imagesafe

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"

	"golang.org/x/image/draw"
	"golang.org/x/image/webp"
)

// DefaultMaxEdge is the longest edge, in pixels, an image keeps; a larger
// one is scaled down to it. It is the common limit of chat-completion
// providers (an image above it is scaled down by the provider anyway).
const DefaultMaxEdge = 2048

// maxPixels is the most pixels an image may declare: decoding allocates
// them, so a small file that declares a huge image is refused before it is
// decoded.
const maxPixels = 50_000_000

// jpegQuality is the quality JPEG images are re-encoded at.
const jpegQuality = 90

// Checker is what Sanitize asks whether bytes hold a secret: a redactor.
// Redact returns its argument itself when it holds none.
type Checker interface {
	Redact(s string) string
}

// Error is why an image was refused, in a few words ("not a valid PNG",
// "withheld: holds a secret").
type Error struct {
	Reason string
}

// Error returns the reason.
func (e *Error) Error() string { return e.Reason }

// Reasons an image is refused, beside "not a valid <format>".
const (
	ReasonNotImage = "not a PNG, JPEG, GIF or WebP image"
	ReasonSecret   = "withheld: holds a secret"
)

// Image is a re-encoded image.
type Image struct {
	// Data is the re-encoded image; MIMEType its type: image/jpeg for a
	// JPEG, image/png for every other format.
	Data     []byte
	MIMEType string
	// Width and Height are its size after scaling; Scaled says it was
	// scaled down from a larger one.
	Width, Height int
	Scaled        bool
}

// Option changes how Sanitize works.
type Option func(*options)

type options struct {
	maxEdge int
}

// WithMaxEdge sets the longest edge an image keeps (DefaultMaxEdge by
// default); px below 1 is ignored.
func WithMaxEdge(px int) Option {
	return func(o *options) {
		if px >= 1 {
			o.maxEdge = px
		}
	}
}

// format is one of the formats Sanitize reads.
type format struct {
	name, mimeType string
	decode         func(io.Reader) (image.Image, error)
	config         func(io.Reader) (image.Config, error)
	// prepare, when set, keeps of the file what makes its pixels before
	// it is decoded; ok false means the file is broken.
	prepare func([]byte) ([]byte, bool)
}

// Sniff returns the media type of data by its leading bytes: image/png,
// image/jpeg, image/gif or image/webp. ok is false for anything else.
func Sniff(head []byte) (mimeType string, ok bool) {
	f, ok := sniff(head)
	return f.mimeType, ok
}

// sniff finds data's format by its leading bytes.
func sniff(head []byte) (format, bool) {
	switch {
	case bytes.HasPrefix(head, []byte(pngSignature)):
		return format{"PNG", "image/png", png.Decode, png.DecodeConfig, pngPixelChunks}, true
	case bytes.HasPrefix(head, []byte("\xff\xd8\xff")):
		return format{"JPEG", "image/jpeg", jpeg.Decode, jpeg.DecodeConfig, nil}, true
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return format{"GIF", "image/gif", gif.Decode, gif.DecodeConfig, nil}, true
	case len(head) >= 12 && bytes.HasPrefix(head, []byte("RIFF")) && bytes.Equal(head[8:12], []byte("WEBP")):
		return format{"WebP", "image/webp", webp.Decode, webp.DecodeConfig, nil}, true
	}
	return format{}, false
}

// Sanitize decodes data strictly, scales it down to the longest edge
// allowed, re-encodes it from its pixels (a JPEG as JPEG, anything else as
// PNG: a GIF keeps its first frame) and checks the result and its base64
// with red (nil: no check). It returns an [*Error] for a file that is not a
// PNG, JPEG, GIF or WebP image, that does not decode as the format its
// leading bytes announce ("not a valid PNG"), that declares more pixels
// than it may, or whose re-encoding holds a secret ("withheld: holds a
// secret").
func Sanitize(data []byte, red Checker, opts ...Option) (Image, error) {
	o := options{maxEdge: DefaultMaxEdge}
	for _, opt := range opts {
		opt(&o)
	}
	f, ok := sniff(data)
	if !ok {
		return Image{}, &Error{Reason: ReasonNotImage}
	}
	invalid := &Error{Reason: "not a valid " + f.name}
	if f.prepare != nil {
		if data, ok = f.prepare(data); !ok {
			return Image{}, invalid
		}
	}
	cfg, err := f.config(bytes.NewReader(data))
	if err != nil || cfg.Width < 1 || cfg.Height < 1 {
		return Image{}, invalid
	}
	if int64(cfg.Width)*int64(cfg.Height) > maxPixels {
		return Image{}, &Error{Reason: fmt.Sprintf("too large: %d×%d pixels", cfg.Width, cfg.Height)}
	}
	src, err := f.decode(bytes.NewReader(data))
	if err != nil {
		return Image{}, invalid
	}
	img, scaled := scaleDown(src, o.maxEdge)
	var buf bytes.Buffer
	out := Image{MIMEType: "image/png", Width: img.Bounds().Dx(), Height: img.Bounds().Dy(), Scaled: scaled}
	if f.mimeType == "image/jpeg" {
		out.MIMEType = "image/jpeg"
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: jpegQuality})
	} else {
		err = png.Encode(&buf, img)
	}
	if err != nil {
		return Image{}, invalid
	}
	out.Data = buf.Bytes()
	if red != nil && holdsSecret(red, out.Data) {
		return Image{}, &Error{Reason: ReasonSecret}
	}
	return out, nil
}

// holdsSecret reports whether data or its base64, the form it travels in,
// holds something red would redact.
func holdsSecret(red Checker, data []byte) bool {
	raw := string(data)
	encoded := base64.StdEncoding.EncodeToString(data)
	return red.Redact(raw) != raw || red.Redact(encoded) != encoded
}

// scaleDown returns img scaled so that its longest edge is at most maxEdge,
// and whether it had to be.
func scaleDown(img image.Image, maxEdge int) (image.Image, bool) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if max(w, h) <= maxEdge {
		return img, false
	}
	nw, nh := maxEdge, max(1, h*maxEdge/w)
	if h > w {
		nw, nh = max(1, w*maxEdge/h), maxEdge
	}
	// An RGBA destination has fast paths for every source the decoders
	// return (YCbCr, RGBA, NRGBA, Gray, Paletted); others go pixel by pixel.
	dst := image.NewRGBA(image.Rect(0, 0, nw, nh))
	draw.ApproxBiLinear.Scale(dst, dst.Bounds(), img, b, draw.Src, nil)
	return dst, true
}
