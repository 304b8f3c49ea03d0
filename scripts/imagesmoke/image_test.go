package imagesmoke

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/openaitest"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

var (
	image      = flag.String("image", "", "the image to run; scripts/image-smoke builds it and passes its name")
	podmanOpts = flag.String("podman-opts", "", "options for podman run, space separated (scripts/image-runtime)")
	commit     = flag.String("commit", "", "the commit the image was built from (its SOURCE_COMMIT)")
	unhealthy  = flag.Bool("unhealthy", true, "also stop polling and wait (about 100 s) for the health check to fail")
)

// user is the allowed Telegram user; the chat is its private chat.
const user = 1001

// step is one command the agent's bash runs, and what its output must show.
type step struct {
	name    string
	command string
	check   func(t *testing.T, out string)
}

// TestImage starts the image as the deployment would (its entrypoint, its
// user, the secrets in the container's environment) and checks it through
// chats: the bot answers, runs as uid 10001 under tini, its binary is
// execute-only and the bot and tini are non-dumpable, the agent's
// environment holds no secret, the toolbox works, tini reaps an orphan, and
// the health check is healthy while polling works and unhealthy once it
// stops.
func TestImage(t *testing.T) {
	if *image == "" {
		t.Skip("needs -image: scripts/image-smoke builds the image and runs this test")
	}
	if _, err := exec.LookPath("podman"); err != nil {
		t.Skip("needs podman")
	}
	tg := telegramtest.New(t)
	secrets := map[string]string{
		"TELEGRAM_BOT_TOKEN": tg.Token(),
		"OPENAI_API_KEY":     "sk-imagesmoke-" + randomHex(t),
		// A deployment secret the bot does not know about: the default
		// deny glob *_TOKEN keeps it from agent processes.
		"GITHUB_TOKEN": "ghp_imagesmoke" + randomHex(t),
	}
	m := newModel(t)
	env := map[string]string{
		"TELEGRAM_ALLOWED_USER_IDS": strconv.Itoa(user),
		"TELEGRAM_API_URL":          tg.URL(),
		"OPENAI_BASE_URL":           m.server.URL(),
		"OPENAI_MODEL":              "smoke-model",
		"LOG_LEVEL":                 "debug",
	}
	for k, v := range secrets {
		env[k] = v
	}
	c := startContainer(t, env)

	started := c.waitLog(t, "polling Telegram")
	t.Run("start-up", func(t *testing.T) {
		logs := c.logs(t)
		line := logLine(logs, "telegram-bot starting")
		if *commit != "" && !strings.Contains(line, "version=\""+(*commit)[:12]+" ") {
			t.Errorf("the start-up line does not name the commit %s: %s", (*commit)[:12], line)
		}
		if strings.Contains(logs, "ignoring the MCP servers") || strings.Contains(logs, "refusing an MCP configuration") {
			t.Errorf("a warning about an mcp.json that does not exist:\n%s", logs)
		}
		if strings.Contains(logs, "parent process") {
			t.Errorf("the bot warns that its parent (tini) holds its secrets readably:\n%s", logs)
		}
		if !strings.Contains(started, "model=smoke-model") {
			t.Errorf("the polling line: %s", started)
		}
		t.Logf("start-up: %s", line)
		t.Logf("polling: %s", started)
	})
	// The agent sandbox (AGENT_SANDBOX=auto) says at start-up whether it
	// is in force; Landlock works under podman's default seccomp profile.
	sandbox := logLine(c.logs(t), "Agent sandbox:")
	t.Run("version", func(t *testing.T) {
		// Standard output only: podman reports on stderr that it cannot
		// schedule health checks without systemd.
		cmd := exec.Command("podman", append(append([]string{"run", "--rm"}, strings.Fields(*podmanOpts)...), *image, "version")...)
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("podman run version: %v", err)
		}
		out := string(b)
		if *commit != "" && !strings.HasPrefix(out, "telegram-bot "+(*commit)[:12]+" go") {
			t.Errorf("version = %q, want the commit %s", out, (*commit)[:12])
		}
		t.Logf("version: %s", strings.TrimSpace(out))
	})
	t.Run("healthy while polling", func(t *testing.T) {
		if out, code := c.healthcheck(t); code != 0 {
			t.Errorf("the health check failed (exit %d) while polling works: %s", code, out)
		}
	})
	t.Run("answers a chat", func(t *testing.T) {
		tg.SendText(user, user, "hello")
		waitMessage(t, tg, "hello from the image")
	})

	for _, s := range steps(secrets) {
		t.Run(s.name, func(t *testing.T) {
			out := m.run(t, tg, s.command)
			s.check(t, out)
		})
	}

	t.Run("tini reaps an orphan", func(t *testing.T) {
		// A process in the container whose parent exits goes to PID 1:
		// tini must wait for it, or it stays a zombie. (The agent's own
		// orphans go to its sandbox launcher when the sandbox is on.)
		out := podman(t, "exec", c.name, "sh", "-c", `sh -c 'sleep 2 & echo $! > /tmp/orphan.pid'
sleep 1
p=$(cat /tmp/orphan.pid)
echo "parent $(ps -o ppid= -p $p | tr -d ' ')"
sleep 2.5
echo "after $(ps -o stat= -p $p | tr -d ' ' || true)"
echo "zombies $(ps -eo stat= | grep -c '^Z' || true)"`)
		for _, want := range []string{"parent 1\n", "after \n", "zombies 0"} {
			if !strings.Contains(out, want) {
				t.Errorf("want %q:\n%s", want, out)
			}
		}
	})
	t.Run("the sandbox keeps the agent out of the bot's state", func(t *testing.T) {
		if !strings.Contains(sandbox, "landlock ABI") {
			t.Skipf("the bot reports no agent sandbox in force: %q", sandbox)
		}
		t.Logf("%s", sandbox)
		out := m.run(t, tg, `touch /data/agent-was-here 2>/dev/null && echo "data written" || echo "data refused"
touch /workspace/agent-was-here && echo "workspace written"`)
		for _, want := range []string{"data refused", "workspace written"} {
			if !strings.Contains(out, want) {
				t.Errorf("want %q with the sandbox in force:\n%s", want, out)
			}
		}
	})

	if *unhealthy {
		t.Run("unhealthy when polling stops", func(t *testing.T) {
			tg.FailNext("getUpdates", 100000, 502, "Bad Gateway", 0)
			// The long poll in flight still succeeds: a message from a user
			// the bot does not answer ends it now. The heartbeat stops with
			// the first failed one.
			tg.SendText(user+1, user+1, "from a stranger")
			failed, err := tg.WaitFor(context.Background(), func(r telegramtest.Request) bool {
				return r.Method == "getUpdates" && r.Status == 502
			})
			if err != nil {
				t.Fatalf("no failed getUpdates: %v", err)
			}
			if out, code := c.healthcheck(t); code != 0 {
				t.Errorf("unhealthy (exit %d) right after polling stopped, want healthy for up to 90 s: %s", code, out)
			}
			// The healthcheck allows 90 s; the back-off is a wait, not a check.
			time.Sleep(time.Until(failed.Time.Add(95 * time.Second)))
			var out string
			var code int
			for range 3 { // the HEALTHCHECK's retries
				out, code = c.healthcheck(t)
			}
			if code == 0 {
				t.Errorf("the health check still passes 95 s after polling stopped: %s", out)
			}
			status := strings.TrimSpace(podman(t, "inspect", "--format", "{{.State.Health.Status}}", c.name))
			if status != "unhealthy" {
				t.Errorf("health status %q after 3 failed checks, want unhealthy", status)
			}
			t.Logf("after polling stopped: %s (status %s)", strings.TrimSpace(out), status)
		})
	}

	t.Run("stops on SIGTERM", func(t *testing.T) {
		start := time.Now()
		podman(t, "stop", "--time", "15", c.name)
		took := time.Since(start)
		code := strings.TrimSpace(podman(t, "inspect", "--format", "{{.State.ExitCode}}", c.name))
		if code != "0" || took > 12*time.Second {
			t.Errorf("exit code %s after %v, want 0 within 10 s (tini passes SIGTERM on)", code, took.Round(time.Millisecond))
		}
		if !strings.Contains(c.logs(t), "telegram-bot stopped") {
			t.Error("the log lacks \"telegram-bot stopped\"")
		}
	})

	all := append(tg.AllBodies(), m.server.AllBodies()...)
	for name, v := range secrets {
		for _, b := range all {
			if bytes.Contains(b, []byte(v)) {
				t.Errorf("%s (%d bytes) reached Telegram or the model", name, len(v))
				break
			}
		}
	}
	if logs := c.logs(t); containsAny(logs, secrets) != "" {
		t.Errorf("the container's log holds %s", containsAny(logs, secrets))
	}
}

