package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// toolboxCommands returns the programs the operator guide's recipes run in
// agent processes (MCP servers through npx, Python scripts, gh and git on
// a repository, curl), in the order the doctor lists them.
func toolboxCommands() []string {
	return []string{"node", "npx", "python3", "pip", "gh", "git", "curl"}
}

// versionPattern finds the first dotted version number in a program's
// --version output ("v22.1.0", "Python 3.11.2", "gh version 2.40.1").
var versionPattern = regexp.MustCompile(`[0-9]+(\.[0-9]+)+`)

// doctorToolbox prints the toolbox line of the Tools section: each of
// toolboxCommands with its version, or missing. Each is looked up on the
// PATH agent processes get and started the way one of them would be, with
// the environment policy gives it, for 5 seconds at most; only the version
// number of what it prints is shown.
func doctorToolbox(ctx context.Context, r *report, policy *spawnpolicy.Policy) {
	if policy == nil {
		return
	}
	var versions []string
	for _, name := range toolboxCommands() {
		versions = append(versions, name+" "+toolVersion(ctx, policy, name))
	}
	r.line("  toolbox: %s", strings.Join(versions, ", "))
}

// toolVersion is one program's entry of the toolbox line.
func toolVersion(ctx context.Context, policy *spawnpolicy.Policy, name string) string {
	pc, err := policy.Prepare(spawnpolicy.Request{
		Purpose: spawnpolicy.Other,
		Command: name,
		Args:    []string{"--version"},
		Cwd:     os.TempDir(),
		Origin:  "doctor",
	})
	if err != nil {
		return "not checked (" + err.Error() + ")"
	}
	exe := lookPathIn(pc.Env["PATH"], name)
	if exe == "" {
		return "missing"
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, exe, pc.Args...)
	pc.ApplyTo(cmd)
	cmd.Stdout = &out
	err = pc.Start(cmd)
	if err == nil {
		err = cmd.Wait()
	}
	switch v := versionPattern.FindString(out.String()); {
	case err != nil:
		return "present, but --version fails"
	case v == "":
		return "present"
	default:
		return v
	}
}

// lookPathIn is exec.LookPath over path rather than the doctor's own PATH:
// the PATH agent processes get is the one that counts.
func lookPathIn(path, name string) string {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() && info.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}
