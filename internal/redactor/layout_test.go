package redactor

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/scaletest"
)

// layoutSecrets are the secrets the layout tests hide: an API key of 37
// bytes (the case), a short one, and one with symbols and a
// non-ASCII letter.
var layoutSecrets = []struct{ name, value string }{
	{"api key", "sk-live-Xq7Lm2Np9Rt4Vw8Yz1Bc5Df3Gh6Jk"},
	{"short", "Zq8wXv3KpL0mNb7T"},
	{"symbols", `p@ss w/rd&"x"+<y>?é\%`},
}

// runTool runs the real tool name with args on input and returns its
// output; the test is skipped, naming the tool, when it is not installed.
func runTool(t *testing.T, input []byte, name string, args ...string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not installed: %v", name, err)
	}
	cmd := exec.CommandContext(t.Context(), path, args...)
	cmd.Env = []string{"LC_ALL=C"}
	cmd.Stdin = bytes.NewReader(input)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v (%d bytes on stderr)", name, args, err, stderr.Len())
	}
	return string(out)
}

// fillerText returns n bytes of file content that holds no secret, with
// line breaks, digits and letters a hex dump or an encoding mixes in.
func fillerText(n int) string {
	const text = "export PATH=/usr/bin\nAPI_URL=https://api.example.com/v1\n# deadbeef cafe 0123\n"
	return strings.Repeat(text, n/len(text)+1)[:n]
}

// checkHidden redacts out and fails when the secret survives in any form
// or as a fragment, when nothing was redacted, or when a Writer fed the
// output in pieces disagrees with Redact. It checks the redactor without
// fragments too: the form itself must be seen through the layout, not only
// its pieces that happen to sit on one line. The Writer is fed byte by
// byte and in pieces of 7, 3 and 64 bytes, or in the sizes splits gives.
func checkHidden(t *testing.T, secret, out string, splits ...[]int) {
	t.Helper()
	if splits == nil {
		splits = [][]int{{1}, {7, 3, 64}}
	}
	for _, withFragments := range []bool{false, true} {
		fragLen := fragmentLen
		if !withFragments {
			fragLen = nil
		}
		r := build(patterns([]string{secret}, fragLen))
		got := r.Redact(out)
		if !strings.Contains(got, Token) {
			t.Fatalf("fragments %v: nothing redacted in %d bytes of output", withFragments, len(out))
		}
		how := leak(got, secret)
		if !withFragments && strings.Contains(how, "fragment") {
			how = ""
		}
		if how != "" {
			t.Fatalf("fragments %v: the secret (length %d) survives as %s in %d bytes of output", withFragments, len(secret), how, len(out))
		}
		for _, sizes := range splits {
			if d := mismatch(got, writeSplit(t, r, out, sizes)); d != "" {
				t.Fatalf("fragments %v: Writer in pieces of %v differs from Redact: %s", withFragments, sizes, d)
			}
		}
	}
}

// TestDumpLayouts runs the standard encoders and dump tools on a file that
// holds a secret at every offset from 0 to 17 (every base64 and base32
// alignment, every column of a 16-byte dump line) and checks that the
// secret does not survive in their output in any decodable form.
func TestDumpLayouts(t *testing.T) {
	tools := [][]string{
		{"base64"},
		{"base64", "-w", "20"},
		{"basenc", "--base64url"},
		{"base32"},
		{"xxd"},
		{"xxd", "-u"},
		{"xxd", "-g", "1"},
		{"xxd", "-p"},
		{"xxd", "-p", "-c", "8"},
		{"od", "-An", "-tx1"},
		{"od", "-tx1"},
		{"hexdump", "-C"},
		{"iconv", "-f", "UTF-8", "-t", "UTF-16LE"},
		{"iconv", "-f", "UTF-8", "-t", "UTF-16BE"},
		{"iconv", "-f", "UTF-8", "-t", "UTF-16"},
	}
	for _, sec := range layoutSecrets {
		for _, tool := range tools {
			t.Run(sec.name+"/"+strings.Join(tool, " "), func(t *testing.T) {
				for offset := range 18 {
					input := fillerText(offset) + sec.value + "\n" + fillerText(40)
					out := runTool(t, []byte(input), tool[0], tool[1:]...)
					t.Run(fmt.Sprint("offset ", offset), func(t *testing.T) {
						checkHidden(t, sec.value, out)
					})
				}
			})
		}
	}
}

// TestWrapWidths runs base64, base64url, base32 and xxd -p at every wrap
// width from 1 to 80 characters (xxd -p -c counts bytes, so its widths are
// the even ones up to 160 hex digits) with the secret at two offsets.
func TestWrapWidths(t *testing.T) {
	sec := layoutSecrets[0].value
	for w := 1; w <= 80; w++ {
		width := fmt.Sprint(w)
		for _, tool := range [][]string{
			{"base64", "-w", width},
			{"basenc", "--base64url", "-w", width},
			{"base32", "-w", width},
			{"xxd", "-p", "-c", width},
		} {
			t.Run(strings.Join(tool, " "), func(t *testing.T) {
				for _, offset := range []int{w % 5, 7 + w%3} {
					input := fillerText(offset) + sec + fillerText(30)
					checkHidden(t, sec, runTool(t, []byte(input), tool[0], tool[1:]...))
				}
			})
		}
	}
}

