package imagesafe

import (
	"bytes"
	"encoding/binary"
)

// pngSignature starts every PNG file.
const pngSignature = "\x89PNG\r\n\x1a\n"

// pngPixelChunks returns data with only the chunks that make its pixels:
// the critical ones (IHDR, PLTE, IDAT, IEND, and any other whose type
// starts with an upper-case letter) and tRNS, up to IEND. Every other
// ancillary chunk is metadata (text, EXIF, ICC profile, time, physical
// size), never decoded, so one that is damaged (a bad CRC in an iCCP chunk
// is common) does not cost the image; bytes after IEND are dropped too.
// ok is false when the chunk structure itself is broken.
func pngPixelChunks(data []byte) ([]byte, bool) {
	if !bytes.HasPrefix(data, []byte(pngSignature)) {
		return nil, false
	}
	out := bytes.NewBufferString(pngSignature)
	for rest := data[len(pngSignature):]; ; {
		if len(rest) < 12 {
			return nil, false
		}
		n := binary.BigEndian.Uint32(rest)
		if uint64(n) > uint64(len(rest)-12) {
			return nil, false
		}
		chunk, typ := rest[:12+n], string(rest[4:8])
		if typ[0] >= 'A' && typ[0] <= 'Z' || typ == "tRNS" {
			out.Write(chunk)
		}
		if typ == "IEND" {
			return out.Bytes(), true
		}
		rest = rest[12+n:]
	}
}
