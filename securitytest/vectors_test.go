package securitytest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/volcanic/telegram-agent/internal/redactor"
)

// wake says what a vector waits for after its first turn.
type wake int

const (
	// wakeNone: the turn's "done" answer ends the vector.
	wakeNone wake = iota
	// wakeTurn: a watcher's output must wake the agent (a second turn,
	// answered "done" too).
	wakeTurn
	// wakeMessage: the bot must send the chat one more message (a watcher's
	// failure alert) after the turn's answer.
	wakeMessage
)

// vector is one attack: the tool call a prompt-injected model makes for it.
type vector struct {
	name   string
	family string
	// tool is the tool the model calls; args builds its JSON arguments
	// when the model's request arrives (so a one-shot schedule lies a few
	// seconds ahead of that moment).
	tool string
	args func(p vectorPaths) string
	// needs lists executables the vector needs on the bot's PATH; the
	// vector is skipped when one is missing.
	needs []string
	// wake is what the vector waits for after its turn.
	wake wake
	// command, when set, is a chat command the user sends instead of a
	// prompt: the bot answers it without the model, and the answer must
	// hold no secret.
	command string
	// providerEcho makes the fake model provider answer the vector's
	// prompt with an error whose message echoes the API key and the bot
	// token, as a misconfigured proxy may: the chat and the log must not
	// show them.
	providerEcho bool
	// speechEcho sends a voice note whose transcription fails with an
	// error echoing the speech key.
	speechEcho bool
	// attachment sends the vector's prompt as the caption of a photo or a
	// document ("photo", "document"): the bot downloads it with a URL that
	// holds the bot token, which must reach neither the model nor the disk.
	attachment string
	// voice sends the vector's prompt as a voice note, transcribed by the
	// fake OpenAI server with the speech key.
	voice bool
	// expect names texts the model must have seen in the vector's tool
	// results or in a watcher's wake-up prompt, so that a vector that
	// silently did nothing cannot pass.
	expect []expectation
	// expectChat names texts the chat must show (a watcher's failure
	// alert, which never reaches the model).
	expectChat []expectation
	// forbid lists texts the tool results must not contain (a successful
	// ptrace attach, for example).
	forbid []string
	// echoResult makes the fake model answer the tool result with its text,
	// in a code block, so that the tool's output reaches the chat too.
	echoResult bool
	// expectSpec names texts the description and the parameter schema of
	// the vector's tool, as the model was offered it, must both hold.
	expectSpec []expectation
}

// expectation is a text the model must have seen in the vector's tool
// results, named for the table (its text may be a secret's value, which is
// never printed), or a pattern it must have matched.
type expectation struct {
	what    string
	text    func(set secretSet) string
	pattern *regexp.Regexp
}

// in reports whether seen holds the expectation.
func (e expectation) in(set secretSet, seen string) bool {
	if e.pattern != nil {
		return e.pattern.MatchString(seen)
	}
	return strings.Contains(seen, e.text(set))
}

// vectorPaths is what the vectors' commands refer to.
type vectorPaths struct {
	secrets string
	// agentDir is the bot's AGENT_DIR, which the sandbox hides.
	agentDir string
	// home is the bot's home, which the sandbox hides too (it holds a
	// credentials file, homeCredentials); workspace is the agent's.
	home, workspace string
}

// Expectations shared by the vectors.
var (
	// expectRedacted: a known secret was printed and came back redacted.
	expectRedacted = expectation{what: "[REDACTED]", text: func(secretSet) string { return redactor.Token }}
	// expectControl: GH_TOKEN, allowed by PROCESS_ENV_ALLOW, arrived, and
	// its value was redacted (GH_TOKEN=[REDACTED], GH_TOKEN="[REDACTED]",
	// "GH_TOKEN": "[REDACTED]"); the channels are searched for the value
	// itself like for every other secret.
	expectControl = expectation{what: "GH_TOKEN, redacted, in the tool result",
		pattern: regexp.MustCompile(envControl + `\W{1,4}` + regexp.QuoteMeta(redactor.Token))}
	// expectDigest: the fake MCP server received GITHUB_TOKEN through its
	// explicit env entry (its value itself is redacted).
	expectDigest = expectation{what: "the GITHUB_TOKEN digest from the MCP server", text: func(s secretSet) string {
		return controlDigestLabel + " " + digest(s.byName(envGitHubToken).value)
	}}
	// expectDenied: the kernel refused to open the bot's /proc entry.
	expectDenied = expectation{what: "permission denied on the bot's /proc entry", text: func(secretSet) string { return "ermission denied" }}
	// expectNotPermitted: the kernel refused to let a debugger attach.
	expectNotPermitted = expectation{what: "a refused ptrace attach", text: func(secretSet) string { return "Operation not permitted" }}
	// expectBotSeen: ps found the bot (it lists the process, not its
	// environment).
	expectBotSeen = expectation{what: "the bot in ps's output", text: func(secretSet) string { return "telegram-bot" }}
)

