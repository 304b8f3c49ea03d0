package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"github.com/volcanic/telegram-agent/internal/asusertest"
	"github.com/volcanic/telegram-agent/internal/openaitest"
	"github.com/volcanic/telegram-agent/internal/sandbox"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

func TestParseAgentUser(t *testing.T) {
	tests := []struct {
		name          string
		uid, gid, all string
		want          AgentUserConfig
		wantErr       string
	}{
		{name: "defaults", uid: "64000", gid: "64000", all: "0", want: AgentUserConfig{IDs: sandbox.IDs{UID: 64000, GID: 64000}}},
		{name: "blank", want: AgentUserConfig{IDs: sandbox.IDs{UID: 64000, GID: 64000}}},
		{name: "allow root", uid: "5000", gid: "5001", all: "1", want: AgentUserConfig{IDs: sandbox.IDs{UID: 5000, GID: 5001}, AllowRoot: true}},
		{name: "root's uid", uid: "0", gid: "64000", all: "0", wantErr: "AGENT_UID must be a number above 0"},
		{name: "not a number", uid: "64000", gid: "agent", all: "0", wantErr: "AGENT_GID must be a number above 0"},
		{name: "bad switch", uid: "64000", gid: "64000", all: "maybe", wantErr: "AGENT_ALLOW_ROOT must be 1 or 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseAgentUser(Env{AgentUID: tt.uid, AgentGID: tt.gid, AgentAllowRoot: tt.all})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error %v, want one with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// needRoot skips a test of the bot started as root where the tests do not
// run as root.
func needRoot(t *testing.T) {
	t.Helper()
	if !asusertest.Needed() {
		t.Skip("starts the bot as root, and the tests do not run as root")
	}
}

// TestBinaryRefusesToStayRoot starts the built binary as root with an
// AGENT_DIR of root's, so it has no user to become: it refuses to start,
// and says how to fix it, unless AGENT_ALLOW_ROOT=1.
func TestBinaryRefusesToStayRoot(t *testing.T) {
	needRoot(t)
	tg := telegramtest.New(t)
	oa := openaitest.New(t)
	agentDir, ws := t.TempDir(), t.TempDir()
	env := withoutVars(procEnv(tg, oa.URL(), agentDir, ws), "AGENT_ALLOW_ROOT")
	cmd := exec.Command(botBinary(t))
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Fatalf("exit %v, want 2; output:\n%s", err, out)
	}
	for _, want := range []string{"the bot runs as root and has no user to become", "AGENT_ALLOW_ROOT=1"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the refusal lacks %q:\n%s", want, out)
		}
	}
	if len(tg.Requests()) != 0 {
		t.Errorf("the refused bot called the Bot API %d time(s)", len(tg.Requests()))
	}

	p := startBot(t, append(env, "AGENT_ALLOW_ROOT=1"))
	line := p.waitLog("Agent uid:")
	if !strings.Contains(line, "the bot runs as root (AGENT_ALLOW_ROOT=1)") {
		t.Errorf("the start-up line about the uid: %s", line)
	}
	if code, _ := p.terminate(); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// agentUIDProbe is what the agent's bash tries against the bot (pid %[1]d)
// and its state (%[2]q), with each control first: the same call by a
// process on itself (sh -c 'exec tool ... $$': the tool keeps the shell's
// pid), which must work, so that a refusal is the kernel's same-uid
// check or the launcher's seccomp filter and not a missing tool. (The
// filter refuses a call on any other process, the calling shell's own
// child or parent included.)
const agentUIDProbe = `bot=%[1]d
try() { if "$@" >/dev/null 2>&1; then echo ok; else echo refused; fi; }
echo "uid=$(id -u) gid=$(id -g)"
echo "self-prlimit=$(try sh -c 'exec prlimit --pid $$ --nofile=512:1024')"
echo "prlimit=$(try prlimit --pid $bot --cpu=1:1)"
echo "self-renice=$(try sh -c 'exec renice -n 1 -p $$')"
echo "renice=$(try renice -n 19 -p $bot)"
echo "self-taskset=$(try sh -c 'exec taskset -p 1 $$')"
echo "taskset=$(try taskset -p 1 $bot)"
echo "self-environ=$(try cat /proc/$$/environ)"
echo "environ=$(try cat /proc/$bot/environ)"
echo "chmod=$(try chmod 0 %[2]q)"
echo "touch=$(try touch -d 2000-01-01 %[2]q)"
echo "done"`

// probedBot is a bot started for the agent-uid probe: its process, and
// the probe's answers by line.
type probedBot struct {
	p        *botProcess
	pid      int
	agentDir string
	ws       string
}

// startProbedBot starts bin, whose AGENT_DIR and home belong to the
// unprivileged user (its workspace too when userWorkspace), with attr (as
// root when nil), and a model whose first answer runs agentUIDProbe in
// bash. It waits for the uid line, which must hold line.
func startProbedBot(t *testing.T, bin string, attr *syscall.SysProcAttr, userWorkspace bool, line string) (*probedBot, *telegramtest.Server, *openaitest.Server) {
	t.Helper()
	needRoot(t)
	if sandbox.ABI() == 0 {
		t.Skip("agent processes get their own uid through the sandbox launcher, and the kernel has no Landlock")
	}
	for _, tool := range []string{"prlimit", "renice", "taskset"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the probe needs %s (util-linux)", tool)
		}
	}
	root := filepath.Dir(bin)
	b := &probedBot{agentDir: filepath.Join(root, "data"), ws: filepath.Join(root, "workspace")}
	home := filepath.Join(root, "home")
	for _, d := range []string{b.agentDir, b.ws, home} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if d == b.ws && !userWorkspace {
			continue
		}
		if err := os.Chown(d, asusertest.UID, asusertest.GID); err != nil {
			t.Fatal(err)
		}
	}
	tg := telegramtest.New(t)
	var pid atomic.Int64
	oa := openaitest.New(t, openaitest.WithResponder(func(r openaitest.ChatRequest) openaitest.Response {
		if last := r.LastMessage(); last.Role == "tool" {
			return openaitest.Text("probed")
		}
		args, err := json.Marshal(map[string]any{"command": fmt.Sprintf(agentUIDProbe, pid.Load(), b.agentDir), "timeout": 60})
		if err != nil {
			panic(err)
		}
		return openaitest.ToolCalls(openaitest.ToolCall{Name: "bash", Arguments: string(args)})
	}))
	env := withoutVars(procEnv(tg, oa.URL(), b.agentDir, b.ws, "APPROVAL_MODE=off"), "PATH", "HOME", "AGENT_ALLOW_ROOT")
	cmd := exec.Command(bin)
	cmd.Env = append(env, "PATH=/usr/local/bin:/usr/bin:/bin", "HOME="+home)
	cmd.Dir = "/"
	cmd.SysProcAttr = attr
	b.p = startBotCmd(t, cmd)
	if attr != nil {
		// The child's change of uid cleared the test runner's flag.
		_ = unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0)
	}
	b.pid = cmd.Process.Pid
	pid.Store(int64(b.pid))
	if got := b.p.waitLog("Agent uid:"); !strings.Contains(got, line) {
		t.Fatalf("the start-up line about the uid lacks %q: %s\n%s", line, got, b.p.log())
	}
	b.p.waitLog("Agent sandbox: landlock")
	for _, k := range []string{"CapPrm", "CapEff", "CapAmb"} {
		if got := procStatus(t, b.pid, k); strings.Trim(got, "0") != "" {
			t.Errorf("the bot keeps capabilities: %s %s", k, got)
		}
	}
	return b, tg, oa
}

