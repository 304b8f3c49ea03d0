package docs_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// root is the repository root, seen from this package's directory.
const root = ".."

// envVar is one variable cmd/telegram-bot reads: its name and its default
// as the operator guide's table shows it (a code span, or "" when the
// variable has no default of its own).
type envVar struct {
	Name, Default string
}

// TestDocsEnvironmentTable checks that the operator guide's variable table
// lists exactly the variables env.go reads, in env.go's order, each with
// the default of its struct tag, and that every variable-looking name in the
// table exists in env.go.
func TestDocsEnvironmentTable(t *testing.T) {
	want := envVars(t, filepath.Join(root, "cmd", "telegram-bot", "env.go"))
	known := make(map[string]bool, len(want))
	for _, v := range want {
		known[v.Name] = true
	}

	guide := readFile(t, "telegram-bot.md")
	section := markdownSection(guide, "## Environment variables")
	if section == "" {
		t.Fatal(`telegram-bot.md has no "## Environment variables" section`)
	}
	var got []envVar
	varName := regexp.MustCompile(`\b[A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9]\b`)
	for _, row := range tableRows(section) {
		for _, name := range varName.FindAllString(strings.Join(row, " "), -1) {
			if !known[name] {
				t.Errorf("the variable table mentions %s, which env.go does not read", name)
			}
		}
		name, ok := codeSpan(row[0])
		if !ok || len(row) < 2 {
			continue
		}
		def, _ := codeSpan(row[1])
		got = append(got, envVar{Name: name, Default: def})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the variable table of telegram-bot.md differs from env.go (-env.go +doc):\n%s", diff)
	}
	for _, v := range want {
		if !strings.Contains(guide, v.Name) {
			t.Errorf("telegram-bot.md does not mention %s", v.Name)
		}
	}
}

// TestDocsGoNames checks that every Go name the contributor and extension
// guides, the architecture and the performance page (its tests and
// benchmarks) put in a code span (agent.Foo,
// spawnpolicy.Request.Env, ToolContext.Exec, PrepareProcess) exists in the
// code. A section of the architecture whose heading names the branch it
// describes ("(part of the architecture; branch `x`)") is left out until
// that branch is merged and the marker removed.
func TestDocsGoNames(t *testing.T) {
	pkgs, all := goNames(t)
	ident := regexp.MustCompile(`^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*(\(\))?$`)
	for _, file := range []string{filepath.Join(root, "AGENTS.md"), "extensions.md", "architecture.md", "performance.md"} {
		for _, span := range codeSpans(withoutBranchSections(readFile(t, file))) {
			if !ident.MatchString(span) {
				continue
			}
			parts := strings.Split(strings.TrimSuffix(span, "()"), ".")
			switch names, isPkg := pkgs[parts[0]]; {
			case isPkg && len(parts) > 1:
				if name := strings.Join(parts[1:], "."); !names[name] {
					t.Errorf("%s mentions `%s`: package %s has no %s", file, span, parts[0], name)
				}
			case isPkg, !isExportedStyle(parts[0]):
				// A package name alone, the standard library or a variable.
			case !all[strings.Join(parts, ".")]:
				t.Errorf("%s mentions `%s`, which no package of the project declares", file, span)
			}
		}
	}
}

// TestDocsLinks checks that every relative link of the README, AGENTS.md and
// docs/*.md points to a file that exists, and a #fragment to one of its
// headings.
func TestDocsLinks(t *testing.T) {
	files := []string{filepath.Join(root, "README.md"), filepath.Join(root, "AGENTS.md")}
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, pages...)
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, file := range files {
		for _, m := range link.FindAllStringSubmatch(withoutCode(readFile(t, file)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, fragment, _ := strings.Cut(target, "#")
			resolved := file
			if path != "" {
				resolved = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
				if _, err := os.Stat(resolved); err != nil {
					t.Errorf("%s links to %s, which does not exist", file, target)
					continue
				}
			}
			if fragment != "" && strings.HasSuffix(resolved, ".md") && !headingAnchors(t, resolved)[fragment] {
				t.Errorf("%s links to %s: %s has no heading #%s", file, target, resolved, fragment)
			}
		}
	}
}

