package tools

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/ascii85"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// A file send_file uploads may hold a secret where the raw scan cannot see
// it: compressed inside a gzip or a zip, in a PDF's Flate stream, in a
// PNG's compressed text chunk. The file is opened as the container its
// leading bytes announce, every piece of content it compresses is
// decompressed and scanned, and the pieces that are containers in turn are
// opened too. Such a file is refused, not redacted: redacting inside it
// would mean re-encoding the container (recompressing, rewriting a PDF's
// cross-reference offsets), which changes or breaks a file in ways its
// recipient cannot see, while a refusal tells the model what to send
// instead. Decompressing is bounded, because a file the agent made may be
// a bomb: a file that expands past maxInspected bytes in all (by default),
// or nests
// containers deeper than maxNesting, or holds more than maxEntries pieces,
// is refused as one that cannot be checked.

// The bounds on the work a container may cause. maxInspected is the
// default; withInspectLimit sets another.
const (
	maxInspected = 128 << 20
	maxNesting   = 4
	maxEntries   = 100_000
)

// inspection is one check of a file's containers.
type inspection struct {
	// holds reports whether content holds a secret.
	holds func(content []byte) bool
	// limit bounds the decompressed bytes read, used counts them, and
	// entries counts the pieces opened.
	limit, used, entries int
}

// hiddenSecret returns where in data a secret hides inside a container
// (a description for the model, empty when none does), or an error that
// says why when data's containers cannot be checked within the bounds.
func hiddenSecret(data []byte, holds func([]byte) bool, limit int) (string, error) {
	in := &inspection{holds: holds, limit: limit}
	return in.container(data, 0)
}

// container opens data as the container its leading bytes announce, if
// any, and checks each piece it holds.
func (in *inspection) container(data []byte, depth int) (string, error) {
	switch {
	case bytes.HasPrefix(data, []byte("\x1f\x8b")):
		return in.gzip(data, depth)
	case bytes.HasPrefix(data, []byte("PK\x03\x04")) || bytes.HasPrefix(data, []byte("PK\x05\x06")):
		return in.zip(data, depth)
	case bytes.HasPrefix(data, []byte("%PDF-")):
		return in.pdf(data, depth)
	case bytes.HasPrefix(data, []byte(pngSignature)):
		return in.png(data, depth)
	}
	return "", nil
}

// piece checks one piece of decompressed content: it must hold no
// secret, and a container inside it is opened in turn.
func (in *inspection) piece(what string, r io.Reader, depth int) (string, error) {
	if in.entries++; in.entries > maxEntries {
		return "", fmt.Errorf("it holds more than %d compressed pieces", maxEntries)
	}
	if depth >= maxNesting {
		return "", fmt.Errorf("its containers nest more than %d deep", maxNesting)
	}
	left := in.limit - in.used
	// A piece cut short by corrupt data is checked as far as it reads:
	// past the corruption the recipient's tools cannot read it either.
	content, _ := io.ReadAll(io.LimitReader(r, int64(left)+1))
	in.used += len(content)
	if len(content) > left {
		return "", fmt.Errorf("it expands to more than %s", formatSize(int64(in.limit)))
	}
	if in.holds(content) {
		return what, nil
	}
	if where, err := in.container(content, depth+1); where != "" || err != nil {
		return what + ", in " + where, err
	}
	return "", nil
}

// gzip checks a gzip file's content (every member of it).
func (in *inspection) gzip(data []byte, depth int) (string, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return "", nil // not a gzip after all: the raw scan saw it
	}
	defer zr.Close()
	return in.piece("the gzip content", zr, depth)
}

// zip checks every entry of a zip archive; an encrypted entry or one
// compressed in a way the standard library does not read cannot be
// checked.
func (in *inspection) zip(data []byte, depth int) (string, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return "", nil
	}
	for _, f := range zr.File {
		if f.Flags&0x1 != 0 {
			return "", fmt.Errorf("its entry %q is encrypted", f.Name)
		}
		rc, err := f.Open()
		if err != nil {
			if errors.Is(err, zip.ErrAlgorithm) {
				return "", fmt.Errorf("its entry %q is compressed with method %d, which the bot does not read", f.Name, f.Method)
			}
			continue
		}
		where, err := in.piece(fmt.Sprintf("the zip entry %q", f.Name), rc, depth)
		rc.Close()
		if where != "" || err != nil {
			return where, err
		}
	}
	return "", nil
}