// steps returns the commands run in the agent's bash, in order.
func steps(secrets map[string]string) []step {
	return []step{
		{
			name:    "runs as uid 10001 under tini",
			command: `echo "uid=$(id -u) gid=$(id -g)"; ps -eo pid=,ppid=,uid=,comm= | awk '{print "proc", $1, $2, $3, $4}'`,
			check: func(t *testing.T, out string) {
				if !strings.Contains(out, "uid=10001 gid=10001") {
					t.Errorf("the agent's bash is not uid 10001:\n%s", out)
				}
				procs := procLines(out)
				if p := procs["1"]; len(p) < 3 || p[2] != "tini" || p[1] != "10001" {
					t.Errorf("PID 1 is %v, want tini as uid 10001:\n%s", p, out)
				}
				bot := botPID(procs)
				if bot == "" {
					t.Fatalf("no telegram-bot process with parent 1:\n%s", out)
				}
				if p := procs[bot]; p[1] != "10001" {
					t.Errorf("the bot runs as uid %s, want 10001", p[1])
				}
			},
		},
		{
			name: "binary execute-only, bot and tini non-dumpable",
			command: `stat -c 'mode %n %a %U:%G' /usr/local/bin/telegram-bot /usr/bin/tini
for f in /usr/local/bin/telegram-bot /usr/bin/tini; do head -c1 "$f" >/dev/null 2>&1 && echo "read $f yes" || echo "read $f no"; done
for p in 1 $(pgrep -x telegram-bot); do
  echo "owner /proc/$p $(stat -c %u /proc/$p/environ)"
  cat /proc/$p/environ >/dev/null 2>&1 && echo "environ $p readable" || echo "environ $p unreadable"
done`,
			check: func(t *testing.T, out string) {
				for _, want := range []string{
					"mode /usr/local/bin/telegram-bot 711 root:root", "mode /usr/bin/tini 711 root:root",
					"read /usr/local/bin/telegram-bot no", "read /usr/bin/tini no",
					"owner /proc/1 0", "environ 1 unreadable",
				} {
					if !strings.Contains(out, want) {
						t.Errorf("want %q:\n%s", want, out)
					}
				}
				// A non-dumpable process's /proc/<pid> files belong to root.
				owners := regexp.MustCompile(`owner /proc/(\d+) (\d+)`).FindAllStringSubmatch(out, -1)
				if len(owners) < 2 {
					t.Fatalf("no bot process looked at:\n%s", out)
				}
				for _, o := range owners {
					if o[2] != "0" {
						t.Errorf("/proc/%s/environ belongs to uid %s: the process is dumpable", o[1], o[2])
					}
				}
				if regexp.MustCompile(`environ \d+ readable`).MatchString(out) {
					t.Errorf("a process's environment is readable by the agent:\n%s", out)
				}
			},
		},
		{
			name: "no secret in the agent's environment",
			// The names, then the whole environment hex-encoded, so that a
			// value shows here as it is, never redacted.
			command: `env | cut -d= -f1 | sort | tr '\n' ' '; echo; echo "hex $(env | od -An -v -tx1 | tr -d ' \n')"`,
			check: func(t *testing.T, out string) {
				names := strings.Fields(strings.SplitN(out, "\n", 2)[0])
				_, h, ok := strings.Cut(out, "hex ")
				h, _, _ = strings.Cut(h, "\n")
				raw, err := hex.DecodeString(h)
				if !ok || err != nil {
					t.Fatalf("no hex dump of the environment (%v)", err)
				}
				for name, v := range secrets {
					if slices.Contains(names, name) {
						t.Errorf("the agent's environment has %s", name)
					}
					if bytes.Contains(raw, []byte(v)) {
						t.Errorf("the value of %s (%d bytes) is in the agent's environment", name, len(v))
					}
				}
				for _, name := range []string{"AGENT_DIR", "TELEGRAM_API_URL", "OPENAI_BASE_URL"} {
					if slices.Contains(names, name) {
						t.Errorf("the agent's environment has the bot's own %s", name)
					}
				}
				t.Logf("the agent's variables: %s", strings.Join(names, " "))
			},
		},
		{
			name: "python venv and pip install --user of a wheel",
			command: `set -e
cd /workspace
python3 -m venv venv && venv/bin/python -c 'import sys; print("venv", sys.prefix)'
python3 - <<'EOF'
import base64, hashlib, zipfile
files = {
    "smoke_wheel/__init__.py": "GREETING = 'wheel works'\ndef main():\n    print(GREETING)\n",
    "smoke_wheel-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: smoke-wheel\nVersion: 1.0\n",
    "smoke_wheel-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: imagesmoke\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    "smoke_wheel-1.0.dist-info/entry_points.txt": "[console_scripts]\nsmoke-wheel = smoke_wheel:main\n",
}
record = []
with zipfile.ZipFile("smoke_wheel-1.0-py3-none-any.whl", "w") as z:
    for name, text in files.items():
        data = text.encode()
        z.writestr(name, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append("smoke_wheel-1.0.dist-info/RECORD,,")
    z.writestr("smoke_wheel-1.0.dist-info/RECORD", "\n".join(record) + "\n")
EOF
pip install --user --no-index --no-cache-dir -q ./smoke_wheel-1.0-py3-none-any.whl
python3 -c 'import smoke_wheel, sys; print("import", smoke_wheel.GREETING, smoke_wheel.__file__)'
echo "script $(command -v smoke-wheel) $(smoke-wheel)"
venv/bin/pip install --no-index --no-cache-dir -q ./smoke_wheel-1.0-py3-none-any.whl && venv/bin/smoke-wheel | sed 's/^/in venv /'`,
			check: func(t *testing.T, out string) {
				for _, want := range []string{
					"venv /workspace/venv",
					"import wheel works /workspace/.local/lib/python3",
					"script /workspace/.local/bin/smoke-wheel wheel works",
					"in venv wheel works",
				} {
					if !strings.Contains(out, want) {
						t.Errorf("want %q:\n%s", want, out)
					}
				}
			},
		},
		{
			name: "npm install -g and npx of an installed package",
			command: `set -e
mkdir -p /workspace/smoke-npm && cd /workspace/smoke-npm
printf '%s\n' '{"name":"smoke-npm","version":"1.0.0","bin":{"smoke-npm":"cli.js"}}' > package.json
printf '%s\n' '#!/usr/bin/env node' 'console.log("npm package works on node " + process.version)' > cli.js
npm pack --silent >/dev/null
npm install -g --offline --no-audit --no-fund --silent ./smoke-npm-1.0.0.tgz
echo "global $(command -v smoke-npm) $(smoke-npm)"
mkdir -p /workspace/smoke-project && cd /workspace/smoke-project
npm init -y >/dev/null
npm install --offline --no-audit --no-fund --silent ../smoke-npm/smoke-npm-1.0.0.tgz
echo "npx $(npx --offline smoke-npm)"`,
			check: func(t *testing.T, out string) {
				for _, want := range []string{
					"global /workspace/.npm-global/bin/smoke-npm npm package works on node v",
					"npx npm package works on node v",
				} {
					if !strings.Contains(out, want) {
						t.Errorf("want %q:\n%s", want, out)
					}
				}
				if v := regexp.MustCompile(`node v(\d+)\.`).FindStringSubmatch(out); v == nil || atoi(v[1]) < 22 {
					t.Errorf("Node.js is not 22 or newer:\n%s", out)
				}
			},
		},
		{
			name: "gh, git, jq, ps, make, sqlite3 and the rest of the toolbox",
			command: `set -e
d=$(mktemp -d /workspace/smoke-repo.XXXXXX) && git init -q "$d" && cd "$d"
git -c user.name=smoke -c user.email=smoke@example.invalid commit -q --allow-empty -m "smoke commit"
echo "git $(git log --format=%s)"
echo "jq $(echo '{"a":{"b":42}}' | jq .a.b)"
echo "ps $(ps -o comm= -p $$)"
echo "gh $(gh --version | head -1)"
echo "rg $(printf 'needle\n' | rg -c needle)"
echo "ssh $(ssh -V 2>&1)"
echo "curl $(curl --version | head -1 | cut -d' ' -f1-2)"
echo "unzip $(unzip -v | head -1 | cut -d' ' -f1-2)"
echo "file $(file -b /bin/bash | cut -d, -f1)"
echo "less $(less --version | head -1)"
echo "tz $(TZ=Europe/Berlin date +%Z)"
echo "tls $(test -s /etc/ssl/certs/ca-certificates.crt && echo ca-certificates)"
echo "make $(make --version | head -1)"
echo "sqlite3 $(sqlite3 :memory: 'select 6*7')"
echo "wget $(wget --version | head -1 | cut -d' ' -f1-3)"
echo "zip $(zip -v | sed -n 2p | cut -d' ' -f1-4)"
echo "xz $(xz --version | head -1)"`,
			check: func(t *testing.T, out string) {
				for _, want := range []string{
					"git smoke commit", "jq 42", "ps bash", "gh gh version ", "rg 1", "ssh OpenSSH_", "curl curl ",
					"unzip UnZip ", "file ELF", "less less ", "tls ca-certificates",
					"make GNU Make ", "sqlite3 42", "wget GNU Wget ", "zip This is Zip", "xz xz (XZ Utils) ",
					// The pinned release the gh stage builds, not Debian's.
					"gh gh version " + ghVersion(t),
				} {
					if !strings.Contains(out, want) {
						t.Errorf("want %q:\n%s", want, out)
					}
				}
				if !regexp.MustCompile(`tz CES?T`).MatchString(out) {
					t.Errorf("the time zone database is missing:\n%s", out)
				}
			},
		},
		{
			name: "an orphan of the agent's bash is reaped",
			// The orphan is in a session of its own, so the end of the call
			// does not kill it; when its parent exits, PID 1 adopts it (or,
			// with the agent sandbox, the call's launcher, a subreaper).
			command: `setsid -f sh -c 'sleep 2 & echo $! > /workspace/orphan.pid; exit 0'
sleep 1
p=$(cat /workspace/orphan.pid)
pp=$(ps -o ppid= -p $p | tr -d ' ')
echo "orphan $p parent $pp $(ps -o comm= -p $pp)"
sleep 2.5
echo "after $(ps -o stat= -p $p | tr -d ' ' || true)"
echo "zombies $(ps -eo stat= | grep -c '^Z' || true)"`,
			check: func(t *testing.T, out string) {
				parent := regexp.MustCompile(`orphan \d+ parent (\d+) (\S+)\n`).FindStringSubmatch(out)
				switch {
				case parent == nil || (parent[1] != "1" && parent[2] != "agent-sandbox"):
					t.Errorf("the orphan was not adopted by PID 1 or the sandbox launcher:\n%s", out)
				case !strings.Contains(out, "after \n") || !strings.Contains(out, "zombies 0"):
					t.Errorf("the orphan stays a zombie of %s (pid %s) while the call runs: whoever adopts it must reap it "+
						"(the sandbox launcher, a child subreaper, waits only for its command until that exits):\n%s", parent[2], parent[1], out)
				default:
					t.Logf("adopted and reaped by %s (%s)", parent[1], parent[2])
				}
			},
		},
	}
}