// envVars returns the envconfig names and defaults of the Env struct in
// the file at path, in declaration order.
func envVars(t *testing.T, path string) []envVar {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var vars []envVar
	ast.Inspect(f, func(n ast.Node) bool {
		spec, ok := n.(*ast.TypeSpec)
		if !ok || spec.Name.Name != "Env" {
			return true
		}
		for _, field := range spec.Type.(*ast.StructType).Fields.List {
			if field.Tag == nil {
				continue
			}
			tag, err := strconv.Unquote(field.Tag.Value)
			if err != nil {
				t.Fatalf("%s: tag %s: %v", path, field.Tag.Value, err)
			}
			st := reflect.StructTag(tag)
			name, ok := st.Lookup("envconfig")
			if !ok {
				continue
			}
			v := envVar{Name: name}
			if def, ok := st.Lookup("default"); ok {
				v.Default = def
			}
			vars = append(vars, v)
		}
		return false
	})
	if len(vars) == 0 {
		t.Fatalf("%s: no Env struct with envconfig tags", path)
	}
	return vars
}

// goNames parses every package of the project (tests included) and returns,
// per package name, the names it declares: top-level names, and
// Type.Member for methods, struct fields and interface methods. all holds
// the same names unqualified, and each member alone, across every package.
func goNames(t *testing.T) (pkgs map[string]map[string]bool, all map[string]bool) {
	t.Helper()
	pkgs = make(map[string]map[string]bool)
	all = make(map[string]bool)
	fset := token.NewFileSet()
	err := walkGoFiles(func(path string) error {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pkg := strings.TrimSuffix(f.Name.Name, "_test")
		if pkgs[pkg] == nil {
			pkgs[pkg] = make(map[string]bool)
		}
		add := func(names ...string) {
			for _, n := range names {
				pkgs[pkg][n] = true
				all[n] = true
			}
		}
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				if decl.Recv == nil {
					add(decl.Name.Name)
					continue
				}
				add(receiverType(decl.Recv.List[0].Type)+"."+decl.Name.Name, decl.Name.Name)
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					switch spec := spec.(type) {
					case *ast.TypeSpec:
						add(spec.Name.Name)
						for _, member := range members(spec.Type) {
							add(spec.Name.Name+"."+member, member)
						}
					case *ast.ValueSpec:
						for _, n := range spec.Names {
							add(n.Name)
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs, all
}

// receiverType returns the name of a method's receiver type.
func receiverType(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return receiverType(e.X)
	case *ast.IndexExpr:
		return receiverType(e.X)
	case *ast.IndexListExpr:
		return receiverType(e.X)
	case *ast.Ident:
		return e.Name
	}
	return ""
}

// members returns the field names of a struct type and the method names of
// an interface type.
func members(e ast.Expr) []string {
	var list *ast.FieldList
	switch e := e.(type) {
	case *ast.StructType:
		list = e.Fields
	case *ast.InterfaceType:
		list = e.Methods
	default:
		return nil
	}
	var names []string
	for _, field := range list.List {
		for _, n := range field.Names {
			names = append(names, n.Name)
		}
		if len(field.Names) == 0 {
			names = append(names, receiverType(field.Type))
		}
	}
	return names
}

// isExportedStyle reports whether name looks like an exported Go name
// rather than an environment variable or a constant of another language:
// an upper-case first letter and at least one lower-case letter.
func isExportedStyle(name string) bool {
	return name != "" && name[0] >= 'A' && name[0] <= 'Z' && strings.ToUpper(name) != name
}

// readFile returns the file at path as text.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// markdownSection returns the part of doc from the heading line to the
// next heading of the same or a higher level, "" when there is none.
func markdownSection(doc, heading string) string {
	lines := strings.Split(doc, "\n")
	level := strings.Index(heading, " ")
	for i, line := range lines {
		if line != heading {
			continue
		}
		end := len(lines)
		for j := i + 1; j < len(lines); j++ {
			if n := headingLevel(lines[j]); n > 0 && n <= level {
				end = j
				break
			}
		}
		return strings.Join(lines[i:end], "\n")
	}
	return ""
}

// headingLevel returns the number of #s of a Markdown heading line, 0 for
// any other line.
func headingLevel(line string) int {
	n := len(line) - len(strings.TrimLeft(line, "#"))
	if n == 0 || n > 6 || !strings.HasPrefix(line[n:], " ") {
		return 0
	}
	return n
}

// tableRows returns the trimmed cells of every row of the Markdown tables
// in text, header and separator rows left out.
func tableRows(text string) [][]string {
	var rows [][]string
	header := true
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			header = true
			continue
		}
		if header {
			header = false
			continue
		}
		if strings.Trim(line, "|-: ") == "" {
			continue
		}
		var cells []string
		for _, cell := range strings.Split(strings.Trim(line, "|"), "|") {
			cells = append(cells, strings.TrimSpace(cell))
		}
		rows = append(rows, cells)
	}
	return rows
}

// codeSpan returns the text of a cell that is exactly one code span.
func codeSpan(cell string) (string, bool) {
	if len(cell) < 2 || cell[0] != '`' || cell[len(cell)-1] != '`' || strings.Count(cell, "`") != 2 {
		return "", false
	}
	return cell[1 : len(cell)-1], true
}

// codeSpans returns the text of every inline code span of doc outside fenced
// code blocks.
func codeSpans(doc string) []string {
	var spans []string
	for _, m := range regexp.MustCompile("`([^`\n]+)`").FindAllStringSubmatch(withoutCode(doc), -1) {
		spans = append(spans, m[1])
	}
	return spans
}

// withoutCode returns doc without its fenced code blocks.
func withoutCode(doc string) string {
	var b strings.Builder
	fenced := false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// headingAnchors returns the GitHub anchors of the headings of the Markdown
// file at path.
func headingAnchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	anchors := make(map[string]bool)
	for _, line := range strings.Split(withoutCode(readFile(t, path)), "\n") {
		n := headingLevel(line)
		if n == 0 {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(line[n:])) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
				b.WriteRune(r)
			}
		}
		anchors[b.String()] = true
	}
	return anchors
}

