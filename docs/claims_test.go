package docs_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// pages returns the documentation the claim tests read: the README,
// AGENTS.md and every page of docs/.
func pages(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join(root, "README.md"), filepath.Join(root, "AGENTS.md")}, files...)
}

// paragraphs returns the paragraphs of doc outside fenced code blocks.
func paragraphs(doc string) []string {
	return strings.Split(withoutCode(doc), "\n\n")
}

// TestDocsDefaultsInProse checks every default the documentation states in
// prose for a variable ("`OPENAI_MODEL` (default `gpt-4.1-mini`)",
// "`AGENT_SANDBOX=auto` (the default)") against the default tag of that
// variable in env.go. A default is the last variable named before it in
// its paragraph; the operator guide states none without a variable
// before it, and no page states one in a form this test cannot read
// ("(default 10 minutes)", "by default").
func TestDocsDefaultsInProse(t *testing.T) {
	defaults := make(map[string]string)
	for _, v := range envVars(t, filepath.Join(root, "cmd", "telegram-bot", "env.go")) {
		defaults[v.Name] = v.Default
	}
	variable := regexp.MustCompile("`([A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9])`")
	stated := regexp.MustCompile("\\bdefaults? (?:is |to )?`([^`]+)`|`([A-Z][A-Z0-9_]*)=([^`]+)` \\(the default\\)")
	checked := 0
	for _, file := range pages(t) {
		doc := readFile(t, file)
		if filepath.Base(file) == "telegram-bot.md" {
			// The variable table is TestDocsEnvironmentTable's.
			doc = strings.Replace(doc, markdownSection(doc, "## Environment variables"), "", 1)
		}
		for _, para := range paragraphs(doc) {
			for _, m := range stated.FindAllStringSubmatchIndex(para, -1) {
				var name, value string
				if m[2] >= 0 {
					value = para[m[2]:m[3]]
					for _, v := range variable.FindAllStringSubmatch(para[:m[0]], -1) {
						if _, ok := defaults[v[1]]; ok {
							name = v[1]
						}
					}
				} else {
					name, value = para[m[4]:m[5]], para[m[6]:m[7]]
				}
				want, known := defaults[name]
				switch {
				case name == "" && filepath.Base(file) == "telegram-bot.md":
					t.Errorf("%s states a default `%s` with no variable before it in its paragraph, so nothing checks it", file, value)
				case name == "":
					// A default of the code (a Go constant), not a variable's.
				case !known:
					t.Errorf("%s states the default of %s, which env.go does not read", file, name)
				case value != want:
					t.Errorf("%s states %s's default as `%s`; env.go's default tag is %q", file, name, value, want)
				default:
					checked++
				}
			}
		}
	}
	if checked == 0 {
		t.Error("no default stated in prose was found: the pattern no longer matches how the docs write them")
	}
	unchecked := regexp.MustCompile("(?i)\\(default [^`]|\\bby default\\b")
	for _, file := range pages(t) {
		for _, para := range paragraphs(readFile(t, file)) {
			if m := unchecked.FindString(para); m != "" {
				t.Errorf("%s states a default as %q, which no test can check: write it as \"(default `value`)\" after its variable", file, m)
			}
		}
	}
}

// TestDocsImageEnvironment checks every `NAME=value` the documentation
// gives, in a paragraph about the image, for a variable the Dockerfile's
// ENV sets, against the Dockerfile: the image's AGENT_DIR, WORKSPACE_DIR
// and HOME were described wrongly before.
func TestDocsImageEnvironment(t *testing.T) {
	env := dockerfileEnv(t, filepath.Join(root, "Dockerfile"))
	if env["HOME"] == "" || env["AGENT_DIR"] == "" {
		t.Fatalf("the Dockerfile's ENV sets no HOME or AGENT_DIR: %v", env)
	}
	assignment := regexp.MustCompile("`([A-Za-z_][A-Za-z0-9_]*)=([^`\\s]+)`")
	checked := 0
	for _, file := range pages(t) {
		for _, para := range paragraphs(readFile(t, file)) {
			if !strings.Contains(para, "image") && !strings.Contains(para, "Dockerfile") {
				continue
			}
			for _, m := range assignment.FindAllStringSubmatch(para, -1) {
				want, ok := env[m[1]]
				if !ok {
					continue
				}
				checked++
				if m[2] != want {
					t.Errorf("%s says the image sets `%s=%s`; the Dockerfile sets %s=%s", file, m[1], m[2], m[1], want)
				}
			}
		}
	}
	if checked == 0 {
		t.Error("no paragraph about the image names a variable its Dockerfile sets")
	}
}

