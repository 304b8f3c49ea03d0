package redactor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const errSecret = "hunter2-error-secret"

// statusError is a typed error that knows how to redact itself.
type statusError struct {
	Code int
	Msg  string
	Err  error
}

func (e *statusError) Error() string { return fmt.Sprintf("status %d: %s", e.Code, e.Msg) }
func (e *statusError) Unwrap() error { return e.Err }

func (e *statusError) RedactedCopy(r *Redactor) error {
	return &statusError{Code: e.Code, Msg: r.Redact(e.Msg)}
}

// plainError is a typed error that does not.
type plainError struct{ Msg string }

func (e *plainError) Error() string { return e.Msg }

func TestRedactErrorText(t *testing.T) {
	r := New([]string{errSecret})
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"plain", errors.New("open: " + errSecret), "open: " + Token},
		{"wrapped", fmt.Errorf("agent: %w", fmt.Errorf("inner %s", errSecret)), "agent: inner " + Token},
		{"no secret", errors.New("nothing here"), "nothing here"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := r.RedactError(tt.err)
			if diff := cmp.Diff(tt.want, got.Error()); diff != "" {
				t.Errorf("Error() (-want +got):\n%s", diff)
			}
			if errors.Unwrap(got) != nil {
				t.Error("the redacted error unwraps to the original")
			}
		})
	}
	if r.RedactError(nil) != nil {
		t.Error("RedactError(nil) is not nil")
	}
}

func TestRedactErrorIs(t *testing.T) {
	r := New([]string{errSecret})
	err := r.RedactError(fmt.Errorf("turn %s: %w", errSecret, context.Canceled))
	if !errors.Is(err, context.Canceled) {
		t.Error("errors.Is does not find context.Canceled through the redacted error")
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Error("errors.Is finds an error the original does not match")
	}
	if !errors.Is(fmt.Errorf("outer: %w", err), context.Canceled) {
		t.Error("errors.Is does not find context.Canceled when the redacted error is wrapped again")
	}
}

func TestRedactErrorAsRedactable(t *testing.T) {
	r := New([]string{errSecret})
	orig := &statusError{Code: 400, Msg: "bad key " + errSecret, Err: errors.New("raw " + errSecret)}
	err := r.RedactError(fmt.Errorf("provider: %w", orig))
	var got *statusError
	if !errors.As(err, &got) {
		t.Fatal("errors.As does not find the Redactable error")
	}
	if got == orig {
		t.Fatal("errors.As handed out the original, not a redacted copy")
	}
	want := &statusError{Code: 400, Msg: "bad key " + Token}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the copy (-want +got):\n%s", diff)
	}
}

func TestRedactErrorAsPlain(t *testing.T) {
	r := New([]string{errSecret})
	tests := []struct {
		name  string
		err   error
		found bool
	}{
		{"clean", fmt.Errorf("wrap %s: %w", errSecret, &plainError{Msg: "clean"}), true},
		{"secret in text", &plainError{Msg: "has " + errSecret}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := &plainError{Msg: "before"}
			got := before
			if ok := errors.As(r.RedactError(tt.err), &got); ok != tt.found {
				t.Fatalf("errors.As = %v, want %v", ok, tt.found)
			}
			if !tt.found && got != before {
				t.Error("a refused errors.As changed its target")
			}
			if tt.found && got.Msg != "clean" {
				t.Errorf("found %q, want the clean error", got.Msg)
			}
		})
	}
}

func TestRedactErrorAsRefusesSecretBelow(t *testing.T) {
	r := New([]string{errSecret})
	// The PathError's own text is clean only if its Err is: fs.PathError
	// prints Err, so put the secret in an error that a clean one wraps.
	inner := &wrapsQuietly{inner: errors.New("token " + errSecret)}
	err := r.RedactError(&fs.PathError{Op: "open", Path: "/x", Err: inner})
	var pe *fs.PathError
	if errors.As(err, &pe) {
		t.Error("errors.As handed out an error whose wrapped error holds a secret")
	}
	var q *wrapsQuietly
	if errors.As(err, &q) {
		t.Error("errors.As handed out an error that wraps a secret")
	}
}

// wrapsQuietly prints nothing of the error it wraps.
type wrapsQuietly struct{ inner error }

func (e *wrapsQuietly) Error() string { return "quiet" }
func (e *wrapsQuietly) Unwrap() error { return e.inner }

func TestRedactErrorAsInterface(t *testing.T) {
	r := New([]string{errSecret})
	type coder interface{ error }
	var got coder
	if !errors.As(r.RedactError(&statusError{Code: 500, Msg: errSecret}), &got) {
		t.Fatal("errors.As does not find the error for an interface target")
	}
	if strings.Contains(got.Error(), errSecret) {
		t.Error("the secret leaked into the error found for an interface target")
	}
}

func TestRedactErrorIdempotent(t *testing.T) {
	r := New([]string{errSecret})
	once := r.RedactError(errors.New(errSecret))
	if twice := r.RedactError(once); twice != once {
		t.Error("redacting an error twice wrapped it again")
	}
	other := New([]string{"another-secret-value"})
	if other.RedactError(once) == once {
		t.Error("an error redacted by another redactor was not redacted again")
	}
}

func TestHasSecrets(t *testing.T) {
	var nilRedactor *Redactor
	tests := []struct {
		name string
		r    *Redactor
		want bool
	}{
		{"nil", nilRedactor, false},
		{"empty", New(nil), false},
		{"too short", New([]string{"short"}), false},
		{"one secret", New([]string{errSecret}), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.r.HasSecrets(); got != tt.want {
				t.Errorf("HasSecrets() = %v, want %v", got, tt.want)
			}
		})
	}
}
