//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// ABI returns the Landlock ABI version the kernel offers, 0 when it has
// none (too old, not enabled at boot, or refused by a seccomp filter).
func ABI() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil || v < 0 {
		return 0
	}
	return v
}

// restrictThread sets no_new_privs on the calling thread and restricts it
// to v with a new Landlock domain, best effort down to the kernel's ABI.
// A proxyPort other than 0 confines TCP connections to that port, and is
// never best effort: a kernel without TCP rules is an error. The caller
// must hold runtime.LockOSThread and never release it: only this thread
// and the processes it starts are restricted, and the thread must end
// with its goroutine.
func restrictThread(v View, proxyPort uint16) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	abi := ABI()
	if proxyPort != 0 && abi < landlockNetABI {
		return fmt.Errorf("the egress proxy: Landlock ABI %d has no TCP rules", abi)
	}
	if abi == 0 {
		return nil
	}
	cfg := landlock.Config{
		HandledAccessFS: landlock.V11.HandledAccessFS,
		Scoped:          landlock.V11.Scoped,
	}
	rules, err := v.rules(abi)
	if err != nil {
		return err
	}
	if proxyPort != 0 {
		// Connecting only: binding a port stays allowed (a test
		// server on loopback), it carries nothing out.
		cfg.HandledAccessNet = ll.AccessNetConnectTCP
		rules = append(rules, landlock.ConnectTCP(proxyPort))
	}
	fd, flags, err := cfg.BestEffort().NewRulesetFD(rules...)
	if err != nil {
		return fmt.Errorf("landlock ruleset: %w", err)
	}
	if fd < 0 {
		if proxyPort != 0 {
			return errors.New("the egress proxy: Landlock made no ruleset")
		}
		return nil
	}
	defer unix.Close(fd)
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return nil
}

// rules turns v into Landlock rules for a kernel of the given ABI. The
// "refer" right (moving and linking files between directories, which git
// and package managers need) only exists from ABI 2; asking for it on ABI 1
// would make the best-effort downgrade drop the whole ruleset.
func (v View) rules(abi int) ([]landlock.Rule, error) {
	if err := v.Validate(); err != nil {
		return nil, err
	}
	rw := func(required bool, paths ...string) []landlock.Rule {
		var out []landlock.Rule
		for _, p := range paths {
			var r landlock.FSRule
			if isDir(p) {
				r = landlock.RWDirs(p)
				if abi >= 2 {
					r = r.WithRefer()
				}
			} else {
				r = landlock.RWFiles(p)
			}
			r = r.WithResolveUnix()
			if !required {
				r = r.IgnoreIfMissing()
			}
			out = append(out, r)
		}
		return out
	}
	ro := func(paths ...string) []landlock.Rule {
		var out []landlock.Rule
		for _, tree := range paths {
			grants, listed := carve(tree, v.Hidden)
			for _, p := range grants {
				if isDir(p) {
					out = append(out, landlock.RODirs(p).IgnoreIfMissing())
				} else {
					out = append(out, landlock.ROFiles(p).IgnoreIfMissing())
				}
			}
			// The directories on the way to a hidden path may be listed
			// (names only), as they could be without it.
			for _, d := range listed {
				out = append(out, landlock.PathAccess(ll.AccessFSReadDir, d).IgnoreIfMissing())
			}
		}
		return out
	}
	var rules []landlock.Rule
	rules = append(rules, rw(true, v.Workspace, v.Temp)...)
	rules = append(rules, rw(false, v.Extra.Write...)...)
	rules = append(rules, ro(v.System...)...)
	rules = append(rules, ro(v.Extra.Read...)...)
	rules = append(rules, ro(kernelDirs...)...)
	// Devices: read, write and ioctl (a terminal's), never a new node;
	// /dev/shm is a scratch directory like the temporary one.
	rules = append(rules,
		landlock.PathAccess(ll.AccessFSReadFile|ll.AccessFSWriteFile|ll.AccessFSReadDir|ll.AccessFSTruncate|ll.AccessFSIoctlDev, devDir).IgnoreIfMissing(),
	)
	rules = append(rules, rw(false, devDir+"/shm")...)
	return rules, nil
}

// carve returns the paths that together grant the tree dir without the
// hidden paths inside it: dir itself when none lies inside, otherwise each
// of its entries, carved in turn, but the hidden one and symbolic links
// (a link needs no grant to be followed, and granting its target could
// reach beyond the tree); and the directories carved open, which may still
// be listed. A directory that cannot be read grants nothing.
func carve(dir string, hidden []string) (grants, listed []string) {
	var inside []string
	for _, h := range hidden {
		if h != dir && within(h, []string{dir}) {
			inside = append(inside, h)
		}
	}
	if len(inside) == 0 {
		return []string{dir}, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil
	}
	listed = []string{dir}
	for _, e := range entries {
		child := filepath.Join(dir, e.Name())
		if e.Type()&os.ModeSymlink != 0 || slices.Contains(inside, child) {
			continue
		}
		g, l := carve(child, inside)
		grants, listed = append(grants, g...), append(listed, l...)
	}
	return grants, listed
}

// isDir reports whether p is a directory (following symbolic links). A
// missing path counts as one: its rule is skipped anyway.
func isDir(p string) bool {
	info, err := os.Stat(p)
	if errors.Is(err, os.ErrNotExist) {
		return true
	}
	return err == nil && info.IsDir()
}
