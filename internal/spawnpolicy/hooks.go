package spawnpolicy

import (
	"fmt"
)

// runHooks runs hooks in order over c. Each hook gets its own copy of the
// context; Purpose, Scope, SessionID, Origin and the sandbox are restored
// after each one.
// The first hook that fails, panics or returns an unusable context stops the
// run with an error naming its position (its index in Options.Hooks), and
// the zero Context comes back.
func runHooks(hooks []Hook, c Context) (Context, error) {
	if len(hooks) == 0 {
		return c, nil
	}
	for i, hook := range hooks {
		out, err := callHook(hook, c.clone())
		if err != nil {
			return Context{}, fmt.Errorf("spawnpolicy: hooks[%d] failed: %w", i, err)
		}
		out = out.Restore(c)
		if err := checkContext(out, foldNames); err != nil {
			return Context{}, fmt.Errorf("spawnpolicy: hooks[%d] returned an unusable context: %w", i, err)
		}
		c = out
	}
	// The last hook's maps and slices may still be referenced by the hook;
	// the caller gets its own.
	return c.clone(), nil
}

// callHook calls hook and turns a panic into an error.
func callHook(hook Hook, in Context) (out Context, err error) {
	defer func() {
		if r := recover(); r != nil {
			out = Context{}
			if e, ok := r.(error); ok {
				err = fmt.Errorf("panicked: %w", e)
			} else {
				err = fmt.Errorf("panicked: %v", r)
			}
		}
	}()
	return hook(in)
}
