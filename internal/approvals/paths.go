package approvals

import (
	"os"
	"path/filepath"
	"strings"
)

// outsideView reports whether a write or edit of p would land outside the
// workspace and the extra writable roots. A relative p is joined to the
// workspace, as the tools do; symbolic links in the part of the path that
// exists are resolved, so a link in the workspace that points out counts as
// outside, and a path that cannot be resolved counts as outside too.
func outsideView(workspace string, roots []string, p string) bool {
	if !filepath.IsAbs(p) {
		if workspace == "" {
			return true
		}
		p = filepath.Join(workspace, p)
	}
	target, ok := resolveExisting(filepath.Clean(p))
	if !ok {
		return true
	}
	for _, root := range append([]string{workspace}, roots...) {
		if root == "" {
			continue
		}
		r, ok := resolveExisting(filepath.Clean(root))
		if ok && within(r, target) {
			return false
		}
	}
	return true
}

// resolveExisting resolves the symbolic links of the longest part of p that
// exists and appends the rest; ok is false when that part does not resolve
// (a dangling or looping link).
func resolveExisting(p string) (string, bool) {
	rest := ""
	for cur := p; ; {
		if _, err := os.Lstat(cur); err == nil {
			r, err := filepath.EvalSymlinks(cur)
			if err != nil {
				return "", false
			}
			return filepath.Join(r, rest), true
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p, true
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// within reports whether p is root or below it.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