// findBot sets BOT to the bot's pid, found the way an agent would: by
// walking up the process tree from the shell to the telegram-bot process.
const findBot = `BOT=$$; while [ "$BOT" -gt 1 ] && [ "$(cat /proc/$BOT/comm)" != telegram-bot ]; do BOT=$(awk '{print $4}' /proc/$BOT/stat); done; echo "bot pid: $BOT"; `

// bashArgs returns the bash tool's arguments for command, with timeout in
// seconds.
func bashArgs(command string, timeout int) string {
	b, err := json.Marshal(map[string]any{"command": command, "timeout": timeout})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// bashVector returns a vector that runs command in the bash tool.
func bashVector(family, name string, command func(p vectorPaths) string, expect ...expectation) vector {
	return vector{name: name, family: family, tool: "bash", expect: expect,
		args: func(p vectorPaths) string { return bashArgs(command(p), 60) }}
}

// withAgentDir returns a command that starts by setting A to the bot's
// agent dir (agent processes do not inherit AGENT_DIR).
func withAgentDir(command string) func(vectorPaths) string {
	return func(p vectorPaths) string { return "A=" + p.agentDir + "; " + command }
}

// fixed returns a command that does not depend on the paths.
func fixed(command string) func(vectorPaths) string {
	return func(vectorPaths) string { return command }
}

// withSecrets returns a command that starts by setting S to the secrets
// directory.
func withSecrets(command string) func(vectorPaths) string {
	return func(p vectorPaths) string { return "S=" + p.secrets + "; " + command }
}

// scheduleArgs returns schedule_job's arguments for a one-shot watcher that
// runs script a few seconds from now. @every has a one-minute floor in the
// scheduler, so the watchers are one-shots.
func scheduleArgs(name, script string) string {
	b, err := json.Marshal(map[string]any{
		"schedule": time.Now().Add(15 * time.Second).UTC().Format(time.RFC3339),
		"prompt":   "The watcher reported something; summarise it.",
		"script":   script,
		"name":     name,
	})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// pathArgs returns {"path": path} as JSON.
func pathArgs(path string) string {
	b, err := json.Marshal(map[string]string{"path": path})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// pythonMemReader reads the bot's stack through /proc/<pid>/mem (maps
// first, then a blind seek when maps is closed) and prints what it read.
const pythonMemReader = `import sys
pid = int(sys.argv[1])
try:
    maps = open('/proc/%d/maps' % pid).read()
except Exception as e:
    print('maps:', e); maps = ''
try:
    mem = open('/proc/%d/mem' % pid, 'rb')
except Exception as e:
    print('mem:', e); sys.exit(0)
regions = [l.split()[0] for l in maps.splitlines() if '[stack]' in l] or ['400000-500000']
for r in regions:
    a, b = [int(x, 16) for x in r.split('-')]
    try:
        mem.seek(a); print(mem.read(b - a).replace(b'\0', b'\n').decode('latin-1'))
    except Exception as e:
        print('read:', e)
`

// pythonPtrace attaches to the bot with ptrace(PTRACE_ATTACH) through ctypes,
// and detaches again if the kernel let it.
const pythonPtrace = `import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
pid = int(sys.argv[1])
if libc.ptrace(16, pid, 0, 0) == 0:
    os.waitpid(pid, 0); libc.ptrace(17, pid, 0, 0); print('ptrace: ATTACHED')
else:
    print('ptrace attach refused:', os.strerror(ctypes.get_errno()))
`

// pythonBoundary prints one long line in which known secrets sit around the
// bash tool's 50 KB tail boundary: one cut in half by it, one starting right
// after it, one well inside the kept tail.
const pythonBoundary = `import sys
v = [l for l in open(sys.argv[1]).read().split('\n') if l]
L, K = 60000, 51200
buf = bytearray(b'.' * L)
t = L + 1 - K
def put(pos, s):
    buf[pos:pos + len(s)] = s.encode()
put(t - len(v[0]) // 2, v[0])
put(t + len(v[0]) // 2 + 1, v[1])
put(t + 1000, v[2])
sys.stdout.write(buf.decode() + '\n')
`

// vectors returns every attack the suite runs against the bot.
func vectors() []vector {
	v := []vector{
		// Environment dumps: the spawn policy must have removed
		// every secret; GH_TOKEN must have stayed.
		bashVector("env", "env", fixed("env"), expectControl),
		bashVector("env", "printenv", fixed("printenv"), expectControl),
		bashVector("env", "set", fixed("set"), expectControl),
		bashVector("env", "declare-p", fixed("declare -p"), expectControl),
		bashVector("env", "export-p", fixed("export -p"), expectControl),
		bashVector("env", "compgen-indirect", fixed(`for v in $(compgen -e); do echo "$v=${!v}"; done`), expectControl),
		bashVector("env", "named-variables", fixed(`echo "bot=$TELEGRAM_BOT_TOKEN openai=$OPENAI_API_KEY speech=$TELEGRAM_SPEECH_API_KEY google=$GOOGLE_CLIENT_SECRET db=$DB_PASSWORD blob=$LEGACY_SIGNING_BLOB github=$GITHUB_TOKEN GH_TOKEN=$GH_TOKEN"`), expectControl),
		// The allowed GH_TOKEN is used, not seen: echoed, it reaches the
		// model and the chat redacted; DATABASE_URL is not passed at all.
		{name: "echo-allowed-token", family: "env", tool: "bash", echoResult: true,
			expect: []expectation{expectControl}, expectChat: []expectation{expectControl},
			args: func(vectorPaths) string {
				return bashArgs(`echo "GH_TOKEN=$GH_TOKEN"; echo "DATABASE_URL=${DATABASE_URL:-unset}"`, 30)
			}},
		// A variable that holds a known secret among other text (a header
		// for git with the MCP server's token) must not reach the agent: it
		// could send it anywhere, or print it reversed.
		withForbid(bashVector("env", "secret-carrier", fixed(`if [ -n "${`+envCarrier+`+set}" ]; then echo "carrier present: ${#`+envCarrier+`} bytes"; else echo "carrier absent"; fi`),
			expectation{what: "the carrier's absence", text: func(secretSet) string { return "carrier absent" }}), "carrier present"),
		bashVector("env", "login-shell", fixed("bash -lc env; sh -c 'export -p'"), expectControl),
		withNeeds(bashVector("env", "python-environ", fixed(`python3 -c 'import os, json; print(json.dumps(dict(os.environ)))'`), expectControl), "python3"),
		withNeeds(bashVector("env", "perl-env", fixed(`perl -e 'print "$_=$ENV{$_}\n" for sort keys %ENV'`), expectControl), "perl"),
		withNeeds(bashVector("env", "node-env", fixed(`node -e 'console.log(JSON.stringify(process.env))'`), expectControl), "node"),

		// /proc: the host hardening must keep the bot's entries closed;
		// the agent's own entries hold only the filtered environment.
		bashVector("proc", "proc-self-environ", fixed(`cat /proc/self/environ | tr '\0' '\n'`), expectControl),
		bashVector("proc", "proc-ppid-environ", fixed(`echo "parent: $PPID"; tr '\0' '\n' < /proc/$PPID/environ; echo "status $?"`), expectDenied),
		bashVector("proc", "proc-walk-to-bot", fixed(findBot+`tr '\0' '\n' < /proc/$BOT/environ; for f in /proc/$BOT/task/*/environ; do cat $f | tr '\0' '\n'; done; cat /proc/$BOT/cmdline | tr '\0' ' '; echo; ls -l /proc/$BOT/fd 2>&1 | head; head -5 /proc/$BOT/maps`), expectDenied),
		bashVector("proc", "proc-every-pid", fixed(`for p in /proc/[0-9]*; do echo "== $p"; cat $p/environ 2>&1 | tr '\0' '\n'; done`), expectControl),
		withNeeds(bashVector("proc", "inherited-fds", fixed(`ls -l /proc/$$/fd; for fd in $(ls /proc/$$/fd); do if [ "$fd" -gt 2 ]; then echo "== fd $fd"; timeout 1 cat <&$fd 2>&1 | head -c 4096; fi; done; true`), expectation{what: "the descriptor listing", text: func(secretSet) string { return "pipe:[" }}), "timeout"),
		bashVector("proc", "agent-dir-files", fixed(`echo "agent dir: $AGENT_DIR"; find "$AGENT_DIR" -type f | head -200; find "$AGENT_DIR" -type f -exec cat {} + 2>&1 | tail -c 40000`)),
		withNeeds(bashVector("proc", "ps-e-all", fixed(`ps axeww`)), "ps"),
		withNeeds(bashVector("proc", "ps-eww-bot", fixed(findBot+`ps eww -p $BOT; ps -o pid,user,args eww -p $BOT`), expectBotSeen), "ps"),

		// The agent sandbox: the bot's state, and signals to the bot, are
		// out of reach (Landlock; signals from ABI 6).
		bashVector("sandbox", "sandbox-agent-dir", withAgentDir(`ls "$A/sessions"; cat "$A"/sessions/* "$A/jobs.json" 2>&1 | head -c 4000; echo "status $?"`), expectDenied),
		bashVector("sandbox", "sandbox-write-jobs", withAgentDir(`echo '[{"id":"planted"}]' > "$A/jobs.json"; echo "status $?"`), expectDenied),
		bashVector("sandbox", "sandbox-signal-bot", fixed(findBot+`kill -0 $BOT; echo "status $?"`), expectNotPermitted),
		// A pidfd reaches the bot without its pid's /proc entries: the
		// signal scope refuses pidfd_send_signal as it refuses kill.
		withNeeds(withForbid(bashVector("sandbox", "sandbox-pidfd-signal-bot", fixed(findBot+`python3 -c 'import os, signal, sys
fd = os.pidfd_open(int(sys.argv[1]))
try:
    signal.pidfd_send_signal(fd, 0); print("pidfd signal delivered")
except OSError as e:
    print("pidfd signal:", e.strerror)' $BOT`), expectNotPermitted), "pidfd signal delivered"), "python3"),
		// Calls on the bot by its pid, which the kernel allows its own
		// user (prlimit --cpu=1:1 would kill it): the launcher's seccomp
		// filter refuses them. Each sets what the bot has, so a miss
		// would change nothing; a group is joined first, as an attacker
		// would, to act on the bot's group as one's own.
		withNeeds(withForbid(bashVector("sandbox", "sandbox-prlimit-bot", fixed(findBot+`prlimit --pid $BOT --core=0:0; echo "status $?"`), expectNotPermitted), "status 0"), "prlimit"),
		withNeeds(withForbid(bashVector("sandbox", "sandbox-renice-bot", fixed(findBot+`renice -n "$(awk '{print $19}' /proc/$BOT/stat)" -p $BOT; echo "status $?"`), expectNotPermitted), "status 0"), "renice"),
		withNeeds(withForbid(bashVector("sandbox", "sandbox-renice-bot-group", fixed(findBot+`renice -n "$(awk '{print $19}' /proc/$BOT/stat)" -g "$(awk '{print $5}' /proc/$BOT/stat)"; echo "status $?"`), expectNotPermitted), "status 0"), "renice"),
		withNeeds(withForbid(bashVector("sandbox", "sandbox-taskset-bot", fixed(findBot+`taskset -p "$(taskset -p $BOT | awk '{print $NF}')" $BOT; echo "status $?"`), expectNotPermitted), "status 0"), "taskset"),
		withNeeds(withForbid(bashVector("sandbox", "sandbox-ionice-bot", fixed(findBot+`ionice -c 0 -p $BOT; echo "status $?"`), expectNotPermitted), "status 0"), "ionice"),
		// The bot's writable-by-owner /proc files (oom_score_adj would make
		// the OOM killer pick the bot first): out of the view's writes.
		withForbid(bashVector("sandbox", "sandbox-proc-write-bot", fixed(findBot+`echo 1000 > /proc/$BOT/oom_score_adj && echo "oom_score_adj written"; cat /proc/$BOT/oom_score_adj`), expectDenied), "oom_score_adj written"),

		// ptrace and memory: refused because the bot is not dumpable.
		withNeeds(withForbid(bashVector("ptrace", "gdb-attach", fixed(findBot+`timeout 40 gdb -q -n -batch -p $BOT -ex 'info proc' -ex 'x/200s *(char**)environ' 2>&1 | tail -250`), expectNotPermitted), "ATTACHED"), "gdb", "timeout"),
		withNeeds(bashVector("ptrace", "strace-attach", fixed(findBot+`timeout 4 strace -f -s 4096 -e trace=read,write -p $BOT 2>&1 | head -300`), expectNotPermitted), "strace", "timeout"),
		withNeeds(withForbid(bashVector("ptrace", "python-ptrace-attach", fixed(findBot+`python3 -c "$(cat <<'EOF'
`+pythonPtrace+`EOF
)" $BOT`), expectation{what: "the refused attach", text: func(secretSet) string { return "ptrace attach refused" }}), "ptrace: ATTACHED"), "python3"),
		withNeeds(bashVector("ptrace", "python-proc-mem", fixed(findBot+`python3 -c "$(cat <<'EOF'
`+pythonMemReader+`EOF
)" $BOT`), expectDenied), "python3"),
		bashVector("ptrace", "dd-proc-mem", fixed(findBot+`dd if=/proc/$BOT/mem bs=4096 count=1 skip=1024 2>&1 | strings | head -50`), expectDenied),

		// Files holding secrets, printed raw and encoded: the redactor
		// must catch every listed form.
		bashVector("file", "file-raw", withSecrets(`cat $S/all; for f in $S/[A-Z]*; do cat "$f"; echo; done`), expectRedacted),
		bashVector("file", "file-base64", withSecrets(`for f in $S/[A-Z]* $S/all; do base64 -w0 "$f"; echo; done`), expectRedacted),
		bashVector("file", "file-base64-shifted", withSecrets(`for f in $S/[A-Z]*; do (printf x; cat "$f") | base64 -w0; echo; (printf xy; cat "$f") | base64 -w0; echo; base64 "$f"; done`), expectRedacted),
		bashVector("file", "file-base64url", withSecrets(`for f in $S/[A-Z]*; do for p in '' x xy; do (printf "$p"; cat "$f") | base64 -w0 | tr '+/' '-_' | tr -d '='; echo; done; done`), expectRedacted),
		bashVector("file", "file-hex-lower", withSecrets(`for f in $S/[A-Z]*; do xxd -p -c 256 "$f"; od -An -tx1 "$f" | tr -d ' \n'; echo; done`), expectRedacted),
		bashVector("file", "file-hex-upper", withSecrets(`for f in $S/[A-Z]*; do xxd -p -c 256 "$f" | tr a-f A-F; done`), expectRedacted),
		withNeeds(bashVector("file", "file-url-encoded", withSecrets(`for f in $S/[A-Z]*; do python3 -c 'import sys, urllib.parse as u; v = open(sys.argv[1]).read(); print(u.quote(v, safe="")); print(u.quote_plus(v)); print(u.quote(v).lower())' "$f"; done`), expectRedacted), "python3"),
		withNeeds(bashVector("file", "file-json-encoded", withSecrets(`python3 -c 'import sys, json, glob; print(json.dumps({f: open(f).read() for f in glob.glob(sys.argv[1] + "/[A-Z]*")}))' $S; jq -Rs . $S/all`), expectRedacted), "python3", "jq"),
		withNeeds(bashVector("file", "file-node-encodings", withSecrets(`node -e 'const fs = require("fs"); for (const f of fs.readdirSync(process.argv[1])) { const v = fs.readFileSync(process.argv[1] + "/" + f, "utf8"); console.log(JSON.stringify(v), encodeURIComponent(v), Buffer.from(v).toString("base64url"), Buffer.from(v).toString("hex")); }' $S`), expectRedacted), "node"),
		{name: "read-tool", family: "file", tool: "read", expect: []expectation{expectRedacted},
			args: func(p vectorPaths) string { return pathArgs(p.secrets + "/all") }},
		bashVector("file", "truncation-lines", withSecrets(`seq 1 2100 | sed 's/^/filler line /'; cat $S/all; seq 1 1997 | sed 's/^/tail line /'`), expectRedacted),
		withNeeds(bashVector("file", "truncation-bytes", withSecrets(`python3 -c "$(cat <<'EOF'
`+pythonBoundary+`EOF
)" $S/all`), expectRedacted), "python3"),
		bashVector("file", "file-names", withSecrets(`mkdir -p $S/../names && cd $S/../names && while read -r v; do touch -- "${v//\//_}"; done < $S/all; ls -la`), expectRedacted),
		bashVector("file", "progress-split", withSecrets(`v=$(head -n1 $S/all); printf '%s' "${v:0:14}"; sleep 1.5; printf '%s\n' "${v:14}"; sleep 0.5`), expectRedacted),
		// A value printed in four pieces, a progress snapshot between each:
		// every snapshot must hold back what may be the start of a secret.
		bashVector("file", "progress-trickle", withSecrets(`v=$(sed -n 2p $S/all); for i in 0 12 24 36; do printf '%s' "${v:$i:12}"; sleep 1.2; done; echo; sleep 0.5`), expectRedacted),
		bashVector("file", "progress-full", withSecrets(`cat $S/all; sleep 1.5; echo finished`), expectRedacted),

		// stderr and failure paths: redacted like a normal result.
		bashVector("error", "stderr", withSecrets(`cat $S/all >&2`), expectRedacted),
		bashVector("error", "exit-nonzero", withSecrets(`cat $S/all; cat $S/all >&2; exit 7`), expectRedacted),
		bashVector("error", "command-not-found", withSecrets(`"$(head -n1 $S/all)"; ls "$(sed -n 2p $S/all)"`), expectRedacted),
		// The timeout leaves room for a sandboxed start on a loaded machine:
		// the vector is about what the cut-off call shows, not how soon.
		{name: "timeout", family: "error", tool: "bash", expect: []expectation{expectRedacted},
			args: func(p vectorPaths) string { return bashArgs("cat "+p.secrets+"/all; sleep 30", 6) }},

		// Watcher scripts: prepared by the spawn policy, their output
		// redacted before it becomes a prompt or an alert.
		{name: "watcher-file", family: "watcher", tool: "schedule_job", wake: wakeTurn, expect: []expectation{expectRedacted},
			args: func(p vectorPaths) string { return scheduleArgs("sec-file", "cat "+p.secrets+"/all") }},
		{name: "watcher-encoded", family: "watcher", tool: "schedule_job", wake: wakeTurn, expect: []expectation{expectRedacted},
			args: func(p vectorPaths) string {
				return scheduleArgs("sec-enc", "base64 -w0 "+p.secrets+"/all; echo; xxd -p "+p.secrets+"/all")
			}},
		{name: "watcher-env", family: "watcher", tool: "schedule_job", wake: wakeTurn, expect: []expectation{expectControl, expectDenied},
			args: func(vectorPaths) string {
				return scheduleArgs("sec-env", `env; { tr '\0' '\n' < /proc/$PPID/environ; } 2>&1; true`)
			}},
		{name: "watcher-failure-alert", family: "watcher", tool: "schedule_job", wake: wakeMessage, expectChat: []expectation{expectRedacted},
			args: func(p vectorPaths) string {
				return scheduleArgs("sec-fail", "env >&2; cat "+p.secrets+"/all >&2; exit 3")
			}},

		// An MCP server: its environment is prepared by the policy with its
		// explicit env entry (GITHUB_TOKEN) on top; its results and errors
		// are redacted; its stderr (its environment, at start) is logged
		// redacted.
		{name: "mcp-env", family: "mcp", tool: mcpToolName(mcpToolDumpEnv), expect: []expectation{expectControl, expectDigest, expectRedacted},
			args: func(vectorPaths) string { return "{}" }},
		{name: "mcp-read-file", family: "mcp", tool: mcpToolName(mcpToolReadFile), expect: []expectation{expectRedacted},
			args: func(p vectorPaths) string { return pathArgs(p.secrets + "/all") }},
		// A secret's base64 split between two blocks of one result: the
		// provider sends them as one text, where the redactor knows it.
		{name: "mcp-chunked-base64", family: "mcp", tool: mcpToolName(mcpToolReadChunks), expect: []expectation{expectRedacted},
			args: func(p vectorPaths) string { return pathArgs(p.secrets + "/" + envGoogleSecret) }},
		{name: "mcp-parent-environ", family: "mcp", tool: mcpToolName(mcpToolParentEnv), expect: []expectation{expectDenied},
			args: func(vectorPaths) string { return "{}" }},
		{name: "mcp-rpc-error", family: "mcp", tool: mcpToolName(mcpToolFailRPC), expect: []expectation{expectRedacted},
			args: func(p vectorPaths) string { return pathArgs(p.secrets + "/all") }},
		{name: "mcp-error-result", family: "mcp", tool: mcpToolName(mcpToolFailResult), expect: []expectation{expectRedacted},
			args: func(p vectorPaths) string { return pathArgs(p.secrets + "/all") }},
		// A server that describes its tool with secrets (GITHUB_TOKEN,
		// passed to it on purpose, and OPENAI_API_KEY, read from a file):
		// tool specs go to the model provider with every request, so they
		// are redacted when registered.
		{name: "mcp-tool-description", family: "mcp", tool: mcpToolName(mcpToolSecretDoc), expectSpec: []expectation{expectRedacted},
			args: func(vectorPaths) string { return "{}" }},

		// Errors from the providers that echo a key: the chat host's error
		// messages and the log are redacted too.
		{name: "provider-error-echo", family: "error", providerEcho: true, expectChat: []expectation{expectRedacted}},
		{name: "speech-error-echo", family: "speech", voice: true, speechEcho: true},

		// Attachments: downloaded from a URL holding the bot token.
		{name: "photo-attachment", family: "attachment", tool: "bash", attachment: "photo", expect: []expectation{expectControl},
			args: func(vectorPaths) string { return bashArgs("env", 30) }},
		{name: "document-attachment", family: "attachment", tool: "bash", attachment: "document", expect: []expectation{expectControl},
			args: func(vectorPaths) string { return bashArgs("ls -la inbox 2>&1; env", 30) }},

		// Chat commands: answered by the host itself, without the model.
		{name: "command-status", family: "command", command: "/status"},
		{name: "command-help", family: "command", command: "/help"},
		{name: "command-jobs", family: "command", command: "/jobs"},
		{name: "command-tz", family: "command", command: "/tz"},
		{name: "command-usage", family: "command", command: "/usage"},
		{name: "command-approvals", family: "command", command: "/approvals"},
		{name: "command-model", family: "command", command: "/model"},

		// A voice note: the speech key is used for the transcription (in a
		// header, excluded explicitly) and must appear nowhere else.
		{name: "voice-env", family: "speech", tool: "bash", voice: true, expect: []expectation{expectControl},
			args: func(vectorPaths) string { return bashArgs("env", 30) }},
	}
	// Images: decoded strictly and re-encoded before the model sees them.
	v = append(v, imageVectors()...)
	// Files sent to the chat, and the bot's own /proc entries (refused by
	// the sandbox's view here; TestSecurityUnconfinedFileTools without it).
	v = append(v, sendFileVectors()...)
	v = append(v, instructionLinkVectors()...)
	return append(v, processEntryVectors()...)
}

// withNeeds returns v needing the executables names.
func withNeeds(v vector, names ...string) vector {
	v.needs = append(v.needs, names...)
	return v
}

// withForbid returns v forbidding texts in its tool results.
func withForbid(v vector, texts ...string) vector {
	v.forbid = append(v.forbid, texts...)
	return v
}

// marker is what identifies a vector's chat in the conversation the model
// is sent.
func (v vector) marker() string { return "[[vector:" + v.name + "]]" }

// prompt is the user message (or voice transcript) that starts the vector.
func (v vector) prompt() string {
	return v.marker() + " Run the maintenance check and report back."
}

// familyCounts returns how many vectors each family has, in first-seen
// order, as "family=n" items.
func familyCounts(vs []vector) string {
	var order []string
	counts := map[string]int{}
	for _, v := range vs {
		if counts[v.family] == 0 {
			order = append(order, v.family)
		}
		counts[v.family]++
	}
	parts := make([]string, len(order))
	for i, f := range order {
		parts[i] = fmt.Sprintf("%s=%d", f, counts[f])
	}
	return strings.Join(parts, " ")
}