// model is the fake model: a user message "step N" makes it call bash
// with step N's command; the tool's result goes to the test, and the turn
// ends with "done N".
type model struct {
	server *openaitest.Server

	mu       sync.Mutex
	commands []string
	results  map[int]chan string
}

func newModel(t *testing.T) *model {
	m := &model{results: map[int]chan string{}}
	m.server = openaitest.New(t, openaitest.WithResponder(m.respond), openaitest.AllowUnscripted())
	return m
}

var stepText = regexp.MustCompile(`step (\d+)`)

func (m *model) respond(req openaitest.ChatRequest) openaitest.Response {
	var lastUser string
	for _, msg := range req.Messages {
		if msg.Role == "user" {
			lastUser = msg.Text()
		}
	}
	match := stepText.FindStringSubmatch(lastUser)
	if match == nil {
		return openaitest.Text("hello from the image")
	}
	n := atoi(match[1])
	m.mu.Lock()
	defer m.mu.Unlock()
	if last := req.LastMessage(); last.Role == "tool" {
		if ch, ok := m.results[n]; ok {
			select {
			case ch <- last.Text():
			default:
			}
		}
		return openaitest.Text(fmt.Sprintf("done %d", n))
	}
	args, _ := json.Marshal(map[string]any{"command": m.commands[n], "timeout": 300})
	return openaitest.ToolCalls(openaitest.ToolCall{Name: "bash", Arguments: string(args)})
}

