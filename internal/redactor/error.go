package redactor

import (
	"errors"
	"reflect"
)

// HasSecrets reports whether r has any pattern to look for. When it has
// none, every method of r returns its input unchanged.
func (r *Redactor) HasSecrets() bool {
	return !r.empty()
}

// Redactable is an error that can hand out a copy of itself with every
// secret removed from its text and from the errors it wraps. An error type
// that callers find with [errors.As] implements it so that it can still be
// found through an error returned by [Redactor.RedactError].
type Redactable interface {
	error
	// RedactedCopy returns a copy of the error whose text, fields and
	// wrapped errors hold nothing r would redact. The copy must have the
	// same type as the receiver.
	RedactedCopy(r *Redactor) error
}

// RedactError returns err with its text redacted, or nil for nil. The
// result matches with [errors.Is] everything err matches. With [errors.As]
// it finds an error of err's tree as a redacted copy when that error is
// [Redactable], or as itself when neither its text nor the text of any
// error it wraps holds a secret; otherwise As does not find it. The result
// has no Unwrap method, so no caller reaches an unredacted message through
// it. An error that r already redacted is returned as it is.
func (r *Redactor) RedactError(err error) error {
	if err == nil {
		return nil
	}
	if re, ok := err.(*redactedError); ok && re.r == r {
		return err
	}
	return &redactedError{msg: r.Redact(err.Error()), err: err, r: r}
}

// redactedError is the error [Redactor.RedactError] returns. It keeps the
// original for Is and As, and never returns it.
type redactedError struct {
	msg string
	err error
	r   *Redactor
}

func (e *redactedError) Error() string { return e.msg }

// Is reports whether the original error matches target. A boolean tells
// nothing about the original's text, so every match is allowed.
func (e *redactedError) Is(target error) bool { return errors.Is(e.err, target) }

// As looks for target's type in the original error and sets target to what
// it found only when that hands out no secret (see [Redactor.RedactError]).
func (e *redactedError) As(target any) bool {
	if target == nil {
		return false
	}
	dst := reflect.ValueOf(target)
	if dst.Kind() != reflect.Pointer || dst.IsNil() {
		return false
	}
	// errors.As sets target when it finds something; work on a scratch
	// value so that a refused find leaves target as it was.
	scratch := reflect.New(dst.Type().Elem())
	if !errors.As(e.err, scratch.Interface()) {
		return false
	}
	found := scratch.Elem()
	// For an interface target the dynamic value is the error found.
	err, ok := found.Interface().(error)
	if !ok {
		return false
	}
	if red, ok := err.(Redactable); ok {
		cp := reflect.ValueOf(red.RedactedCopy(e.r))
		if !cp.IsValid() || !cp.Type().AssignableTo(dst.Type().Elem()) {
			return false
		}
		dst.Elem().Set(cp)
		return true
	}
	if !e.r.clean(err) {
		return false
	}
	dst.Elem().Set(found)
	return true
}

// clean reports whether neither err's text nor the text of any error in
// its tree holds anything r redacts.
func (r *Redactor) clean(err error) bool {
	if err == nil {
		return true
	}
	if s := err.Error(); r.Redact(s) != s {
		return false
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return r.clean(u.Unwrap())
	case interface{ Unwrap() []error }:
		for _, inner := range u.Unwrap() {
			if !r.clean(inner) {
				return false
			}
		}
	}
	return true
}
