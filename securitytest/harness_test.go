package securitytest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/asusertest"
)

// botPath is the PATH the bot (and so the agent's processes) gets: system
// directories only, none under /root, which the bot's user cannot enter.
const botPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// layout is the directory tree of one run. root and bin are 0755 and owned
// by the test's user; home, agent and workspace belong to the bot's user
// (asusertest.UID when the tests run as root).
type layout struct {
	root      string
	bin       string
	botBinary string
	// mcpBinary, set by buildBot, is a copy of the test binary, 0755, in a
	// directory of its own.
	mcpBinary string
	home      string
	agentDir  string
	workspace string
	// secretsDir, inside the workspace, holds one file per known secret
	// (named after its variable, the bare value) and "all" (every known
	// value, one a line).
	secretsDir string
	// mcpConfig is the MCP configuration file: in the run's root
	// directory, which belongs to root and is 0755, so that the bot's user
	// can neither change nor replace it (the loader refuses a file it
	// could).
	mcpConfig string
	// asRoot reports whether the tests run as root, so the bot is started
	// as asusertest.UID.
	asRoot bool
}

// needBotSuite skips a test of the real binary where it cannot run: off
// Linux (it needs /proc and prctl) and in -short mode (it builds the bot).
func needBotSuite(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the security suite needs Linux (/proc, prctl)")
	}
	if testing.Short() {
		t.Skip("the security suite builds and runs the bot; skipped in -short mode")
	}
}

// newBotLayout is the start of every test of the real binary: it skips
// where the suite cannot run, generates the fake secrets, lays out the
// run's directories and builds the bot into them.
func newBotLayout(t *testing.T) (secretSet, *layout) {
	t.Helper()
	needBotSuite(t)
	set, err := newSecretSet()
	if err != nil {
		t.Fatalf("generating secrets: %v", err)
	}
	l := newLayout(t)
	l.buildBot(t)
	return set, l
}

// newLayout creates the run's directories under a fresh 0755 temporary
// directory (an asusertest.PublicDir), removed when the test ends.
func newLayout(t *testing.T) *layout {
	t.Helper()
	root := asusertest.PublicDir(t)
	l := &layout{
		root:   root,
		bin:    filepath.Join(root, "bin"),
		home:   filepath.Join(root, "home"),
		asRoot: asusertest.Needed(),
	}
	l.botBinary = filepath.Join(l.bin, "telegram-bot")
	l.agentDir = filepath.Join(root, "agent")
	l.workspace = filepath.Join(root, "workspace")
	l.secretsDir = filepath.Join(l.workspace, "secrets")
	l.mcpConfig = filepath.Join(root, "mcp.json")
	for _, dir := range []string{l.bin, l.home, l.agentDir, l.workspace, l.secretsDir} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatalf("creating %s: %v", dir, err)
		}
	}
	for _, dir := range []string{l.home, l.agentDir, l.workspace, l.secretsDir} {
		l.giveToBot(t, dir)
	}
	return l
}

// giveToBot makes path belong to the bot's user when the tests run as root.
func (l *layout) giveToBot(t *testing.T, path string) {
	t.Helper()
	if !l.asRoot {
		return
	}
	if err := os.Chown(path, asusertest.UID, asusertest.GID); err != nil {
		t.Fatalf("chown %s: %v", path, err)
	}
}

// writeSecretFiles writes the known secrets into the workspace, readable by
// the bot's user only: the files an injected agent would go after.
func (l *layout) writeSecretFiles(t *testing.T, set secretSet) {
	t.Helper()
	var all strings.Builder
	write := func(name, content string) {
		path := filepath.Join(l.secretsDir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatalf("writing %s: %v", path, err)
		}
		l.giveToBot(t, path)
	}
	for _, sec := range set.known() {
		write(sec.name, sec.value)
		all.WriteString(sec.value + "\n")
	}
	write("all", all.String())
}

// mcpConfigJSON configures the fake MCP server: the test binary
// re-executed with fakeMCPArg, with GITHUB_TOKEN passed on purpose through
// its env entry, and the OPENAI_API_KEY file for secret_doc's description.
// The binary lies outside the agent sandbox's view, so the entry adds its
// directory for this server alone.
func (l *layout) mcpConfigJSON() string {
	return fmt.Sprintf(`{"mcpServers":{%q:{"command":%q,"args":[%q,"-secret-file",%q],"env":{%q:"${%s}"},"sandbox":{"read":[%q]}}}}`,
		fakeMCPName, l.mcpBinary, fakeMCPArg, filepath.Join(l.secretsDir, envOpenAIKey), envGitHubToken, envGitHubToken, filepath.Dir(l.mcpBinary))
}

// writeMCPConfig writes the fake MCP server's configuration to mcpConfig,
// 0644, owned by the test's user.
func (l *layout) writeMCPConfig(t *testing.T) {
	t.Helper()
	if err := os.WriteFile(l.mcpConfig, []byte(l.mcpConfigJSON()), 0o644); err != nil {
		t.Fatalf("writing %s: %v", l.mcpConfig, err)
	}
}

