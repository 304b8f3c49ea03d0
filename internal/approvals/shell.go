package approvals

import (
	"io"
	"path"
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// The command is read with a real shell parser (mvdan.cc/sh), the way bash
// reads it: quotes, escapes, ANSI-C strings and brace expansion are
// undone, every simple command is looked at wherever it stands (after ";"
// or "&&", in a pipeline, a subshell, a function, a command substitution),
// and the scripts handed to eval, sh -c, find -exec, watch and the like are
// parsed in turn. What only the running shell knows is marked instead of
// guessed:
//
//   - computed is the value of a variable the command itself sets
//     (X=-rf; rm $X), of a positional parameter, of a command
//     substitution: it may be anything, a flag included;
//   - environment is the value of a variable the command does not set: it
//     comes from the process environment, which the operator controls.
const (
	computed    = "\uE000"
	environment = "\uE001"
)

// maxDepth bounds how deep scripts inside scripts are parsed; a deeper one
// is treated as unparsable.
const maxDepth = 8

// alwaysComputed are parameters whose value the command sets whatever it
// says: positional parameters, the last argument, the results of read,
// getopts, mapfile, [[ =~ ]] and coproc.
var alwaysComputed = map[string]bool{
	"@": true, "*": true, "_": true, "-": true, "0": true,
	"REPLY": true, "OPTARG": true, "MAPFILE": true, "BASH_REMATCH": true, "COPROC": true,
}

// settingBuiltins are builtins whose arguments name the variables they set.
var settingBuiltins = map[string]bool{
	"read": true, "mapfile": true, "readarray": true, "getopts": true,
	"printf": true, "let": true, "declare": true, "typeset": true,
	"local": true, "export": true, "readonly": true,
}

// anyVariableBuiltins are builtins that may set any variable.
var anyVariableBuiltins = map[string]bool{"source": true, ".": true, "eval": true}

// namePrefix matches the variable name an argument of a setting builtin
// starts with.
var namePrefix = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*`)

// analysis is what one bash command was found to match.
type analysis struct {
	custom []customRule
	found  []string
	seen   map[string]bool
	// set holds the variables the command sets; all means it may set any
	// (source, eval).
	set map[string]bool
	all bool
	// downloads reports a download program anywhere in the command.
	downloads bool
	// aliases holds the aliases the command defines, by name; expanding
	// those whose expansion is being looked at.
	aliases   map[string]string
	expanding map[string]bool
	// followed holds the runs of arguments wrappers were followed to.
	followed map[followKey]bool
}

// downloaders are the programs that fetch files from elsewhere: a script
// run in the same command may be what they fetched.
var downloaders = map[string]bool{
	"curl": true, "wget": true, "wget2": true, "aria2c": true, "axel": true, "fetch": true,
	"http": true, "https": true, "xh": true, "curlie": true, "lftp": true, "ftp": true,
	"tftp": true, "scp": true, "sftp": true,
}

// commandVariables are variables whose value programs run as a command
// (git runs $GIT_PAGER, ssh runs $SSH_ASKPASS, bash $PROMPT_COMMAND): an
// assignment to one is a script run later.
var commandVariables = map[string]bool{
	"GIT_SSH_COMMAND": true, "GIT_SSH": true, "GIT_PAGER": true, "GIT_EDITOR": true,
	"GIT_SEQUENCE_EDITOR": true, "GIT_EXTERNAL_DIFF": true, "GIT_ASKPASS": true,
	"GIT_PROXY_COMMAND": true, "SSH_ASKPASS": true, "SUDO_ASKPASS": true, "PAGER": true,
	"MANPAGER": true, "SYSTEMD_PAGER": true, "EDITOR": true, "VISUAL": true,
	"PROMPT_COMMAND": true, "LESSOPEN": true, "LESSCLOSE": true, "RSYNC_RSH": true,
	"RSYNC_CONNECT_PROG": true, "BROWSER": true,
}

// assessCommand returns the IDs of the rules the bash command matches, in
// the order they were found.
func assessCommand(command string, custom []customRule) []string {
	a := &analysis{
		custom: custom, seen: map[string]bool{}, set: map[string]bool{},
		aliases: map[string]string{}, expanding: map[string]bool{}, followed: map[followKey]bool{},
	}
	a.matchCustom(command)
	a.script(command, 0)
	return a.found
}

// add records that the command matches rule.
func (a *analysis) add(rule string) {
	if !a.seen[rule] {
		a.seen[rule] = true
		a.found = append(a.found, rule)
	}
}

// matchCustom checks the operator's expressions against text: the raw
// command, every script inside it, and every simple command as its words
// are after quote removal.
func (a *analysis) matchCustom(text string) {
	for _, c := range a.custom {
		if c.re.MatchString(text) {
			a.add(c.rule.ID)
		}
	}
}

// script parses src and looks at every command in it.
func (a *analysis) script(src string, depth int) {
	if depth > maxDepth {
		a.add(RuleUnparsable)
		return
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		a.add(RuleUnparsable)
		return
	}
	a.collectSettings(f)
	w := &walker{a: a, src: src, depth: depth, upstream: map[*syntax.Stmt]string{}}
	syntax.Walk(f, w.visit)
}

// collectSettings records the variables the script sets, and whether it
// downloads, before its commands are looked at (a variable may be set
// after the function that uses it, or in a loop).
func (a *analysis) collectSettings(f *syntax.File) {
	cfg := a.expandConfig()
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.Assign:
			if x.Name != nil {
				a.set[x.Name.Value] = true
			}
			if x.Name != nil && x.Name.Value == "BASH_ALIASES" && x.Index != nil && x.Value != nil {
				// BASH_ALIASES[name]=value defines an alias too.
				if name, err := expand.Literal(cfg, indexWord(x.Index)); err == nil {
					a.aliases[name] = wordText(cfg, x.Value)
				}
			}
		case *syntax.ForClause:
			if it, ok := x.Loop.(*syntax.WordIter); ok {
				a.set[it.Name.Value] = true
			}
		case *syntax.ArithmExp, *syntax.ArithmCmd, *syntax.CStyleLoop, *syntax.LetClause:
			// Arithmetic assigns with =, +=, ++ and the like: every name in
			// it counts as set.
			syntax.Walk(x, func(m syntax.Node) bool {
				if l, ok := m.(*syntax.Lit); ok && namePrefix.MatchString(l.Value) {
					a.set[namePrefix.FindString(l.Value)] = true
				}
				return true
			})
		case *syntax.CallExpr:
			args := literalArgs(cfg, x.Args)
			for _, arg := range args {
				if downloaders[path.Base(arg)] {
					a.downloads = true
				}
			}
			if len(args) == 0 {
				break
			}
			switch name := args[0]; {
			case name == "alias":
				for _, arg := range args[1:] {
					if n, v, ok := strings.Cut(arg, "="); ok {
						a.aliases[n] = v
					}
				}
			case anyVariableBuiltins[name]:
				a.all = true
			case settingBuiltins[name]:
				for _, arg := range args[1:] {
					if n := namePrefix.FindString(arg); n != "" {
						a.set[n] = true
					}
				}
			}
		}
		return true
	})
}

// indexWord returns an array index as a word, when it is one.
func indexWord(e syntax.ArithmExpr) *syntax.Word {
	if w, ok := e.(*syntax.Word); ok {
		return w
	}
	return &syntax.Word{}
}

// wordText expands w to one string, the computed mark standing for what it
// cannot know.
func wordText(cfg *expand.Config, w *syntax.Word) string {
	fields, err := expand.Fields(cfg, w)
	if err != nil {
		return computed
	}
	return strings.Join(fields, " ")
}

// literalArgs expands words, for the first pass; a word that cannot be
// expanded is left out.
func literalArgs(cfg *expand.Config, words []*syntax.Word) []string {
	var out []string
	for _, w := range words {
		if fields, err := expand.Fields(cfg, w); err == nil {
			out = append(out, fields...)
		}
	}
	return out
}

// isComputed reports whether the variable name holds a value the command
// may have chosen.
func (a *analysis) isComputed(name string) bool {
	if a.all || a.set[name] || alwaysComputed[name] {
		return true
	}
	return name != "" && name[0] >= '1' && name[0] <= '9'
}

// environ is the environment the words are expanded in: every variable is
// set, to the computed or the environment mark; IFS keeps its default.
type environ struct{ a *analysis }

// Get returns the mark that stands for name's value.
func (e environ) Get(name string) expand.Variable {
	v := expand.Variable{Set: true, Kind: expand.String, Str: environment}
	switch {
	case name == "IFS":
		v.Str = " \t\n"
	case e.a.isComputed(name) || strings.HasPrefix(name, "HOME "):
		v.Str = computed
	}
	return v
}

// Each lists no variables: none is exported to anything here.
func (environ) Each(func(string, expand.Variable) bool) {}

// expandConfig expands words without running anything: command and process
// substitutions become the computed mark, and globbing is off.
func (a *analysis) expandConfig() *expand.Config {
	return &expand.Config{
		Env: environ{a},
		CmdSubst: func(w io.Writer, _ *syntax.CmdSubst) error {
			_, err := io.WriteString(w, computed)
			return err
		},
		ProcSubst: func(*syntax.ProcSubst) (string, error) { return computed, nil },
	}
}

// fields expands w into the arguments the shell would pass. A word whose
// value depends on something computed keeps the computed mark even when
// the expansion dropped it (${x:1} of the mark is empty): in front when the
// word does not start with literal text, so it may still be a flag.
func (a *analysis) fields(cfg *expand.Config, w *syntax.Word) []string {
	out, err := expand.Fields(cfg, w)
	if err != nil {
		return []string{computed}
	}
	if !a.wordComputed(w) {
		return out
	}
	marked := false
	for _, f := range out {
		marked = marked || strings.Contains(f, computed)
	}
	if marked {
		return out
	}
	if len(out) == 0 {
		return []string{computed}
	}
	if startsLiteral(w) {
		out[len(out)-1] += computed
	} else {
		out[0] = computed + out[0]
	}
	return out
}

// wordComputed reports whether w holds a command or process substitution,
// an indirect expansion or a computed variable.
func (a *analysis) wordComputed(w *syntax.Word) bool {
	found := false
	syntax.Walk(w, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			found = true
		case *syntax.ParamExp:
			if x.Excl || x.Param == nil || a.isComputed(x.Param.Value) {
				found = true
			}
		case *syntax.ArithmExp:
			syntax.Walk(x, func(m syntax.Node) bool {
				if l, ok := m.(*syntax.Lit); ok && a.isComputed(namePrefix.FindString(l.Value)) {
					found = true
				}
				return true
			})
		}
		return !found
	})
	return found
}

// startsLiteral reports whether w begins with literal text.
func startsLiteral(w *syntax.Word) bool {
	if len(w.Parts) == 0 {
		return false
	}
	switch p := w.Parts[0].(type) {
	case *syntax.Lit:
		return p.Value != ""
	case *syntax.SglQuoted:
		return p.Value != ""
	case *syntax.DblQuoted:
		if len(p.Parts) > 0 {
			l, ok := p.Parts[0].(*syntax.Lit)
			return ok && l.Value != ""
		}
	}
	return false
}

// walker visits one parsed script.
type walker struct {
	a     *analysis
	src   string
	depth int
	// upstream holds, for a statement that reads a pipe, the source text
	// of the stages before it.
	upstream map[*syntax.Stmt]string
}

// visit looks at one statement: a pipeline hands its stdin on to its
// first stage and the text of the stages before it to each later one,
// however the parser nested it.
func (w *walker) visit(n syntax.Node) bool {
	if as, ok := n.(*syntax.Assign); ok {
		w.assign(as)
		return true
	}
	st, ok := n.(*syntax.Stmt)
	if !ok {
		return true
	}
	if b, ok := st.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) {
		before, piped := w.upstream[st]
		if piped {
			w.upstream[b.X] = before
		}
		w.upstream[b.Y] = before + w.text(b.X)
	}
	w.statement(st)
	return true
}

// assign looks at an assignment, alone, before a command or in export,
// declare and local.
func (w *walker) assign(as *syntax.Assign) {
	if as.Name == nil || as.Value == nil && as.Array == nil {
		return
	}
	cfg := w.a.expandConfig()
	var value string
	switch {
	case as.Value != nil:
		value = wordText(cfg, as.Value)
	default:
		var parts []string
		for _, el := range as.Array.Elems {
			if el.Value != nil {
				parts = append(parts, wordText(cfg, el.Value))
			}
		}
		value = strings.Join(parts, "; ")
	}
	w.a.assigned(as.Name.Value, value, w.depth)
}

// assigned looks at the value given to the variable name: a command some
// program runs (GIT_PAGER, PROMPT_COMMAND) is parsed as a script, and git's
// configuration given in the environment as keys and values is looked at
// as git -c is.
func (a *analysis) assigned(name, value string, depth int) {
	switch {
	case commandVariables[name]:
		if isComputedText(value) {
			a.add(RuleComputedCommand)
			return
		}
		a.matchCustom(value)
		a.script(value, depth+1)
	case name == "GIT_CONFIG_PARAMETERS":
		a.add(RuleComputedCommand)
	case strings.HasPrefix(name, "GIT_CONFIG_KEY_"):
		if gitRunsValue(value) != gitPlain {
			a.add(RuleComputedCommand) // its value is GIT_CONFIG_VALUE_<n>'s
		}
	}
}

// text returns the source of node.
func (w *walker) text(n syntax.Node) string {
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if start < 0 || end > len(w.src) || start > end {
		return ""
	}
	return w.src[start:end] + "\n"
}

// statement looks at a statement's redirections and its simple command.
func (w *walker) statement(st *syntax.Stmt) {
	a := w.a
	cfg := a.expandConfig()
	for _, r := range st.Redirs {
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll, syntax.RdrInOut:
			if r.Word != nil {
				for _, f := range a.fields(cfg, r.Word) {
					if isDevice(f) {
						a.add(RuleDeviceWrite)
					}
				}
			}
		}
	}
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok {
		return
	}
	var argv []string
	for _, word := range call.Args {
		argv = append(argv, a.fields(cfg, word)...)
	}
	if len(call.Args) > 0 {
		// The parser takes name=value words after the command's name as
		// assignments in one place (coproc dd of=x); bash takes them as
		// arguments, and so are they here.
		for _, as := range call.Assigns {
			if as.Pos().After(call.Args[0].Pos()) && as.Name != nil && as.Value != nil {
				argv = append(argv, as.Name.Value+"="+wordText(cfg, as.Value))
			}
		}
	}
	c := &command{w: w, st: st, cfg: cfg}
	c.run(argv, 0)
}

// input is what a command reads on its standard input, as far as the
// statement says: a here-document or here-string, a file, or a pipe (or
// whatever the tool gives it).
type input struct {
	doc    string
	hasDoc bool
	file   bool
	piped  bool
	before string
}

// stdin tells what the statement's command reads.
func (c *command) stdin() input {
	var in input
	for _, r := range c.st.Redirs {
		if r.N != nil && r.N.Value != "0" {
			continue
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			if r.Hdoc != nil {
				doc, err := expand.Document(c.cfg, r.Hdoc)
				if err != nil || c.w.a.wordComputed(r.Hdoc) {
					doc += computed
				}
				in.doc, in.hasDoc = doc, true
			}
		case syntax.WordHdoc:
			doc := strings.Join(c.w.a.fields(c.cfg, r.Word), " ")
			in.doc, in.hasDoc = doc, true
		case syntax.RdrIn:
			in.file = true
		}
	}
	if before, ok := c.w.upstream[c.st]; ok {
		in.piped, in.before = true, before
	}
	return in
}

// isDevice reports whether a redirection target is a device under /dev
// that writing to changes something (not /dev/null, a terminal, a file
// descriptor, shared memory or bash's network paths).
func isDevice(target string) bool {
	if !strings.HasPrefix(target, "/dev/") {
		return false
	}
	p := path.Clean(target)
	if !strings.HasPrefix(p, "/dev/") {
		return false
	}
	switch p {
	case "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
		"/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty":
		return false
	}
	for _, dir := range []string{"/dev/fd/", "/dev/pts/", "/dev/shm/", "/dev/tcp/", "/dev/udp/", "/dev/mqueue/"} {
		if strings.HasPrefix(p, dir) {
			return false
		}
	}
	return true
}

// isComputedText reports whether s holds a computed value.
func isComputedText(s string) bool { return strings.Contains(s, computed) }

// leadsComputed reports whether s starts with a computed value: it may be
// a flag.
func leadsComputed(s string) bool { return strings.HasPrefix(s, computed) }
