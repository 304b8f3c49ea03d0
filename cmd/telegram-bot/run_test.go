package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/hardening"
	"github.com/volcanic/telegram-agent/internal/openaitest"
	"github.com/volcanic/telegram-agent/internal/sandbox"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

func TestMain(m *testing.M) {
	// Agent processes started by run() go through the sandbox launcher,
	// which is this test binary.
	if sandbox.IsLaunch(os.Args) {
		os.Exit(sandbox.Launch(os.Args, os.Stderr))
	}
	// The binary tests' MCP servers are this test binary too.
	if len(os.Args) > 1 && os.Args[1] == fakeMCPArg {
		os.Exit(runFakeMCP(os.Args[2:]))
	}
	if len(os.Args) == 2 && os.Args[1] == whoamiMCPArg {
		os.Exit(serveWhoamiMCP())
	}
	hardening.Apply(false, slog.New(slog.DiscardHandler))
	os.Exit(m.Run())
}

const (
	procUser   = int64(1001)
	procOpenAI = "sk-proc-test-0123456789"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// botBinary builds cmd/telegram-bot once per test run.
func botBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "telegram-bot-test-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "telegram-bot")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// botProcess is the built binary running against the fakes.
type botProcess struct {
	t      *testing.T
	cmd    *exec.Cmd
	mu     sync.Mutex
	stderr bytes.Buffer
	lines  chan string
	exited chan struct{}
}

// procEnv is the child's complete environment: nothing of the test's own
// but PATH.
func procEnv(tg *telegramtest.Server, oaURL, agentDir, workspace string, extra ...string) []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + workspace,
		"TELEGRAM_BOT_TOKEN=" + tg.Token(),
		"TELEGRAM_ALLOWED_USER_IDS=" + strconv.FormatInt(procUser, 10),
		"TELEGRAM_API_URL=" + tg.URL(),
		"OPENAI_API_KEY=" + procOpenAI,
		"OPENAI_BASE_URL=" + oaURL,
		"AGENT_DIR=" + agentDir,
		// Started as root (as CI runs), the bot stays root as it did: these
		// tests are not about the agent's uid (agent_user_test.go is).
		"AGENT_ALLOW_ROOT=1",
		"WORKSPACE_DIR=" + workspace,
		"PROCESS_ENV_HARDEN_HOST_PROCESS=false",
		"LOG_LEVEL=debug",
	}
	return append(env, extra...)
}

func startBot(t *testing.T, env []string, args ...string) *botProcess {
	t.Helper()
	cmd := exec.Command(botBinary(t), args...)
	cmd.Env = env
	return startBotCmd(t, cmd)
}

// startBotCmd starts cmd, the bot's binary with its environment set, and
// reads its stderr.
func startBotCmd(t *testing.T, cmd *exec.Cmd) *botProcess {
	t.Helper()
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &botProcess{t: t, cmd: cmd, lines: make(chan string, 1000), exited: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			p.mu.Lock()
			p.stderr.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			select {
			case p.lines <- sc.Text():
			default:
			}
		}
		io.Copy(io.Discard, pipe)
	}()
	go func() { cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.exited
	})
	return p
}

func (p *botProcess) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// waitLog waits for a stderr line containing s.
func (p *botProcess) waitLog(s string) string {
	p.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case line := <-p.lines:
			if strings.Contains(line, s) {
				return line
			}
		case <-deadline:
			p.t.Fatalf("no log line with %q", s)
		}
	}
}

// terminate sends SIGTERM and returns the exit code and how long it took.
func (p *botProcess) terminate() (int, time.Duration) {
	p.t.Helper()
	start := time.Now()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(15 * time.Second):
		p.t.Fatalf("the bot did not exit within 15s of SIGTERM")
	}
	return p.cmd.ProcessState.ExitCode(), time.Since(start)
}