// probe has the bot's agent run the probe, and returns its answers by
// line and the whole result.
func (b *probedBot) probe(t *testing.T, tg *telegramtest.Server, oa *openaitest.Server) (map[string]string, string) {
	t.Helper()
	tg.SendText(procUser, procUser, "probe")
	waitMessage(t, tg, procUser, "probed")
	var result string
	for _, r := range oa.ChatRequests() {
		if m := r.LastMessage(); m.Role == "tool" {
			result = m.Text()
		}
	}
	got := map[string]string{}
	for _, l := range strings.Split(result, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(l), "="); ok && !strings.Contains(k, " ") {
			got[k] = v
		}
	}
	return got, result
}

// wantProbe is the probe's answers where the agent has a uid of its own.
var wantProbe = map[string]string{
	"uid": "64000 gid=64000", "self-prlimit": "ok", "prlimit": "refused", "self-renice": "ok", "renice": "refused",
	"self-taskset": "ok", "taskset": "refused", "self-environ": "ok", "environ": "refused", "chmod": "refused", "touch": "refused",
}

// TestBinaryAgentUID starts the built binary as root, with an AGENT_DIR of
// the unprivileged user's: the bot becomes that user, and the agent's bash
// runs as AGENT_UID (its default), so the kernel refuses every vector of
// one uid: prlimit, renice and taskset of the bot, its /proc/<pid>/environ,
// chmod and utime of AGENT_DIR. The bot is alive afterwards, and its
// state's mode unchanged.
func TestBinaryAgentUID(t *testing.T) {
	needRoot(t)
	b, tg, oa := startProbedBot(t, asusertest.PublicCopy(t, botBinary(t), 0o711), nil, false,
		fmt.Sprintf("the bot runs as %d:%d (the owner of AGENT_DIR), agent processes as 64000:64000", asusertest.UID, asusertest.GID))
	if got := procStatus(t, b.pid, "Uid"); got != strings.TrimSpace(strings.Repeat(strconv.Itoa(asusertest.UID)+" ", 4)) {
		t.Errorf("the bot runs as uids %s", got)
	}
	got, result := b.probe(t, tg, oa)
	if diff := cmp.Diff(wantProbe, got); diff != "" {
		t.Errorf("the agent's probe (-want +got):\n%s\nthe tool's result:\n%s", diff, result)
	}
	if info, err := os.Stat(b.agentDir); err != nil || info.Mode().Perm() != 0o711 {
		t.Errorf("AGENT_DIR after the probe: %v, %v", info.Mode(), err)
	}
	if info, err := os.Stat(b.ws); err != nil || info.Sys().(*syscall.Stat_t).Uid != 64000 {
		t.Errorf("the workspace was not given to the agent: %v", err)
	}
	b.end(t)
}

