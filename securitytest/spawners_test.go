package securitytest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEverySpawnerAppliesThePolicy reads the product's Go sources (tests
// left out) and checks that every function building an *exec.Cmd also
// calls ApplyTo, so its child's environment comes from the spawn policy and
// never from the host (a nil Env inherits everything). A call of
// os.StartProcess or syscall.Exec, which ApplyTo cannot cover, fails too,
// with one exception: the sandbox launcher's run, which starts exactly
// the command ApplyTo handed it. An exec.Cmd built as a literal counts as
// a spawner too, but for the sandbox's launcher started ahead (start),
// whose environment is the launcher's own, empty of the bot's. And ApplyTo
// itself must route through the sandbox (call Wrap), so every spawner
// above is confined when the sandbox is on.
func TestEverySpawnerAppliesThePolicy(t *testing.T) {
	root := filepath.Join("..")
	fset := token.NewFileSet()
	spawners := 0
	routes := false
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		file, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			return err
		}
		for _, decl := range file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			var builds []token.Pos
			applies := false
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if lit, ok := n.(*ast.CompositeLit); ok {
					if sel, ok := lit.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Cmd" && !warmStart(path, fn.Name.Name) {
						if pkg, _ := sel.X.(*ast.Ident); pkg != nil && pkg.Name == "exec" {
							builds = append(builds, lit.Pos())
						}
					}
					return true
				}
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				pkg, _ := sel.X.(*ast.Ident)
				switch {
				case pkg != nil && pkg.Name == "exec" && (sel.Sel.Name == "Command" || sel.Sel.Name == "CommandContext"):
					builds = append(builds, call.Pos())
				case launcherStart(path, fn.Name.Name, pkg, sel.Sel.Name):
					// The launcher starts what ApplyTo prepared.
				case pkg != nil && (pkg.Name == "os" && sel.Sel.Name == "StartProcess" || pkg.Name == "syscall" && (sel.Sel.Name == "Exec" || sel.Sel.Name == "ForkExec")):
					t.Errorf("%s: %s.%s starts a process the spawn policy cannot cover", fset.Position(call.Pos()), pkg.Name, sel.Sel.Name)
				case sel.Sel.Name == "ApplyTo":
					applies = true
				case sel.Sel.Name == "Wrap" && fn.Name.Name == "ApplyTo" && filepath.ToSlash(path) == "../internal/spawnpolicy/apply.go":
					routes = true
				}
				return true
			})
			for _, pos := range builds {
				spawners++
				if !applies {
					t.Errorf("%s: %s builds an exec.Cmd without ApplyTo: its child would inherit the host's environment", fset.Position(pos), fn.Name.Name)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("reading the sources: %v", err)
	}
	if !routes {
		t.Error("spawnpolicy's ApplyTo does not call the sandbox launcher's Wrap: no spawner would be confined")
	}
	if spawners < 5 {
		t.Errorf("found %d spawners, want at least the bash tool, Exec, watcher scripts, MCP servers and the doctor's probe", spawners)
	}
}

// launcherStart reports whether the call pkg.name in function fn of the
// file path is the sandbox launcher starting its command (directly, or
// through the network namespace's stage, which runs it with the spec's
// prepared environment once confined), the launcher starting that stage
// or the namespace probe (the bot's own binary, with launcherEnv's empty
// environment), or the spawner re-executing itself once it narrowed its
// capabilities (its own fixed environment: the agent's ids and the bot's
// pid).
func launcherStart(path, fn string, pkg *ast.Ident, name string) bool {
	path = filepath.ToSlash(path)
	switch {
	case pkg == nil || pkg.Name != "syscall":
		return false
	case name == "ForkExec" && fn == "forkExec":
		// The one start of a launcher's command, from the thread that
		// confined itself (startConfined, or the thread confined ahead).
		return path == "../internal/sandbox/launch_linux.go"
	case name == "Exec" && fn == "launchSpawner":
		return path == "../internal/sandbox/spawner_linux.go"
	case name == "Exec" && fn == "netnsStage", name == "ForkExec" && (fn == "forkDumpable" || fn == "probeNamespace"):
		return path == "../internal/sandbox/netns_linux.go"
	}
	return false
}

// warmStart reports whether function fn of the file path starts the
// sandbox's launcher (or the spawner) as a process of its own: the
// launcher itself, with its own fixed environment (launcherEnv; the
// spawner's ids), not an agent's command. The launcher ahead of its
// command, the spawner, and the agent-side launcher the spawner starts.
func warmStart(path, fn string) bool {
	switch filepath.ToSlash(path) {
	case "../internal/sandbox/warm_linux.go":
		return fn == "start"
	case "../internal/sandbox/spawner_linux.go":
		return fn == "StartSpawner" || fn == "startAgent"
	}
	return false
}