// dockerfileEnv returns the variables the ENV instructions of the
// Dockerfile at path set (the last value of each).
func dockerfileEnv(t *testing.T, path string) map[string]string {
	t.Helper()
	text := strings.ReplaceAll(readFile(t, path), "\\\n", " ")
	env := make(map[string]string)
	for _, line := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(line, "ENV ")
		if !ok {
			continue
		}
		for _, pair := range strings.Fields(rest) {
			if name, value, ok := strings.Cut(pair, "="); ok {
				env[name] = value
			}
		}
	}
	return env
}

// TestDocsStateTable checks that the operator guide's table of what lives
// in AGENT_DIR lists exactly the files and directories the code keeps
// there: the string constants documented as being in the agent dir, and
// the names the code joins to an AgentDir.
func TestDocsStateTable(t *testing.T) {
	want := sortedKeys(agentDirFiles(t))
	section := markdownSection(readFile(t, "telegram-bot.md"), "## Where state lives")
	if section == "" {
		t.Fatal(`telegram-bot.md has no "## Where state lives" section`)
	}
	var got []string
	for _, row := range tableRows(section) {
		if span, ok := codeSpan(row[0]); ok {
			got = append(got, strings.TrimSuffix(span, "/"))
		}
	}
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the state table of telegram-bot.md differs from what the code keeps in AGENT_DIR (-code +doc):\n%s", diff)
	}
}

// notTheBots are file names the documentation gives in a code span that
// name no file the bot keeps in the agent dir, with why.
var notTheBots = map[string]string{
	"gcp-oauth.keys.json": "Google's OAuth client file, in the MCP recipe",
	"mcp.json":            "an MCP configuration: the old default in the agent dir (mcp.DefaultFile), which the bot never reads, or a root-owned file",
}

// TestDocsAgentDirFilesInProse checks every file of the agent dir the
// documentation names in prose (`inbound.jsonl`, `<AGENT_DIR>/heartbeat`,
// `/data/mcp-home/...` of the image) against what the code keeps there, so
// that a renamed constant cannot leave a page naming the old file.
func TestDocsAgentDirFilesInProse(t *testing.T) {
	files := agentDirFiles(t)
	stateFile := regexp.MustCompile(`^[a-z][a-z0-9.-]*\.jsonl?$`)
	checked := 0
	for _, file := range pages(t) {
		for _, span := range codeSpans(readFile(t, file)) {
			var name string
			switch {
			case strings.HasPrefix(span, "<AGENT_DIR>/"):
				name = strings.TrimPrefix(span, "<AGENT_DIR>/")
			case strings.HasPrefix(span, "/data/"):
				name = strings.TrimPrefix(span, "/data/")
			case stateFile.MatchString(span):
				name = span
			default:
				continue
			}
			name, _, _ = strings.Cut(name, "/")
			if _, ok := notTheBots[name]; ok {
				continue
			}
			checked++
			if _, ok := files[name]; !ok {
				t.Errorf("%s names `%s` as a file of the agent dir; the code keeps no %q there (it keeps %v)", file, span, name, sortedKeys(files))
			}
		}
	}
	if checked == 0 {
		t.Error("the documentation names no file of the agent dir: the patterns no longer match")
	}
}

// notKept are constants whose doc comment places them in the agent dir
// but that name nothing the bot keeps there, with why.
var notKept = map[string]string{
	"DefaultFile": "internal/mcp: mcp.json, the old default configuration, which the bot only warns of",
}