// end checks that the bot outlived the probe (an RLIMIT_CPU of 1 s would
// have killed it within the pause) and stops it.
func (b *probedBot) end(t *testing.T) {
	t.Helper()
	time.Sleep(1500 * time.Millisecond)
	if !asusertest.Alive(b.pid) {
		t.Fatalf("the bot died after the probe:\n%s", b.p.log())
	}
	if code, _ := b.p.terminate(); code != 0 {
		t.Errorf("exit %d:\n%s", code, b.p.log())
	}
}

// procStatus returns a field of /proc/<pid>/status.
func procStatus(t *testing.T, pid int, name string) string {
	t.Helper()
	v, err := asusertest.StatusField(pid, name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// withoutVars returns env without the variables names.
func withoutVars(env []string, names ...string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, name) {
			out = append(out, kv)
		}
	}
	return out
}

// TestDoctorRootWithoutAUser runs the doctor as root with an AGENT_DIR of
// root's: a bot started so would refuse to start, a problem; with
// AGENT_ALLOW_ROOT=1 it is a warning; with AGENT_DIR the unprivileged
// user's, the doctor names both uids.
func TestDoctorRootWithoutAUser(t *testing.T) {
	needRoot(t)
	if sandbox.ABI() == 0 {
		t.Skip("the agent's uid needs the sandbox, and the kernel has no Landlock")
	}
	owned := filepath.Join(t.TempDir(), "owned")
	if err := os.Mkdir(owned, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(owned, asusertest.UID, asusertest.GID); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, allow, agentDir, want string
	}{
		{"refused", "0", t.TempDir(), "PROBLEM: started as root, the bot would refuse to start: AGENT_DIR"},
		{"allowed", "1", t.TempDir(), "warning: started as root, the bot stays root (AGENT_ALLOW_ROOT=1)"},
		{"a user to become", "0", owned, fmt.Sprintf("started as root, the bot runs as %d:%d (the owner of AGENT_DIR), agent processes as 64000:64000", asusertest.UID, asusertest.GID)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := goodEnv()
			e.AgentDir, e.WorkspaceDir = tt.agentDir, t.TempDir()
			e.AgentAllowRoot = tt.allow
			out, _ := runDoctorWith(t, e, func(context.Context, *spawnpolicy.Policy) error { return nil })
			if !strings.Contains(out, tt.want) {
				t.Errorf("the doctor lacks %q:\n%s", tt.want, out)
			}
		})
	}
}