// TestDocsQuotedCode checks that every code block a guide marks with
// "<!-- quoted from PATH -->" appears verbatim in the file at PATH, so that
// quoted examples cannot drift from the code they quote.
func TestDocsQuotedCode(t *testing.T) {
	marker := regexp.MustCompile("(?m)^<!-- quoted from (\\S+) -->\n```go\n((?s:.*?))\n```$")
	for _, file := range []string{"extensions.md", filepath.Join(root, "AGENTS.md")} {
		quotes := marker.FindAllStringSubmatch(readFile(t, file), -1)
		if file == "extensions.md" && len(quotes) == 0 {
			t.Error("extensions.md quotes no example: its complete extension must be quoted from internal/agent/example_test.go")
		}
		for _, m := range quotes {
			src := readFile(t, filepath.Join(root, filepath.FromSlash(m[1])))
			if !strings.Contains(src, m[2]) {
				t.Errorf("%s quotes code that %s does not hold verbatim:\n%s", file, m[1], m[2])
			}
		}
	}
}

// withoutBranchSections returns doc without the sections whose heading
// marks them as describing a branch not yet merged.
func withoutBranchSections(doc string) string {
	var b strings.Builder
	skip := 0
	for _, line := range strings.Split(doc, "\n") {
		if n := headingLevel(line); n > 0 {
			switch {
			case strings.Contains(line, "(part of the architecture; branch"):
				skip = n
			case skip > 0 && n <= skip:
				skip = 0
			}
		}
		if skip == 0 {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// walkGoFiles calls fn with the path of every .go file of the repository,
// tests included, hidden directories and testdata left out.
func walkGoFiles(fn func(path string) error) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		return fn(path)
	})
}

// funcBody returns the body of the function (not a method) name declared
// in the Go file at path; the test fails when there is none.
func funcBody(t *testing.T, path, name string) *ast.BlockStmt {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == name && fn.Recv == nil {
			return fn.Body
		}
	}
	t.Fatalf("%s declares no func %s", path, name)
	return nil
}
