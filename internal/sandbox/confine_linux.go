//go:build linux

package sandbox

// confineThread confines the calling thread, and so the command it starts,
// for s: no_new_privs and a new Landlock domain for the view
// (restrictThread), then the seccomp filter that refuses calls on another
// process (filterThread). The caller must hold runtime.LockOSThread and
// never release it.
func confineThread(s spec) error {
	if err := restrictThread(s.View); err != nil {
		return err
	}
	if s.NoProcessFilter {
		return nil
	}
	return filterThread(false)
}