// TestDumpTextColumn checks that the text column of a dump shows no piece
// of the secret of 4 bytes or more: a match covers every line it touches to
// the line's end, so the last line's text column goes with it, and on an
// xxd -c 4 dump the ten-line match takes every text column along.
func TestDumpTextColumn(t *testing.T) {
	sec := layoutSecrets[0].value
	r := New([]string{sec})
	for _, tool := range [][]string{{"xxd"}, {"xxd", "-c", "4"}, {"hexdump", "-C"}} {
		t.Run(strings.Join(tool, " "), func(t *testing.T) {
			for offset := range 16 {
				out := runTool(t, []byte(fillerText(offset)+sec+fillerText(20)), tool[0], tool[1:]...)
				got := r.Redact(out)
				for n := 4; n <= len(sec); n++ {
					for i := 0; i+n <= len(sec); i++ {
						if strings.Contains(got, sec[i:i+n]) {
							t.Fatalf("offset %d: %d bytes of the secret at %d show in the text column", offset, n, i)
						}
					}
				}
			}
		})
	}
}

// TestDumpEmulations checks that the dumps the fuzz targets write are the
// real tools' output, so the fuzzing covers the real layouts.
func TestDumpEmulations(t *testing.T) {
	for _, n := range []int{1, 15, 16, 17, 37, 64} {
		data := []byte(fillerText(n))
		tests := []struct {
			name string
			tool []string
			emu  string
		}{
			{"xxd", []string{"xxd"}, xxdDump(data, false)},
			{"xxd -u", []string{"xxd", "-u"}, xxdDump(data, true)},
			{"hexdump -C", []string{"hexdump", "-C"}, hexdumpC(data)},
			{"od -tx1", []string{"od", "-tx1"}, odDump(data, true)},
			{"od -An -tx1", []string{"od", "-An", "-tx1"}, odDump(data, false)},
		}
		for _, tt := range tests {
			t.Run(fmt.Sprint(tt.name, " ", n), func(t *testing.T) {
				if got := runTool(t, data, tt.tool[0], tt.tool[1:]...); got != tt.emu {
					t.Errorf("emulation differs from the tool:\n%s\nwant:\n%s", tt.emu, got)
				}
			})
		}
	}
}

// TestLongSecret hides a PEM private key of 1.7 KB, whose encoded forms
// are longer than an encoded pattern may be (they are matched as
// overlapping windows), through the real base64, base32 and xxd.
func TestLongSecret(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	der := make([]byte, 1190)
	for i := range der {
		der[i] = byte(rng.Uint32())
	}
	key := "-----BEGIN PRIVATE KEY-----\n" + wrap(base64.StdEncoding.EncodeToString(der), 64, "\n") + "\n-----END PRIVATE KEY-----"
	if len(key) < 1400 {
		t.Fatalf("the key is only %d bytes", len(key))
	}
	for _, tool := range [][]string{{"base64"}, {"base32"}, {"xxd"}, {"xxd", "-p"}, {"od", "-An", "-tx1"}} {
		t.Run(strings.Join(tool, " "), func(t *testing.T) {
			for i, offset := range []int{0, 1, 2, 5} {
				out := runTool(t, []byte(fillerText(offset)+key+"\n"), tool[0], tool[1:]...)
				// Fed byte by byte, the Writer looks at what it holds back
				// (as long as this key) at every write: under the race
				// detector that is minutes for the four offsets. Reduced
				// (scaletest), every offset is still redacted and streamed,
				// and the first is streamed byte by byte too.
				if i > 0 && scaletest.Reduced() {
					checkHidden(t, key, out, []int{7, 3, 64})
					continue
				}
				checkHidden(t, key, out)
			}
		})
	}
}

// TestTextColumnLongerThanData checks that what follows two spaces on a
// line that starts like xxd's is skipped as a text column only when it is
// no longer than the line's data, as xxd writes it: otherwise a line that
// merely starts like an offset (a secret ending in "000000:" printed just
// before a dump, as FuzzRedact found) hid the hex after it.
func TestTextColumnLongerThanData(t *testing.T) {
	const secret = "q7Rm2xKv9LpT4wZc"
	h := hex.EncodeToString([]byte(secret))
	r := New([]string{secret})
	tests := []struct{ name, text string }{
		{"text column longer than the data", "000000:9000  " + h + "\n"},
		{"spaced text column longer than the data", "00000010: 90 00  " + h[:16] + " " + h[16:] + "\n"},
		{"more data than xxd writes", "00000000: " + strings.Repeat("0", 2*maxTextColumn+2) + "  " + h + "\n"},
		{"a real text column between the lines of a match", xxdDump([]byte("01234567"+secret), false)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := r.Redact(tt.text)
			if d := mismatch(naiveRedact(r.patterns, tt.text), got); d != "" {
				t.Fatalf("redactor differs from reference: %s", d)
			}
			if how := leak(got, secret); how != "" {
				t.Errorf("the secret survives as %s", how)
			}
			if d := mismatch(got, writeSplit(t, r, tt.text, []int{1})); d != "" {
				t.Errorf("Writer byte by byte differs from Redact: %s", d)
			}
		})
	}
}