// run has the agent run command in bash and returns the tool's result as
// the model saw it.
func (m *model) run(t *testing.T, tg *telegramtest.Server, command string) string {
	t.Helper()
	m.mu.Lock()
	n := len(m.commands)
	m.commands = append(m.commands, command)
	ch := make(chan string, 1)
	m.results[n] = ch
	m.mu.Unlock()
	tg.SendText(user, user, fmt.Sprintf("step %d", n))
	var out string
	select {
	case out = <-ch:
	case <-time.After(5 * time.Minute): // a hang guard
		t.Fatalf("step %d: the agent's bash did not answer", n)
	}
	waitMessage(t, tg, fmt.Sprintf("done %d", n))
	return out
}

// container is the running image.
type container struct {
	name string
}

// startContainer runs the image detached, with env in the container's
// environment (handed to podman by name, so no value is on a command
// line), and removes it when the test ends.
func startContainer(t *testing.T, env map[string]string) *container {
	t.Helper()
	c := &container{name: fmt.Sprintf("telegram-bot-smoke-%d", os.Getpid())}
	args := append([]string{"run", "--detach", "--name", c.name}, strings.Fields(*podmanOpts)...)
	var environ []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k == "PATH" || k == "HOME" || k == "XDG_RUNTIME_DIR" || k == "TMPDIR" {
			environ = append(environ, kv)
		}
	}
	for k, v := range env {
		args = append(args, "--env", k)
		environ = append(environ, k+"="+v)
	}
	cmd := exec.Command("podman", append(args, *image)...)
	cmd.Env = environ
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("podman run: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the container's log:\n%s", c.logs(t))
		}
		_ = exec.Command("podman", "rm", "--force", "--volumes", c.name).Run()
	})
	return c
}

