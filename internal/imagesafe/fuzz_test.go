package imagesafe

import (
	"bytes"
	"image"
	"image/jpeg"
	"image/png"
	"testing"
)

// FuzzSanitize feeds Sanitize any bytes behind each format's signature:
// it must never panic, and an image it returns must decode as the type it
// names, within the longest edge, without the secret the checker knows.
func FuzzSanitize(f *testing.F) {
	img := testImage(40, 30)
	var p, j bytes.Buffer
	if err := png.Encode(&p, img); err != nil {
		f.Fatal(err)
	}
	if err := jpeg.Encode(&j, img, nil); err != nil {
		f.Fatal(err)
	}
	f.Add(p.Bytes())
	f.Add(withJPEGMetadata(j.Bytes()))
	f.Add([]byte(tinyWebP))
	f.Add(withTextChunk(p.Bytes()))
	f.Add(withDamagedPixels(p.Bytes()))
	f.Add(hugePNG(70000, 70000))
	f.Add([]byte("GIF89a\x01\x00\x01\x00"))
	f.Add([]byte("RIFF\x00\x00\x00\x00WEBPVP8L"))
	f.Add([]byte("\xff\xd8\xff\xe0"))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := Sanitize(data, finder{}, WithMaxEdge(64))
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("Sanitize returned a %T, not an *Error", err)
			}
			return
		}
		got, format, err := image.Decode(bytes.NewReader(out.Data))
		if err != nil {
			t.Fatalf("the re-encoded image does not decode: %v", err)
		}
		if "image/"+format != out.MIMEType {
			t.Errorf("the re-encoded image is %s, named %s", format, out.MIMEType)
		}
		if b := got.Bounds(); b.Dx() > 64 || b.Dy() > 64 || b.Dx() != out.Width || b.Dy() != out.Height {
			t.Errorf("the re-encoded image is %dx%d, reported %dx%d, longest edge allowed 64", b.Dx(), b.Dy(), out.Width, out.Height)
		}
	})
}
