package tools_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/ascii85"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agent/tools"
)

// TestSendFileLooksInsideContainers checks that send_file refuses a file
// whose secret is compressed inside it (gzip, tar.gz, zip, a PDF's Flate
// stream, a PNG's compressed text), however deep, sends the same
// containers without the secret, and refuses a file it cannot check
// within its bounds (a bomb, containers nested too deep, an encrypted
// zip entry).
func TestSendFileLooksInsideContainers(t *testing.T) {
	secretText := []byte("config\ntoken=" + testSecret + "\nend\n")
	cleanText := []byte("config\ntoken=none\nend\n")
	files := map[string]struct {
		build      func(content []byte) []byte
		wantRefuse string // for the content holding the secret
	}{
		"a.gz":              {gzipped, "in the gzip content"},
		"a.tar.gz":          {func(c []byte) []byte { return gzipped(tarred("conf.txt", c)) }, "in the gzip content"},
		"a.zip":             {func(c []byte) []byte { return zipped("conf.txt", c, false) }, `in the zip entry "conf.txt"`},
		"zip-in-gzip.gz":    {func(c []byte) []byte { return gzipped(zipped("conf.txt", c, false)) }, `in the gzip content, in the zip entry "conf.txt"`},
		"a.pdf":             {func(c []byte) []byte { return pdf(c, false) }, "in PDF stream 2"},
		"a85.pdf":           {func(c []byte) []byte { return pdf(c, true) }, "in PDF stream 2"},
		"ztxt.png":          {func(c []byte) []byte { return pngWith("zTXt", "Comment", c) }, `in the PNG zTXt chunk "Comment"`},
		"itxt.png":          {func(c []byte) []byte { return pngWith("iTXt", "Comment", c) }, `in the PNG iTXt chunk "Comment"`},
		"png-in-zip.zip":    {func(c []byte) []byte { return zipped("p.png", pngWith("zTXt", "k", c), false) }, `in the zip entry "p.png", in the PNG zTXt chunk "k"`},
		"gzip-4-deep.gz":    {func(c []byte) []byte { return gzipped(gzipped(gzipped(gzipped(c)))) }, "in the gzip content, in the gzip content, in the gzip content, in the gzip content"},
		"stored-in-zip.zip": {func(c []byte) []byte { return gzipped(zipped("conf.txt", c, true)) }, "in the gzip content"},
	}
	f := newFixture(t, fixtureConfig{})
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(f.workspace, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	send := func(name string) (string, bool, int) {
		sender := &fakeFileSender{}
		res := f.call(agent.WithFrontEnd(t.Context(), sender), t, tools.NewSendFile(tools.WithInspectLimit(1<<20)), jsonArgs(map[string]any{"path": name}), nil)
		return agent.TextOf(res.Content), res.IsError, len(sender.sent)
	}
	for name, tt := range files {
		t.Run(name, func(t *testing.T) {
			write("secret-"+name, tt.build(secretText))
			text, isErr, sent := send("secret-" + name)
			if !isErr || sent != 0 || !strings.Contains(text, "holds a secret") || !strings.Contains(text, tt.wantRefuse) {
				t.Errorf("with the secret: result %q (error %v, %d sent), want a refusal naming %q", text, isErr, sent, tt.wantRefuse)
			}
			if strings.Contains(text, testSecret) {
				t.Error("the refusal holds the secret")
			}
			write("clean-"+name, tt.build(cleanText))
			if text, isErr, sent := send("clean-" + name); isErr || sent != 1 {
				t.Errorf("without the secret: result %q (error %v, %d sent), want it sent", text, isErr, sent)
			}
		})
	}

	uncheckable := []struct {
		name, want string
		data       []byte
	}{
		{"bomb.gz", "expands to more than 1.0 MB", gzipped(make([]byte, 2<<20))},
		{"zip-bomb.zip", "expands to more than 1.0 MB", zipMany(20, make([]byte, 64<<10))},
		{"deep.gz", "nest more than 4 deep", gzipped(gzipped(gzipped(gzipped(gzipped(cleanText)))))},
		{"encrypted.zip", `entry "conf.txt" is encrypted`, zippedFlags("conf.txt", cleanText, 0x1)},
	}
	for _, tt := range uncheckable {
		t.Run(tt.name, func(t *testing.T) {
			write(tt.name, tt.data)
			text, isErr, sent := send(tt.name)
			if !isErr || sent != 0 || !strings.Contains(text, "cannot be checked for secrets: ") || !strings.Contains(text, tt.want) {
				t.Errorf("result %q (error %v, %d sent), want a refusal saying %q", text, isErr, sent, tt.want)
			}
		})
	}
}

// gzipped returns data compressed with gzip.
func gzipped(data []byte) []byte {
	return compressed(data, func(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) })
}