// logs returns the container's log so far.
func (c *container) logs(t *testing.T) string {
	t.Helper()
	out, _ := exec.Command("podman", "logs", c.name).CombinedOutput()
	return string(out)
}

// waitLog waits for a log line that contains s and returns it.
func (c *container) waitLog(t *testing.T, s string) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second) // a hang guard
	for time.Now().Before(deadline) {
		if line := logLine(c.logs(t), s); line != "" {
			return line
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("no log line %q; the log:\n%s", s, c.logs(t))
	return ""
}

// healthcheck runs the image's HEALTHCHECK once, as the runtime does, and
// returns its output and exit code.
func (c *container) healthcheck(t *testing.T) (string, int) {
	t.Helper()
	out, err := exec.Command("podman", "healthcheck", "run", c.name).CombinedOutput()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return string(out), ee.ExitCode()
		}
		t.Fatalf("podman healthcheck run: %v", err)
	}
	return string(out), 0
}

func podman(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("podman", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("podman %s: %v\n%s", args[0], err, out)
	}
	return string(out)
}

// waitMessage waits until the chat shows a message that contains s.
func waitMessage(t *testing.T, tg *telegramtest.Server, s string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second) // a hang guard
	for time.Now().Before(deadline) {
		for _, m := range tg.Messages(user) {
			if strings.Contains(m.Visible, s) {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no message with %q in the chat", s)
}

// logLine returns the first line of logs that contains s, or "".
func logLine(logs, s string) string {
	for line := range strings.Lines(logs) {
		if strings.Contains(line, s) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// procLines parses "proc <pid> <ppid> <uid> <comm>" lines into pid ->
// [ppid, uid, comm].
func procLines(out string) map[string][]string {
	procs := map[string][]string{}
	for line := range strings.Lines(out) {
		if f := strings.Fields(line); len(f) == 5 && f[0] == "proc" {
			procs[f[1]] = f[2:]
		}
	}
	return procs
}

// botPID returns the pid of the telegram-bot process whose parent is 1.
func botPID(procs map[string][]string) string {
	for pid, p := range procs {
		if p[0] == "1" && p[2] == "telegram-bot" {
			return pid
		}
	}
	return ""
}

// containsAny returns the name of the first secret whose value s holds.
func containsAny(s string, secrets map[string]string) string {
	for name, v := range secrets {
		if strings.Contains(s, v) {
			return name
		}
	}
	return ""
}

func randomHex(t *testing.T) string {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// ghVersion returns the gh release the Dockerfile pins (ARG GH_VERSION).
func ghVersion(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^ARG GH_VERSION=(\S+)$`).FindSubmatch(data)
	if m == nil {
		t.Fatal("the Dockerfile pins no GH_VERSION")
	}
	return string(m[1])
}
