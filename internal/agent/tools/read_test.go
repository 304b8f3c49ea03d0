package tools_test

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agent/tools"
	"github.com/volcanic/telegram-agent/internal/imagesafe"
)

// pngBytes is a 2×1 PNG image.
var pngBytes = func() string {
	img := image.NewNRGBA(image.Rect(0, 0, 2, 1))
	img.Set(1, 0, color.NRGBA{R: 200, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err)
	}
	return b.String()
}()

// sanitized is what read returns for the image data: its re-encoding.
func sanitized(t *testing.T, data string) imagesafe.Image {
	t.Helper()
	img, err := imagesafe.Sanitize([]byte(data), nil)
	if err != nil {
		t.Fatalf("Sanitize: %v", err)
	}
	return img
}

// numbered returns lines from..to of a file whose line n is "line n", as
// read numbers them.
func numbered(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "%6d\tline %d\n", i, i)
	}
	return b.String()
}

// linesFile returns a file of n lines "line 1" to "line n".
func linesFile(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestRead(t *testing.T) {
	f := newFixture(t, fixtureConfig{})
	ws := f.workspace
	outside := filepath.Join(t.TempDir(), "outside.txt")
	long := strings.Repeat("x", tools.DefaultMaxBytes+10)
	files := map[string]string{
		"three.txt":       "a\nb\r\nc",
		"many.txt":        linesFile(2500),
		"empty.txt":       "",
		"binary.bin":      "ELF\x00\x01\x02",
		"latin1.txt":      "caf\xe9\n",
		"image.png":       pngBytes,
		"picture.dat":     pngBytes,
		"fake.png":        "not an image\n",
		"trailing.png":    pngBytes + "appended after IEND: " + testSecret + "\n",
		"magic.png":       "\x89PNG\r\n\x1a\nnot a PNG at all\n",
		"long.txt":        long + "\nshort\n",
		"sub/nested.txt":  "nested\n",
		outside:           "outside\n",
		"dir/placeholder": "",
	}
	for name, content := range files {
		path := name
		if !filepath.IsAbs(path) {
			path = filepath.Join(ws, name)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := func(name string) string { return filepath.Join(ws, name) }
	img := sanitized(t, pngBytes)
	tests := []struct {
		name string
		args map[string]any
		want agent.Result
	}{
		{
			name: "numbered lines",
			args: map[string]any{"path": "three.txt"},
			want: agent.Result{Content: []agent.Content{agent.Text("     1\ta\n     2\tb\n     3\tc\n")},
				Details: map[string]any{"path": p("three.txt"), "total_lines": 3, "first_line": 1, "last_line": 3}},
		},
		{
			name: "offset and limit",
			args: map[string]any{"path": "many.txt", "offset": 10, "limit": 3},
			want: agent.Result{Content: []agent.Content{agent.Text(numbered(10, 12) + "\n[2488 more lines in the file. Use offset=13 to read on]")},
				Details: map[string]any{"path": p("many.txt"), "total_lines": 2500, "first_line": 10, "last_line": 12}},
		},
		{
			name: "line limit",
			args: map[string]any{"path": "many.txt", "offset": 400},
			want: agent.Result{Content: []agent.Content{agent.Text(numbered(400, 2399) + "\n[Output truncated at 2000 lines or 50.0 KB: showing lines 400-2399 of 2500. Use offset=2400 to read on]")},
				Details: map[string]any{"path": p("many.txt"), "total_lines": 2500, "first_line": 400, "last_line": 2399, "truncated": true}},
		},
		{
			name: "the last lines",
			args: map[string]any{"path": "many.txt", "offset": 2499},
			want: agent.Result{Content: []agent.Content{agent.Text(numbered(2499, 2500))},
				Details: map[string]any{"path": p("many.txt"), "total_lines": 2500, "first_line": 2499, "last_line": 2500}},
		},
		{
			name: "a line longer than the byte limit",
			args: map[string]any{"path": "long.txt"},
			want: agent.Result{Content: []agent.Content{agent.Text(fmt.Sprintf("%6d\t%s\n", 1, long[:tools.DefaultMaxBytes]) +
				"\n[Line 1 is longer than 50.0 KB and was cut; read it with bash, e.g. sed -n '1p' '" + p("long.txt") + "' | cut -c1-102400]\n[Use offset=2 to read on]")},
				Details: map[string]any{"path": p("long.txt"), "total_lines": 2, "first_line": 1, "last_line": 1, "truncated": true}},
		},
		{
			name: "a nested relative path",
			args: map[string]any{"path": "sub/../sub/nested.txt"},
			want: agent.Result{Content: []agent.Content{agent.Text("     1\tnested\n")},
				Details: map[string]any{"path": p("sub/nested.txt"), "total_lines": 1, "first_line": 1, "last_line": 1}},
		},
		{
			name: "an absolute path outside the workspace",
			args: map[string]any{"path": outside},
			want: agent.Result{Content: []agent.Content{agent.Text("     1\toutside\n")},
				Details: map[string]any{"path": outside, "total_lines": 1, "first_line": 1, "last_line": 1}},
		},
		{
			name: "empty file",
			args: map[string]any{"path": "empty.txt"},
			want: agent.Result{Content: []agent.Content{agent.Text(p("empty.txt") + " is empty")}, Details: map[string]any{"path": p("empty.txt"), "total_lines": 0}},
		},
		{
			name: "a PNG image",
			args: map[string]any{"path": "image.png"},
			want: agent.Result{Content: []agent.Content{agent.Text(fmt.Sprintf("Read image file %s [image/png, %d B]", p("image.png"), len(img.Data))), agent.Image("image/png", img.Data)},
				Details: map[string]any{"path": p("image.png"), "mime_type": "image/png", "bytes": len(img.Data), "width": 2, "height": 1}},
		},
		{
			name: "an image recognised by its content",
			args: map[string]any{"path": "picture.dat"},
			want: agent.Result{Content: []agent.Content{agent.Text(fmt.Sprintf("Read image file %s [image/png, %d B]", p("picture.dat"), len(img.Data))), agent.Image("image/png", img.Data)},
				Details: map[string]any{"path": p("picture.dat"), "mime_type": "image/png", "bytes": len(img.Data), "width": 2, "height": 1}},
		},
		{
			name: "a PNG with trailing bytes comes back re-encoded without them",
			args: map[string]any{"path": "trailing.png"},
			want: agent.Result{Content: []agent.Content{agent.Text(fmt.Sprintf("Read image file %s [image/png, %d B]", p("trailing.png"), len(img.Data))), agent.Image("image/png", img.Data)},
				Details: map[string]any{"path": p("trailing.png"), "mime_type": "image/png", "bytes": len(img.Data), "width": 2, "height": 1}},
		},
		{name: "text behind PNG magic", args: map[string]any{"path": "magic.png"}, want: agent.ErrorResult(p("magic.png") + ": not a valid PNG")},
		{name: "an image extension on text", args: map[string]any{"path": "fake.png"}, want: agent.ErrorResult(p("fake.png") + " has an image extension but is not a PNG, JPEG, GIF or WebP image")},
		{name: "offset beyond the end", args: map[string]any{"path": "three.txt", "offset": 5}, want: agent.ErrorResult("offset 5 is beyond the end of " + p("three.txt") + " (3 lines)")},
		{name: "offset zero", args: map[string]any{"path": "three.txt", "offset": 0}, want: agent.ErrorResult("offset must be 1 or more (lines are numbered from 1), not 0")},
		{name: "limit zero", args: map[string]any{"path": "three.txt", "limit": 0}, want: agent.ErrorResult("limit must be 1 or more, not 0")},
		{name: "missing file", args: map[string]any{"path": "nope.txt"}, want: agent.ErrorResult("File not found: " + p("nope.txt"))},
		{name: "a folder", args: map[string]any{"path": "dir"}, want: agent.ErrorResult(p("dir") + " is a directory, not a file; list it with bash (ls)")},
		{name: "a file as a folder", args: map[string]any{"path": "three.txt/x"}, want: agent.ErrorResult("A parent of " + p("three.txt/x") + " is not a directory")},
		{name: "binary with NUL", args: map[string]any{"path": "binary.bin"}, want: agent.ErrorResult(p("binary.bin") + " looks like a binary file (6 B); inspect it with bash (file, xxd, strings)")},
		{name: "not UTF-8", args: map[string]any{"path": "latin1.txt"}, want: agent.ErrorResult(p("latin1.txt") + " looks like a binary file (5 B); inspect it with bash (file, xxd, strings)")},
		{name: "empty path", args: map[string]any{"path": ""}, want: agent.ErrorResult("path must not be empty")},
	}
	read := tools.NewRead()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := f.call(t.Context(), t, read, jsonArgs(tt.args), nil)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}
