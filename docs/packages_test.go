package docs_test

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDocsPackageList checks that the package list of AGENTS.md, the one
// list of the project's packages, names exactly the directories that hold
// Go files, so that a package added, moved or removed cannot leave it
// behind.
func TestDocsPackageList(t *testing.T) {
	want := goPackageDirs(t)
	got := listedPackages(t, readFile(t, filepath.Join(root, "AGENTS.md")))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the package list of AGENTS.md differs from the directories with Go files (-code +AGENTS.md):\n%s", diff)
	}
}

// goPackageDirs returns, sorted, the slash-separated directories that hold
// a .go file (see walkGoFiles).
func goPackageDirs(t *testing.T) []string {
	t.Helper()
	seen := make(map[string]bool)
	err := walkGoFiles(func(path string) error {
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		seen[filepath.ToSlash(rel)] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for d := range seen {
		dirs = append(dirs, d)
	}
	slices.Sort(dirs)
	return dirs
}

// listedPackages returns, sorted, the package paths that start the lines
// of the first fenced block under AGENTS.md's package heading: one path,
// or several separated by commas, before the two or more blanks that
// start the description.
func listedPackages(t *testing.T, doc string) []string {
	t.Helper()
	section := markdownSection(doc, "## Packages, and the direction of imports")
	start := strings.Index(section, "```\n")
	if start < 0 {
		t.Fatal("AGENTS.md has no fenced package list under its package heading")
	}
	block, _, ok := strings.Cut(section[start+4:], "```")
	if !ok {
		t.Fatal("AGENTS.md's package list is not closed")
	}
	path := regexp.MustCompile(`^[a-z][a-z0-9/-]*$`)
	gap := regexp.MustCompile(`\s{2,}`)
	var pkgs []string
	for _, line := range strings.Split(block, "\n") {
		if line == "" || line[0] == ' ' {
			continue // a continuation of the description above
		}
		head := gap.Split(line, 2)[0]
		for _, p := range strings.Split(head, ",") {
			p = strings.TrimSpace(p)
			if !path.MatchString(p) {
				t.Errorf("AGENTS.md's package list has a line that starts with no package path: %q", line)
				continue
			}
			pkgs = append(pkgs, p)
		}
	}
	slices.Sort(pkgs)
	return pkgs
}
