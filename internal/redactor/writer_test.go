package redactor

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// writeSplit writes in to a fresh Writer in chunks of the given sizes
// (cycled), closes it and returns the output.
func writeSplit(t *testing.T, r *Redactor, in string, sizes []int) string {
	t.Helper()
	var out bytes.Buffer
	w := r.NewWriter(&out)
	for i, k := 0, 0; i < len(in); k++ {
		n := min(len(in)-i, sizes[k%len(sizes)])
		if m, err := w.Write([]byte(in[i : i+n])); err != nil || m != n {
			t.Fatalf("Write returned %d, %v; want %d, nil", m, err, n)
		}
		i += n
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return out.String()
}

func TestWriterEqualsRedact(t *testing.T) {
	r := New([]string{"abcdefgh", "efghijkl", "bcdefghijklmnopqrstu", secretA, "line1234\nline5678"})
	inputs := map[string]string{
		"no match":         strings.Repeat("nothing to see here. ", 40),
		"one match":        "before " + secretA + " after",
		"overlap":          "<abcdefghijkl> <abcdefghijklmnopqrstuvw>",
		"adjacent":         "abcdefghabcdefghabcdefgh!",
		"endless chain":    strings.Repeat("abcdefgh", 300),
		"match at end":     "tail " + secretA,
		"match at start":   secretA + " head",
		"multi-line crlf":  "x line1234\r\nline5678 y",
		"long match back":  "bcdefghi abcdefghijklmnopqrstu",
		"empty":            "",
		"hex and base64":   "68656c6c6f " + "Z2hwX2FiY2RlZmdoaWprbG1ub3AxMjM0",
		"near misses only": "abcdefg bcdefgh efghijk",
	}
	splits := map[string][]int{
		"one byte":    {1},
		"two bytes":   {2},
		"primes":      {3, 5, 7, 11},
		"mixed":       {1, 17, 2, 64, 3},
		"single call": {1 << 20},
	}
	for name, in := range inputs {
		want := r.Redact(in)
		for sname, sizes := range splits {
			t.Run(name+"/"+sname, func(t *testing.T) {
				if d := mismatch(want, writeSplit(t, r, in, sizes)); d != "" {
					t.Errorf("Writer output differs from Redact: %s", d)
				}
			})
		}
	}
}

func TestWriterHoldsBackLittle(t *testing.T) {
	r := New([]string{secretA})
	maxLen := holdBound(r) + 1
	var out bytes.Buffer
	w := r.NewWriter(&out)
	chunk := []byte(strings.Repeat("x", 1000))
	for i := 1; i <= 50; i++ {
		if _, err := w.Write(chunk); err != nil {
			t.Fatal(err)
		}
		if held := i*len(chunk) - out.Len(); held > maxLen-1 {
			t.Fatalf("after %d bytes %d are held back, want at most %d", i*len(chunk), held, maxLen-1)
		}
	}
	// An endless chain of matches keeps only a bounded buffer too.
	w2 := r.NewWriter(&out)
	for range 1000 {
		if _, err := w2.Write([]byte(secretA)); err != nil {
			t.Fatal(err)
		}
		if len(w2.held) > maxLen-1 {
			t.Fatalf("held %d bytes, want at most %d", len(w2.held), maxLen-1)
		}
	}
}

func TestWriterFlush(t *testing.T) {
	tests := []struct {
		name   string
		writes []string // "|" means Flush
		want   string
	}{
		{"flush emits held bytes", []string{"abc", "|"}, "abc"},
		{"flush between lines", []string{"key " + secretA + "\n", "|", "again " + secretA, "|"}, "key " + Token + "\nagain " + Token},
		{"secret straddling a flush is cut from the flush point", []string{"x" + secretA[:4], "|", secretA[4:] + "y", "|"}, "x" + secretA[:4] + Token + "y"},
	}
	r := New([]string{secretA})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			w := r.NewWriter(&out)
			for _, s := range tt.writes {
				if s == "|" {
					if err := w.Flush(); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if _, err := w.Write([]byte(s)); err != nil {
					t.Fatal(err)
				}
			}
			if got := out.String(); got != tt.want {
				t.Error(mismatch(tt.want, got))
			}
		})
	}
}

type failingWriter struct{ err error }

func (f failingWriter) Write([]byte) (int, error) { return 0, f.err }

func TestWriterErrors(t *testing.T) {
	boom := errors.New("boom")
	for _, tt := range []struct {
		name    string
		secrets []string
	}{{"with patterns", []string{secretA}}, {"without patterns", nil}} {
		t.Run(tt.name, func(t *testing.T) {
			w := New(tt.secrets).NewWriter(failingWriter{boom})
			_, err := w.Write([]byte(strings.Repeat("z", 100)))
			if !errors.Is(err, boom) {
				t.Fatalf("Write error = %v, want boom", err)
			}
			if _, err := w.Write([]byte("more")); !errors.Is(err, boom) {
				t.Errorf("second Write error = %v, want boom (sticky)", err)
			}
			if err := w.Close(); !errors.Is(err, boom) {
				t.Errorf("Close error = %v, want boom", err)
			}
		})
	}
	t.Run("write after close", func(t *testing.T) {
		w := New([]string{secretA}).NewWriter(&bytes.Buffer{})
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte("x")); err == nil {
			t.Error("Write after Close succeeded")
		}
		if err := w.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
}

func TestWriterConcurrent(t *testing.T) {
	r := New([]string{secretA})
	var out bytes.Buffer
	w := r.NewWriter(&out)
	done := make(chan struct{})
	for range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 100 {
				if _, err := w.Write([]byte("line " + secretA + "\n")); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for range 4 {
		<-done
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Count(out.String(), Token), 400; got != want {
		t.Errorf("%d tokens, want %d", got, want)
	}
	if strings.Contains(out.String(), secretA) {
		t.Error("secret leaked")
	}
}

// TestWriterHoldsBackOnlyAPendingStart checks that the Writer passes text
// on as soon as no pattern can begin in it: a running command's output is
// shown live, however long the secrets (and their encoded forms) are.
func TestWriterHoldsBackOnlyAPendingStart(t *testing.T) {
	long := "sk-proj-" + strings.Repeat("A1b2C3d4", 20) // a 168-byte key
	r := New([]string{long})
	tests := []struct {
		name, in, want string
	}{
		{"plain line", "hello world\n", "hello world\n"},
		{"a pattern begins at the end", "hello sk-pr", "hello "},
		{"the beginning of a secret is not one", "sk-pr done\n", "sk-pr done\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			w := r.NewWriter(&out)
			if _, err := w.Write([]byte(tt.in)); err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.want {
				t.Errorf("before Flush the output is %q, want %q", out.String(), tt.want)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if out.String() != r.Redact(tt.in) {
				t.Errorf("after Close the output is %q, want Redact's %q", out.String(), r.Redact(tt.in))
			}
		})
	}
}