func waitMessage(t *testing.T, tg *telegramtest.Server, chatID int64, s string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for _, m := range tg.Messages(chatID) {
			if strings.Contains(m.Visible, s) {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no message with %q in chat %d", s, chatID)
}

// (8) the start-up line, and a chat, then SIGTERM: exit 0 within 10 s.
func TestBinaryChatsAndStopsOnSIGTERM(t *testing.T) {
	tg := telegramtest.New(t)
	oa := openaitest.New(t, openaitest.WithScript(openaitest.Text("hello from the model")))
	agentDir, ws := t.TempDir(), t.TempDir()
	p := startBot(t, procEnv(tg, oa.URL(), agentDir, ws, "PROCESS_ENV_ALLOW=GH_TOKEN,NPM_*"))
	line := p.waitLog("Process environment:")
	if !strings.Contains(line, "Process environment: ") || !strings.Contains(line, "deny rules, allow: GH_TOKEN, NPM_*") {
		t.Errorf("start-up line: %s", line)
	}
	tg.SendText(procUser, procUser, "hi")
	waitMessage(t, tg, procUser, "hello from the model")
	if _, err := os.Stat(filepath.Join(agentDir, HeartbeatFile)); err != nil {
		t.Errorf("heartbeat: %v", err)
	}
	code, took := p.terminate()
	if code != 0 || took > 10*time.Second {
		t.Errorf("exit %d after %v, want 0 within 10s", code, took)
	}
	if strings.Contains(p.log(), tg.Token()) || strings.Contains(p.log(), procOpenAI) {
		t.Errorf("the log holds a secret value")
	}
}

func TestBinaryStartupLineAllowNone(t *testing.T) {
	tg := telegramtest.New(t)
	oa := openaitest.New(t)
	p := startBot(t, procEnv(tg, oa.URL(), t.TempDir(), t.TempDir()))
	line := p.waitLog("Process environment:")
	if !strings.HasSuffix(strings.TrimSpace(strings.Trim(strings.TrimSpace(line), `"`)), "allow: none") && !strings.Contains(line, "allow: none") {
		t.Errorf("start-up line: %s", line)
	}
	if code, _ := p.terminate(); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// (9) configuration errors: every problem at once, non-zero, no value.
func TestBinaryConfigurationErrors(t *testing.T) {
	secretish := "sk-pasted-into-the-wrong-variable-123"
	cmd := exec.Command(botBinary(t))
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"TELEGRAM_ALLOWED_USER_IDS=" + secretish,
		"OPENAI_API_KEY=" + procOpenAI,
		"LOG_FORMAT=xml",
		"TELEGRAM_API_URL=ftp://" + secretish,
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := cmd.ProcessState.ExitCode()
	if err == nil || code == 0 {
		t.Fatalf("exit code %d, want non-zero", code)
	}
	text := out.String()
	for _, want := range []string{"TELEGRAM_BOT_TOKEN", "TELEGRAM_ALLOWED_USER_IDS", "LOG_FORMAT", "TELEGRAM_API_URL"} {
		if !strings.Contains(text, want) {
			t.Errorf("the output does not name %s:\n%s", want, text)
		}
	}
	if strings.Contains(text, secretish) || strings.Contains(text, procOpenAI) {
		t.Errorf("the output holds a configured value (lengths %d, %d)", len(secretish), len(procOpenAI))
	}
}

// SIGTERM during a running sleep: exit 0 within 10 s, the sleep's group gone,
// the chat told that the bot is restarting.
func TestBinarySIGTERMDuringSleep(t *testing.T) {
	tg := telegramtest.New(t)
	oa := openaitest.New(t, openaitest.WithScript(
		openaitest.ToolCalls(openaitest.ToolCall{Name: "bash", Arguments: `{"command":"echo $$ > pgid; sleep 1000; echo never"}`}),
	), openaitest.AllowUnscripted())
	agentDir, ws := t.TempDir(), t.TempDir()
	p := startBot(t, procEnv(tg, oa.URL(), agentDir, ws))
	tg.SendText(procUser, procUser, "sleep")
	var pgid int
	deadline := time.Now().Add(20 * time.Second)
	for pgid == 0 && time.Now().Before(deadline) {
		data, _ := os.ReadFile(filepath.Join(ws, "pgid"))
		pgid, _ = strconv.Atoi(strings.TrimSpace(string(data)))
		time.Sleep(20 * time.Millisecond)
	}
	if pgid == 0 {
		t.Fatal("the sleep never started")
	}
	time.Sleep(200 * time.Millisecond)
	code, took := p.terminate()
	if code != 0 || took > 10*time.Second {
		t.Errorf("exit %d after %v, want 0 within 10s", code, took)
	}
	if err := syscall.Kill(-pgid, 0); err == nil {
		t.Errorf("the sleep's process group %d is still alive", pgid)
	}
	waitMessage(t, tg, procUser, "restarting")
}

// The journal: kill -9 between acknowledging and answering; after the
// restart the chat is told, and /retry runs the message.
func TestBinaryJournalAfterKill(t *testing.T) {
	tg := telegramtest.New(t)
	oa := openaitest.New(t, openaitest.WithScript(
		openaitest.Text("never arrives").Fail(openaitest.FailStall, 0),
		openaitest.Text("the answer after the retry"),
	))
	agentDir, ws := t.TempDir(), t.TempDir()
	env := procEnv(tg, oa.URL(), agentDir, ws)
	p := startBot(t, env)
	tg.SendText(procUser, procUser, "an important message")
	if _, err := oa.WaitForRequests(1, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	// Wait until the update is acknowledged (the next getUpdates carries its
	// offset), then kill.
	deadline := time.Now().Add(10 * time.Second)
	for tg.PendingUpdates() > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if tg.PendingUpdates() > 0 {
		t.Fatal("the update was never acknowledged")
	}
	p.cmd.Process.Kill()
	<-p.exited

	startBot(t, env)
	waitMessage(t, tg, procUser, "interrupted by a restart")
	tg.SendText(procUser, procUser, "/retry")
	waitMessage(t, tg, procUser, "the answer after the retry")
	chats := oa.ChatRequests()
	if last := chats[len(chats)-1].LastMessage().Text(); !strings.Contains(last, "an important message") {
		t.Errorf("/retry sent %q", last)
	}
}

// unstamped returns a user message's text without the time stamp the bot
// starts it with ("[Tue 1 Dec 2026 09:30 UTC]\n"), and whether it had one.
func unstamped(text string) (string, bool) {
	stamp, rest, ok := strings.Cut(text, "]\n")
	if !ok || !strings.HasPrefix(stamp, "[") || strings.Contains(stamp, "\n") {
		return text, false
	}
	return rest, true
}

// The prompt wiring: the system prompt comes from internal/prompt with
// the operator's SYSTEM.md, and /model switches between OPENAI_MODELS (the
// next request names the new model).
func TestBinarySystemPromptAndModelSwitch(t *testing.T) {
	tg := telegramtest.New(t)
	oa := openaitest.New(t, openaitest.WithResponder(func(req openaitest.ChatRequest) openaitest.Response {
		text, ok := unstamped(req.LastMessage().Text())
		if !ok {
			return openaitest.Text("no time stamp: " + text)
		}
		return openaitest.Text("echo: " + text)
	}))
	agentDir, ws := t.TempDir(), t.TempDir()
	const rule = "Operator rule: answer like a lighthouse keeper."
	if err := os.WriteFile(filepath.Join(agentDir, "SYSTEM.md"), []byte(rule), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startBot(t, procEnv(tg, oa.URL(), agentDir, ws, "OPENAI_MODEL=model-a", "OPENAI_MODELS=model-b", "MODEL_CONTEXT_WINDOW=64000"))
	tg.SendText(procUser, procUser, "first")
	waitMessage(t, tg, procUser, "echo: first")
	tg.SendText(procUser, procUser, "/model model-b")
	waitMessage(t, tg, procUser, "This chat now uses model-b")
	tg.SendText(procUser, procUser, "second")
	waitMessage(t, tg, procUser, "echo: second")
	tg.SendText(procUser, procUser, "third")
	waitMessage(t, tg, procUser, "echo: third")
	tg.SendText(procUser, procUser, "/status")
	waitMessage(t, tg, procUser, "of 64,000 tokens")

	chats := oa.ChatRequests()
	if len(chats) != 3 {
		t.Fatalf("model requests = %d, want 3", len(chats))
	}
	if system := chats[0].Messages[0]; system.Role != "system" || !strings.Contains(system.Text(), rule) {
		t.Errorf("the first message is not the system prompt with SYSTEM.md (role %q)", system.Role)
	}
	if chats[1].Messages[0].Text() != chats[2].Messages[0].Text() {
		t.Error("the system prompt changed from the second turn to the third")
	}
	if got := []string{chats[0].Model, chats[1].Model}; got[0] != "model-a" || got[1] != "model-b" {
		t.Errorf("request models = %q, want model-a then model-b", got)
	}
	if code, _ := p.terminate(); code != 0 {
		t.Errorf("exit %d", code)
	}
}
