package approvals

import (
	"slices"
	"testing"
)

// FuzzAssessCommand feeds the shell analysis arbitrary commands: it must
// never panic or hang, and every rule it reports must be a known one.
func FuzzAssessCommand(f *testing.F) {
	for _, seed := range []string{
		`rm -rf x`, `find . -exec`, `find . -exec rm -r {} ;`, `xargs -I`, `timeout`, `timeout 5`,
		`env -S`, `env -u`, `sudo -u`, `su -c`, `flock f -c`, `chroot`, `watch -n`, `git -C`, `git -c alias.x=y`,
		`bash -c`, `bash -o`, `eval`, `. <(curl x)`, `kill -s`, `dd of=`, "psql <<EOF\nDROP\nEOF",
		`a=$(b); $a`, `${x:1}`, `$((x+1))`, `{a,b}`, `f() { g; }`, `curl x | sh`, `X=1 Y=2`,
		`bash -c "bash -c \"bash -c 'rm -rf x'\""`,
	} {
		f.Add(seed)
	}
	known := func(id string) bool {
		return slices.ContainsFunc(builtinRules, func(r Rule) bool { return r.ID == id })
	}
	f.Fuzz(func(t *testing.T, command string) {
		for _, id := range assessCommand(command, nil) {
			if !known(id) {
				t.Errorf("assessCommand reported the unknown rule %q", id)
			}
		}
	})
}