// pdf checks every stream of a PDF that decompresses: Flate, and Flate
// behind ASCII85. Streams in other filters (ASCIIHex is hex, which the raw
// scan reads) are left to the raw scan.
func (in *inspection) pdf(data []byte, depth int) (string, error) {
	for n := 0; ; {
		i := bytes.Index(data, []byte("stream"))
		if i < 0 {
			return "", nil
		}
		ended := i >= 3 && string(data[i-3:i]) == "end"
		data = data[i+len("stream"):]
		if ended {
			continue
		}
		if bytes.HasPrefix(data, []byte("\r\n")) {
			data = data[2:]
		} else if bytes.HasPrefix(data, []byte("\n")) || bytes.HasPrefix(data, []byte("\r")) {
			data = data[1:]
		} else {
			continue // "endstream", or the word in text
		}
		n++
		end := bytes.Index(data, []byte("endstream"))
		if end < 0 {
			end = len(data)
		}
		raw := data[:end]
		data = data[min(end+len("endstream"), len(data)):]
		if a85, ok := ascii85Content(raw); ok {
			raw = a85
		}
		zr, err := zlib.NewReader(bytes.NewReader(raw))
		if err != nil {
			continue
		}
		where, err := in.piece(fmt.Sprintf("PDF stream %d", n), zr, depth)
		zr.Close()
		if where != "" || err != nil {
			return where, err
		}
	}
}

// ascii85Content decodes a stream written in ASCII85 (ending in "~>").
func ascii85Content(raw []byte) ([]byte, bool) {
	trimmed := bytes.TrimSpace(raw)
	body, ok := bytes.CutSuffix(trimmed, []byte("~>"))
	if !ok {
		return nil, false
	}
	body = bytes.TrimPrefix(body, []byte("<~"))
	out := make([]byte, 4*len(body)/5+4)
	n, _, err := ascii85.Decode(out, body, true)
	if err != nil {
		return nil, false
	}
	return out[:n], true
}

// pngSignature starts every PNG file.
const pngSignature = "\x89PNG\r\n\x1a\n"

// png checks a PNG's text chunks: tEXt, and the compressed text of zTXt
// and iTXt. A chunk that runs past the file's end ends the walk.
func (in *inspection) png(data []byte, depth int) (string, error) {
	data = data[len(pngSignature):]
	for len(data) >= 12 {
		n := binary.BigEndian.Uint32(data)
		kind := string(data[4:8])
		if uint64(n) > uint64(len(data)-12) {
			return "", nil
		}
		body := data[8 : 8+n]
		data = data[12+n:]
		keyword, rest, ok := bytes.Cut(body, []byte{0})
		if !ok {
			continue
		}
		what := fmt.Sprintf("the PNG %s chunk %q", kind, keyword)
		var r io.Reader
		switch kind {
		case "tEXt":
			r = bytes.NewReader(rest)
		case "zTXt":
			if len(rest) < 1 || rest[0] != 0 {
				continue
			}
			zr, err := zlib.NewReader(bytes.NewReader(rest[1:]))
			if err != nil {
				continue
			}
			r = zr
		case "iTXt":
			if len(rest) < 2 {
				continue
			}
			compressed := rest[0] == 1
			_, rest, _ = bytes.Cut(rest[2:], []byte{0}) // the language tag
			_, text, _ := bytes.Cut(rest, []byte{0})    // the translated keyword
			r = bytes.NewReader(text)
			if compressed {
				zr, err := zlib.NewReader(bytes.NewReader(text))
				if err != nil {
					continue
				}
				r = zr
			}
		default:
			continue
		}
		if where, err := in.piece(what, r, depth); where != "" || err != nil {
			return where, err
		}
	}
	return "", nil
}
