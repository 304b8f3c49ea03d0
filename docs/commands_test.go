package docs_test

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDocsCommandsTable checks that the operator guide's Commands table
// lists exactly the chat's commands, in the order of its table of
// commands (the one source of setMyCommands, /help and the dispatch), each
// with its argument as /help shows it ("/model [name]").
func TestDocsCommandsTable(t *testing.T) {
	want := chatCommands(t, filepath.Join(root, "internal", "chat", "commands.go"))
	section := markdownSection(readFile(t, "telegram-bot.md"), "## Commands")
	if section == "" {
		t.Fatal(`telegram-bot.md has no "## Commands" section`)
	}
	var got []string
	for _, row := range tableRows(section) {
		if span, ok := codeSpan(row[0]); ok {
			got = append(got, span)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the Commands table of telegram-bot.md differs from internal/chat's table of commands (-code +doc):\n%s", diff)
	}
}

// chatCommands returns "/name args" for every entry of the table that the
// function commands in the file at path returns, in order.
func chatCommands(t *testing.T, path string) []string {
	t.Helper()
	var out []string
	ast.Inspect(funcBody(t, path, "commands"), func(n ast.Node) bool {
		lit, ok := n.(*ast.CompositeLit)
		if !ok {
			return true
		}
		fields := map[string]string{}
		for _, e := range lit.Elts {
			kv, ok := e.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			key, ok := kv.Key.(*ast.Ident)
			val, isLit := kv.Value.(*ast.BasicLit)
			if !ok || !isLit || val.Kind != token.STRING {
				continue
			}
			s, err := strconv.Unquote(val.Value)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			fields[key.Name] = s
		}
		name, ok := fields["name"]
		if !ok {
			return true
		}
		entry := "/" + name
		if args := fields["args"]; args != "" {
			entry += " " + args
		}
		out = append(out, entry)
		return false
	})
	if len(out) == 0 {
		t.Fatalf("%s: no table of commands (a func commands returning entries with a name)", path)
	}
	return out
}
