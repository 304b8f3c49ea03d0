package spawnpolicy

import (
	"errors"
	"fmt"
	"iter"
	"maps"
	"os"
	"strings"
)

// processEnviron snapshots the real process environment.
func processEnviron() map[string]string {
	return parseEnviron(os.Environ())
}

// parseEnviron turns "name=value" entries into a map. Entries without a
// name (Windows keeps per-drive working directories as "=C:=C:\...") or
// without "=" are left out: no child can be given them by name.
func parseEnviron(entries []string) map[string]string {
	env := make(map[string]string, len(entries))
	for _, entry := range entries {
		name, value, ok := strings.Cut(entry, "=")
		if !ok || name == "" {
			continue
		}
		env[name] = value
	}
	return env
}

// setVar sets name in env. With fold (Windows), a variable whose name differs
// only in case is replaced, as the OS would.
func setVar(env map[string]string, name, value string, fold bool) {
	unsetVar(env, name, fold)
	env[name] = value
}

// unsetVar removes name from env; with fold, ignoring case.
func unsetVar(env map[string]string, name string, fold bool) {
	if !fold {
		delete(env, name)
		return
	}
	for existing := range env {
		if strings.EqualFold(existing, name) {
			delete(env, existing)
		}
	}
}

// mentions reports whether the explicit environment sets or removes name;
// with fold, ignoring case.
func mentions(explicit map[string]*string, name string, fold bool) bool {
	if _, ok := explicit[name]; ok || !fold {
		return ok
	}
	for existing := range explicit {
		if strings.EqualFold(existing, name) {
			return true
		}
	}
	return false
}

// checkName reports why the OS cannot carry a variable named name, if it
// cannot: an empty name, "=" in it, or a NUL byte.
func checkName(name string) error {
	switch {
	case name == "":
		return errors.New("a variable has an empty name")
	case strings.IndexByte(name, '=') >= 0:
		return fmt.Errorf("variable name %q contains '='", name)
	case strings.IndexByte(name, 0) >= 0:
		return fmt.Errorf("variable name %q contains a NUL byte", name)
	}
	return nil
}

// checkValue reports why the OS cannot carry the value of the variable
// name, if it cannot (a NUL byte). The error names the variable, never the
// value.
func checkValue(name, value string) error {
	if strings.IndexByte(value, 0) >= 0 {
		return fmt.Errorf("the value of %q contains a NUL byte", name)
	}
	return nil
}

// checkNames reports the first pair of names that are one variable to an OS
// that ignores case in names (fold), or nil.
func checkNames(names iter.Seq[string], fold bool) error {
	if !fold {
		return nil
	}
	seen := make(map[string]string)
	for name := range names {
		key := strings.ToUpper(name)
		if other, ok := seen[key]; ok {
			return fmt.Errorf("variables %q and %q differ only in case", other, name)
		}
		seen[key] = name
	}
	return nil
}

// checkExplicit reports why an explicit environment cannot be applied: a
// name or value the OS cannot carry, or two names that are one variable.
func checkExplicit(explicit map[string]*string, fold bool) error {
	for name, value := range explicit {
		if err := checkName(name); err != nil {
			return err
		}
		if value != nil {
			if err := checkValue(name, *value); err != nil {
				return err
			}
		}
	}
	return checkNames(maps.Keys(explicit), fold)
}

// checkContext reports why c cannot be given to a child: no command, no
// working directory, no environment, a NUL byte in the command, an argument
// or the working directory, or a variable the OS cannot carry.
func checkContext(c Context, fold bool) error {
	switch {
	case strings.TrimSpace(c.Command) == "":
		return errors.New("no command")
	case c.Cwd == "":
		return errors.New("no working directory")
	case c.Env == nil:
		return errors.New("no environment (a nil map)")
	case strings.IndexByte(c.Command, 0) >= 0:
		return errors.New("the command contains a NUL byte")
	case strings.IndexByte(c.Cwd, 0) >= 0:
		return errors.New("the working directory contains a NUL byte")
	}
	for i, arg := range c.Args {
		if strings.IndexByte(arg, 0) >= 0 {
			return fmt.Errorf("argument %d contains a NUL byte", i)
		}
	}
	for name, value := range c.Env {
		if err := checkName(name); err != nil {
			return err
		}
		if err := checkValue(name, value); err != nil {
			return err
		}
	}
	return checkNames(maps.Keys(c.Env), fold)
}