// compressed returns data written through the compressor newWriter makes.
func compressed(data []byte, newWriter func(io.Writer) io.WriteCloser) []byte {
	var b bytes.Buffer
	w := newWriter(&b)
	w.Write(data)
	w.Close()
	return b.Bytes()
}

// tarred returns a tar archive of one file.
func tarred(name string, data []byte) []byte {
	var b bytes.Buffer
	w := tar.NewWriter(&b)
	w.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data))})
	w.Write(data)
	w.Close()
	return b.Bytes()
}

// zipped returns a zip archive of one file, deflated unless stored.
func zipped(name string, data []byte, stored bool) []byte {
	method := zip.Deflate
	if stored {
		method = zip.Store
	}
	return zipEntries([]*zip.FileHeader{{Name: name, Method: method}}, [][]byte{data})
}

// zippedFlags returns a zip archive of one deflated file with flags set.
func zippedFlags(name string, data []byte, flags uint16) []byte {
	return zipEntries([]*zip.FileHeader{{Name: name, Method: zip.Deflate, Flags: flags}}, [][]byte{data})
}

// zipMany returns a zip archive of n deflated copies of data.
func zipMany(n int, data []byte) []byte {
	var hs []*zip.FileHeader
	var ds [][]byte
	for i := range n {
		hs = append(hs, &zip.FileHeader{Name: fmt.Sprintf("f%d", i), Method: zip.Deflate})
		ds = append(ds, data)
	}
	return zipEntries(hs, ds)
}

func zipEntries(headers []*zip.FileHeader, data [][]byte) []byte {
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for i, h := range headers {
		fw, err := w.CreateHeader(h)
		if err != nil {
			panic(err)
		}
		fw.Write(data[i])
	}
	w.Close()
	return b.Bytes()
}

// zlibbed returns data compressed with zlib, as Flate streams and PNG
// text chunks hold it.
func zlibbed(data []byte) []byte {
	return compressed(data, func(w io.Writer) io.WriteCloser { return zlib.NewWriter(w) })
}

// pdf returns a small PDF whose second stream holds content, Flate
// compressed (and then ASCII85 encoded with a85).
func pdf(content []byte, a85 bool) []byte {
	stream := zlibbed(content)
	filter := "/FlateDecode"
	if a85 {
		enc := make([]byte, ascii85.MaxEncodedLen(len(stream)))
		stream = append(enc[:ascii85.Encode(enc, stream)], "~>"...)
		filter = "[/ASCII85Decode /FlateDecode]"
	}
	first := zlibbed([]byte("BT /F1 12 Tf 72 712 Td (Hello) Tj ET"))
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	fmt.Fprintf(&b, "4 0 obj\n<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream\nendobj\n", len(first), first)
	fmt.Fprintf(&b, "5 0 obj\n<< /Length %d /Filter %s >>\nstream\r\n%s\nendstream\nendobj\n", len(stream), filter, stream)
	b.WriteString("trailer\n<< /Root 1 0 R >>\n%%EOF\n")
	return b.Bytes()
}

// pngWith returns a 1×1 PNG with one text chunk of kind (zTXt or iTXt,
// compressed) holding text under keyword.
func pngWith(kind, keyword string, text []byte) []byte {
	var body []byte
	switch kind {
	case "zTXt":
		body = append(append([]byte(keyword), 0, 0), zlibbed(text)...)
	case "iTXt":
		body = append(append([]byte(keyword), 0, 1, 0, 'e', 'n', 0, 0), zlibbed(text)...)
	}
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(kind string, data []byte) {
		binary.Write(&b, binary.BigEndian, uint32(len(data)))
		b.WriteString(kind)
		b.Write(data)
		binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(kind), data...)))
	}
	chunk("IHDR", []byte{0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0})
	chunk(kind, body)
	chunk("IDAT", zlibbed([]byte{0, 0}))
	chunk("IEND", nil)
	return b.Bytes()
}