// staticBot builds the bot without cgo, as the image does: a bot that
// drops capabilities on every thread needs AllThreadsSyscall, which a cgo
// build lacks.
func staticBot(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := filepath.Join(t.TempDir(), "telegram-bot")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestBinaryAgentUIDWithCapabilities starts the bot (built without cgo)
// as the unprivileged user with CAP_SETUID and CAP_SETGID as ambient
// capabilities, as a systemd unit's AmbientCapabilities= gives them: it
// keeps its uid, drops both once the spawner has them, and the agent's
// bash runs as AGENT_UID, refused every vector of one uid.
func TestBinaryAgentUIDWithCapabilities(t *testing.T) {
	needRoot(t)
	attr := &syscall.SysProcAttr{
		Credential:  &syscall.Credential{Uid: asusertest.UID, Gid: asusertest.GID, Groups: []uint32{}},
		AmbientCaps: []uintptr{unix.CAP_SETUID, unix.CAP_SETGID},
	}
	b, tg, oa := startProbedBot(t, asusertest.PublicCopy(t, staticBot(t), 0o711), attr, true,
		fmt.Sprintf("the bot runs as %d:%d, agent processes as 64000:64000", asusertest.UID, asusertest.GID))
	got, result := b.probe(t, tg, oa)
	if diff := cmp.Diff(wantProbe, got); diff != "" {
		t.Errorf("the agent's probe (-want +got):\n%s\nthe tool's result:\n%s", diff, result)
	}
	b.end(t)
}

// whoamiMCPArg starts the test binary as a stdio MCP server whose one
// tool, whoami, says which uid it runs as and whether it may write its
// HOME.
const whoamiMCPArg = "whoami-mcp"

// serveWhoamiMCP is that server.
func serveWhoamiMCP() int {
	server := mcp.NewServer(&mcp.Implementation{Name: "whoami", Version: "v1.0.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "whoami", Description: "Says which uid the server runs as."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			home := "home=refused"
			if err := os.WriteFile(filepath.Join(os.Getenv("HOME"), "probe"), []byte("x"), 0o600); err == nil {
				home = "home=ok"
			}
			text := fmt.Sprintf("server-uid=%d %s", os.Getuid(), home)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
	if err := server.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestBinaryMCPServerAsTheAgent starts the bot as root with a stdio MCP
// server (this test binary): discovery and the session's server both run
// as AGENT_UID, and the server writes its home below AGENT_DIR.
func TestBinaryMCPServerAsTheAgent(t *testing.T) {
	needRoot(t)
	if sandbox.ABI() == 0 {
		t.Skip("agent processes get their own uid through the sandbox launcher, and the kernel has no Landlock")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	server := asusertest.PublicCopy(t, exe, 0o755)
	bin := asusertest.PublicCopy(t, botBinary(t), 0o711)
	root := filepath.Dir(bin)
	agentDir, ws, home := filepath.Join(root, "data"), filepath.Join(root, "workspace"), filepath.Join(root, "home")
	for _, d := range []string{agentDir, ws, home} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{agentDir, home} {
		if err := os.Chown(d, asusertest.UID, asusertest.GID); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"who": map[string]any{
		"command": server, "args": []string{whoamiMCPArg},
		"sandbox": map[string]any{"read": []string{filepath.Dir(server)}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	tg := telegramtest.New(t)
	oa := openaitest.New(t, openaitest.WithResponder(func(r openaitest.ChatRequest) openaitest.Response {
		if last := r.LastMessage(); last.Role == "tool" {
			return openaitest.Text("asked: " + last.Text())
		}
		return openaitest.ToolCalls(openaitest.ToolCall{Name: "mcp__who__whoami", Arguments: "{}"})
	}))
	env := withoutVars(procEnv(tg, oa.URL(), agentDir, ws, "APPROVAL_MODE=off", "MCP_CONFIG="+string(cfg)), "PATH", "HOME", "AGENT_ALLOW_ROOT")
	cmd := exec.Command(bin)
	cmd.Env = append(env, "PATH=/usr/local/bin:/usr/bin:/bin", "HOME="+home)
	cmd.Dir = "/"
	p := startBotCmd(t, cmd)
	p.waitLog("Agent uid:")
	// Discovery runs in the background: the tool joins once it answered.
	p.waitLog("mcp: server discovered")
	tg.SendText(procUser, procUser, "who?")
	waitMessage(t, tg, procUser, "asked: ")
	var got string
	for _, m := range tg.Messages(procUser) {
		if strings.Contains(m.Visible, "asked: ") {
			got = m.Visible
		}
	}
	if !strings.Contains(got, "server-uid=64000 home=ok") {
		t.Errorf("the MCP server's answer: %q, want it to run as 64000 and write its home\n%s", got, p.log())
	}
	if code, _ := p.terminate(); code != 0 {
		t.Errorf("exit %d:\n%s", code, p.log())
	}
}