// agentDirFiles returns the names the product code keeps in the agent
// dir, each with where it is declared: the values of string constants
// whose doc comment places them in the agent dir ("JournalFile is the
// inbound journal in the agent dir", "SystemFile in the agent dir"), and
// the literal names joined to an expression named like AgentDir.
func agentDirFiles(t *testing.T) map[string]string {
	t.Helper()
	files := make(map[string]string)
	excluded := make(map[string]bool)
	fset := token.NewFileSet()
	err := walkGoFiles(func(path string) error {
		if strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		err = stringConsts(f, func(gen *ast.GenDecl, spec *ast.ValueSpec, name, value string) {
			doc := strings.Join(strings.Fields(spec.Doc.Text()), " ")
			if group := strings.Join(strings.Fields(gen.Doc.Text()), " "); doc == "" && len(gen.Specs) == 1 {
				doc = group
			} else if doc == "" && strings.Contains(group, name+" in the agent dir") {
				doc = "in the agent dir"
			}
			switch {
			case !strings.Contains(doc, "in the agent dir"):
			case notKept[name] != "":
				excluded[name] = true
			default:
				files[value] = path + ": " + name
			}
		})
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 2 || !isCall(call.Fun, "filepath", "Join") || !namedAgentDir(call.Args[0]) {
				return true
			}
			if lit, ok := call.Args[1].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if value, err := strconv.Unquote(lit.Value); err == nil {
					files[value] = fset.Position(lit.Pos()).String()
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("found no file the code keeps in the agent dir")
	}
	for name, why := range notKept {
		if !excluded[name] {
			t.Errorf("notKept names %s (%s), which no constant placed in the agent dir is any more: remove it", name, why)
		}
	}
	return files
}

// isCall reports whether fun is pkg.name.
func isCall(fun ast.Expr, pkg, name string) bool {
	sel, ok := fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != name {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == pkg
}

// namedAgentDir reports whether e is an identifier or a field named
// AgentDir (any case).
func namedAgentDir(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return strings.EqualFold(e.Name, "agentDir")
	case *ast.SelectorExpr:
		return strings.EqualFold(e.Sel.Name, "agentDir")
	}
	return false
}

// sortedKeys returns m's keys, sorted.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestDocsWebhookUpdateTypes checks the update types the operator guide
// says the webhook asks Telegram for against allowedUpdates in
// internal/chat/poll.go, the one list polling and setWebhook both send.
func TestDocsWebhookUpdateTypes(t *testing.T) {
	want := allowedUpdates(t, filepath.Join(root, "internal", "chat", "poll.go"))
	section := markdownSection(readFile(t, "telegram-bot.md"), "## Webhook mode")
	list := regexp.MustCompile(`update types it handles\s+\(([^)]*)\)`).FindStringSubmatch(section)
	if list == nil {
		t.Fatal(`telegram-bot.md's "## Webhook mode" no longer says "the update types it handles (...)"`)
	}
	var got []string
	for _, m := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(list[1], -1) {
		got = append(got, m[1])
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the webhook's update types in telegram-bot.md differ from allowedUpdates (-code +doc):\n%s", diff)
	}
}

// allowedUpdates returns the strings of the slice the function
// allowedUpdates in the file at path returns.
func allowedUpdates(t *testing.T, path string) []string {
	t.Helper()
	var out []string
	ast.Inspect(funcBody(t, path, "allowedUpdates"), func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
		}
		return true
	})
	if len(out) == 0 {
		t.Fatalf("%s: allowedUpdates returns no string literals", path)
	}
	return out
}

// TestDocsApprovalRules checks the approval rules the pages name against
// the built-in rules' IDs in internal/approvals/rules.go: the threat
// model's table lists each in the code's order, and the operator guide's
// list names the same rules.
func TestDocsApprovalRules(t *testing.T) {
	want := approvalRules(t, filepath.Join(root, "internal", "approvals", "rules.go"))
	var table []string
	for _, row := range tableRows(markdownSection(readFile(t, "security.md"), "## The approval rules, exactly")) {
		if span, ok := codeSpan(row[0]); ok {
			table = append(table, span)
		}
	}
	if diff := cmp.Diff(want, table); diff != "" {
		t.Errorf("the approval rules table of security.md differs from internal/approvals (-code +doc):\n%s", diff)
	}
	known := make(map[string]bool, len(want))
	for _, id := range want {
		known[id] = true
	}
	section := markdownSection(readFile(t, "telegram-bot.md"), "## Approvals")
	_, list, ok := strings.Cut(section, "The rules, by the names the request shows")
	if !ok {
		t.Fatal(`telegram-bot.md's "## Approvals" no longer lists "The rules, by the names the request shows"`)
	}
	var named []string
	for _, span := range codeSpans(list) {
		if regexp.MustCompile(`^[a-z]+(-[a-z]+)*$`).MatchString(span) {
			named = append(named, span)
		}
	}
	if diff := cmp.Diff(want, named); diff != "" {
		t.Errorf("the approval rules telegram-bot.md names differ from internal/approvals (-code +doc):\n%s", diff)
	}
}

// approvalRules returns the values of the Rule* string constants of the
// file at path, in declaration order.
func approvalRules(t *testing.T, path string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	err = stringConsts(f, func(_ *ast.GenDecl, _ *ast.ValueSpec, name, value string) {
		if strings.HasPrefix(name, "Rule") {
			ids = append(ids, value)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) == 0 {
		t.Fatalf("%s: no Rule* string constants", path)
	}
	return ids
}

// stringConsts calls fn, in declaration order, for every constant of f
// whose value is a string literal, with its declaration, its spec, its
// name and its value.
func stringConsts(f *ast.File, fn func(gen *ast.GenDecl, spec *ast.ValueSpec, name, value string)) error {
	for _, decl := range f.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.CONST {
			continue
		}
		for _, spec := range gen.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				value, err := strconv.Unquote(lit.Value)
				if err != nil {
					return err
				}
				fn(gen, vs, name.Name, value)
			}
		}
	}
	return nil
}