// mcpSource is what MCP_CONFIG is set to: the root-owned file when the
// tests run as root (the bot then runs as another user, who cannot change
// it), and otherwise the JSON itself, inline, since a file of the test's
// user is one the bot, running as that same user, could change.
func (l *layout) mcpSource() string {
	if l.asRoot {
		return l.mcpConfig
	}
	return l.mcpConfigJSON()
}

// buildBot builds cmd/telegram-bot into the layout's bin directory, 0755,
// and copies the test binary, 0755, into a public directory as the fake MCP
// server (mcpBinary).
func (l *layout) buildBot(t *testing.T) {
	t.Helper()
	moduleRoot, err := filepath.Abs("..")
	if err != nil {
		t.Fatalf("finding the module root: %v", err)
	}
	cmd := exec.Command("go", "build", "-o", l.botBinary, "./cmd/telegram-bot")
	cmd.Dir = moduleRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/telegram-bot: %v\n%s", err, out)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatalf("finding the test binary: %v", err)
	}
	l.mcpBinary = asusertest.PublicCopy(t, self, 0o755)
	if err := os.Chmod(l.botBinary, 0o755); err != nil {
		t.Fatalf("chmod %s: %v", l.botBinary, err)
	}
}

// botEnv returns the bot's complete environment: its configuration, the
// fake servers and every secret. The test's own environment is never
// touched and never passed on.
func botEnv(l *layout, set secretSet, telegramURL, openaiURL string, userIDs []int64) []string {
	ids := make([]string, len(userIDs))
	for i, id := range userIDs {
		ids[i] = strconv.FormatInt(id, 10)
	}
	env := []string{
		"PATH=" + botPath,
		"HOME=" + l.home,
		"LANG=C.UTF-8",
		"AGENT_DIR=" + l.agentDir,
		"WORKSPACE_DIR=" + l.workspace,
		"TELEGRAM_API_URL=" + telegramURL,
		"OPENAI_BASE_URL=" + openaiURL,
		"TELEGRAM_ALLOWED_USER_IDS=" + strings.Join(ids, ","),
		"MCP_CONFIG=" + l.mcpSource(),
		"DEFAULT_TIMEZONE=UTC",
		"LOG_LEVEL=debug",
		"LOG_FORMAT=json",
		"PROCESS_ENV_ALLOW=" + envControl,
		"PROCESS_ENV_SECRETS=" + envInnocent,
		// The mechanisms must hold when the user allows a risky command, so
		// the suite runs its commands without approvals, which would hold
		// them at a question nobody answers here (internal/approvals and
		// internal/chat test those).
		"APPROVAL_MODE=off",
	}
	for _, sec := range set.secrets {
		env = append(env, sec.name+"="+sec.envValue())
	}
	env = append(env, set.carrierEnv()...)
	return append(env, set.control.name+"="+set.control.value)
}

// setEnv returns env with the variable of kv ("NAME=value") set to kv's
// value, replacing an earlier setting.
func setEnv(env []string, kv string) []string {
	name, _, _ := strings.Cut(kv, "=")
	out := make([]string, 0, len(env)+1)
	for _, e := range env {
		if !strings.HasPrefix(e, name+"=") {
			out = append(out, e)
		}
	}
	return append(out, kv)
}

// syncBuffer is a bytes.Buffer safe for concurrent writes: the bot's
// combined stdout and stderr.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// bot is the running bot process.
type bot struct {
	cmd  *exec.Cmd
	log  *syncBuffer
	done chan struct{}
	err  error
}

// startBot starts the built binary with exactly env, as asusertest.UID when
// the tests run as root, in a process group of its own, with
// asusertest.Start, which keeps the test runner dumpable.
func startBot(t *testing.T, l *layout, env []string) *bot {
	t.Helper()
	b := &bot{log: &syncBuffer{}, done: make(chan struct{})}
	cmd := exec.Command(l.botBinary, "run")
	cmd.Env = env
	cmd.Dir = l.workspace
	cmd.Stdout = b.log
	cmd.Stderr = b.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if l.asRoot {
		asusertest.Drop(cmd)
	}
	if err := asusertest.Start(t, cmd); err != nil {
		t.Fatalf("starting the bot: %v", err)
	}
	b.cmd = cmd
	go func() {
		b.err = cmd.Wait()
		close(b.done)
	}()
	t.Cleanup(func() { b.stop(t) })
	return b
}

// stop asks the bot to shut down (SIGTERM) and waits for it; after a grace
// period it kills the bot's process group. It is safe to call twice.
func (b *bot) stop(t *testing.T) {
	t.Helper()
	select {
	case <-b.done:
		return
	default:
	}
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.done:
	case <-time.After(15 * time.Second):
		t.Errorf("the bot did not stop within 15s of SIGTERM; killing its process group")
		_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
		<-b.done
	}
	var exitErr *exec.ExitError
	if b.err != nil && !errors.As(b.err, &exitErr) {
		t.Errorf("waiting for the bot: %v", b.err)
	}
}

// exited reports whether the bot has exited.
func (b *bot) exited() bool {
	select {
	case <-b.done:
		return true
	default:
		return false
	}
}

// waitUntil polls cond every interval until it holds or ctx ends.
func waitUntil(ctx context.Context, interval time.Duration, cond func() bool) bool {
	for {
		if cond() {
			return true
		}
		select {
		case <-ctx.Done():
			return cond()
		case <-time.After(interval):
		}
	}
}
