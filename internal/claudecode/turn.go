package claudecode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/procgroup"
)

// maxLineBytes bounds one line of claude's output.
const maxLineBytes = 64 << 20

// maxStderrBytes is how much of claude's stderr is kept, to tell the kind
// of a failure; it is never shown or logged.
const maxStderrBytes = 64 << 10

// toolUseWait is how long a bridge call waits for claude's assistant
// message announcing it, so the text before the call is streamed and
// recorded before the call's status.
const toolUseWait = 2 * time.Second

// turnSpec is one claude run.
type turnSpec struct {
	req    agent.Request
	prompt []agent.Content
	tz     string
	// persist runs in a session (session, resumed when resume); otherwise
	// the run keeps nothing.
	persist bool
	session sessionEntry
	resume  bool
}

// run starts claude for spec, streams its answer and serves its bridge
// calls until it ends.
func (p *Provider) run(ctx context.Context, spec turnSpec, onText func(string)) (agent.Response, error) {
	t := newTurnState(onText)
	secret, end := p.bridge.register(&bridgeTurn{tools: spec.req.Tools, call: func(name string, args json.RawMessage) wireResult {
		return t.call(ctx, name, args)
	}})
	defer end()

	files, err := p.turnFiles(spec, secret)
	defer files.remove()
	if err != nil {
		return agent.Response{}, err
	}
	command := p.cfg.Command
	if command == "" {
		command = "claude"
	}
	env := Environ(p.cfg.Environ(), p.cfg.Home, spec.tz, p.cfg.OAuthToken)
	for k, v := range p.cfg.extraEnv {
		env = append(env, k+"="+v)
	}
	if !strings.Contains(command, "/") {
		path, err := lookPath(command, env)
		if err != nil {
			return agent.Response{}, ErrCLIMissing
		}
		command = path
	}
	runCtx, kill := context.WithCancelCause(ctx)
	defer kill(nil)
	cmd := exec.CommandContext(runCtx, command, p.args(spec, files)...)
	processContext(env, p.cfg.Workspace).ApplyTo(cmd)
	procgroup.Set(cmd)
	cmd.WaitDelay = 5 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return agent.Response{}, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return agent.Response{}, err
	}
	var stderr limitedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return agent.Response{}, ErrCLIMissing
		}
		return agent.Response{}, fmt.Errorf("claudecode: start claude: %w", err)
	}
	go func() {
		_ = json.NewEncoder(stdin).Encode(userLine(spec.prompt))
		stdin.Close()
	}()

	expected := make([]string, 0, len(spec.req.Tools))
	for _, tool := range spec.req.Tools {
		expected = append(expected, toolPrefix+tool.Name)
	}
	var res *event
	// windows are the plan's usage windows claude reported in this turn,
	// for the usage log.
	var windows []RateLimit
	var assistantErr string
	checked := false
	abort := func(reason string) (agent.Response, error) {
		p.logger.Error("claudecode: claude's start fails the checks; the turn is aborted", "reason", reason)
		kill(ErrUnsafeInit)
		t.abort()
		_ = cmd.Wait()
		return agent.Response{}, fmt.Errorf("%w: %s", ErrUnsafeInit, reason)
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), maxLineBytes)
	for sc.Scan() {
		var ev event
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		switch {
		case ev.Type == "system" && ev.Subtype == "init":
			if reason := checkInit(ev, expected, spec.persist); reason != "" {
				return abort(reason)
			}
			checked = true
			t.initDone()
			continue
		case checked:
		case ev.Type == "stream_event", ev.Type == "assistant", ev.Type == "user", ev.Type == "result" && !ev.IsError:
			// Nothing of the model's may pass before the init event
			// was checked.
			return abort("claude answered without an init event")
		}
		switch ev.Type {
		case "stream_event":
			if ev.Event != nil && ev.Event.Type == "content_block_delta" && ev.Event.Delta != nil && ev.Event.Delta.Type == "text_delta" {
				t.text(ev.Event.Delta.Text)
			}
		case "assistant":
			if ev.Error != "" {
				assistantErr = ev.Error
			}
			if ev.Message != nil {
				for _, b := range ev.Message.Content {
					if b.Type == "tool_use" && strings.HasPrefix(b.Name, toolPrefix) {
						t.announce(b.ID, b.Name)
					}
				}
			}
		case "rate_limit_event":
			if ev.RateLimit != nil {
				p.rateLimit(*ev.RateLimit)
				windows = append(windows, *ev.RateLimit)
			}
		case "result":
			r := ev
			res = &r
		}
	}
	scanErr := sc.Err()
	if scanErr != nil {
		kill(scanErr)
	}
	waitErr := cmd.Wait()
	t.abort()
	if cause := context.Cause(ctx); cause != nil {
		if errors.Is(cause, ErrTurnTimeout) {
			return agent.Response{}, ErrTurnTimeout
		}
		return agent.Response{}, ctx.Err()
	}
	if res == nil {
		return agent.Response{}, p.failure(stderr.String(), waitErr, scanErr)
	}
	if res.IsError || res.Subtype != "success" {
		return agent.Response{}, p.resultError(*res, assistantErr, stderr.String())
	}
	resp := agent.Response{Text: t.rest(), FinishReason: "stop"}
	if !t.streamed() && res.Result != "" {
		resp.Text = res.Result
		onText(res.Result)
	}
	if u := res.Usage; u != nil {
		prompt := u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
		resp.Usage = agent.Usage{PromptTokens: prompt, CompletionTokens: u.OutputTokens,
			TotalTokens: prompt + u.OutputTokens, CachedTokens: u.CacheReadInputTokens, CostUSD: res.TotalCostUSD}
	}
	resp.Usage.Windows = planWindows(windows)
	return resp, nil
}

// failure names a run that ended without a result, by what claude's stderr
// says; the stderr itself is never shown.
func (p *Provider) failure(stderr string, waitErr, scanErr error) error {
	switch {
	case strings.Contains(stderr, "No conversation found"):
		return errNoConversation
	case strings.Contains(stderr, "is already in use"):
		return errSessionInUse
	case strings.Contains(stderr, "unknown option"):
		return ErrCLITooOld
	case strings.Contains(stderr, "Not logged in"), strings.Contains(stderr, "/login"):
		return ErrNotLoggedIn
	}
	p.logger.Warn("claudecode: claude ended without an answer", "err", waitErr, "read_err", scanErr, "stderr_bytes", len(stderr))
	if waitErr != nil {
		return fmt.Errorf("claudecode: claude ended without an answer: %w", waitErr)
	}
	return errors.New("claudecode: claude ended without an answer")
}

// resultError names a result that reports an error.
func (p *Provider) resultError(res event, assistantErr, stderr string) error {
	switch {
	case res.Subtype == "error_during_execution" && res.NumTurns == 0 && strings.Contains(stderr, "No conversation found"):
		return errNoConversation
	case assistantErr == "authentication_failed", assistantErr == "oauth_org_not_allowed":
		return ErrNotLoggedIn
	case assistantErr == "rate_limit", assistantErr == "billing_error":
		e := &PlanLimitError{}
		for _, r := range p.RateLimits() {
			if r.Status == "rejected" && r.Resets().After(e.Resets) {
				e.Resets, e.Window = r.Resets(), r.Type
			}
		}
		return e
	}
	p.logger.Warn("claudecode: claude's turn failed", "subtype", res.Subtype, "error", assistantErr)
	if res.Subtype == "success" && res.Result != "" {
		return fmt.Errorf("claudecode: the model's turn failed: %s", truncate(res.Result, 300))
	}
	return fmt.Errorf("claudecode: claude's turn failed (%s)", res.Subtype)
}

// checkInit returns why init fails the checks, or "".
func checkInit(ev event, expected []string, withBridge bool) string {
	if ev.APIKeySource != "none" {
		return fmt.Sprintf("claude uses an API key (apiKeySource %q), not the plan's login", ev.APIKeySource)
	}
	got := slices.Sorted(slices.Values(ev.Tools))
	want := slices.Sorted(slices.Values(expected))
	if !slices.Equal(got, want) {
		var extra []string
		for _, name := range got {
			if !slices.Contains(want, name) {
				extra = append(extra, name)
			}
		}
		if len(extra) > 0 {
			return "claude offers tools that are not the bridge's: " + strings.Join(extra, ", ")
		}
		return "claude does not offer every bridge tool"
	}
	if !withBridge {
		if len(ev.MCPServers) != 0 {
			return "claude connected MCP servers to a summary"
		}
		return ""
	}
	if len(ev.MCPServers) != 1 || ev.MCPServers[0].Name != ServerName || ev.MCPServers[0].Status != "connected" {
		return "the bridge is not claude's one connected MCP server"
	}
	return ""
}

// userLine is the stream-json input line of one user message.
func userLine(content []agent.Content) any {
	type source struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
	}
	type part struct {
		Type   string  `json:"type"`
		Text   string  `json:"text,omitempty"`
		Source *source `json:"source,omitempty"`
	}
	parts := []part{}
	for _, c := range content {
		switch c.Type {
		case agent.ImageContent:
			parts = append(parts, part{Type: "image", Source: &source{Type: "base64", MediaType: c.MIMEType, Data: base64.StdEncoding.EncodeToString(c.Data)}})
		default:
			parts = append(parts, part{Type: "text", Text: c.Text})
		}
	}
	return map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": parts}}
}

// turnFiles are a run's MCP config and system prompt files.
type turnFiles struct {
	mcp, system string
}

func (f turnFiles) remove() {
	for _, path := range []string{f.mcp, f.system} {
		if path != "" {
			_ = os.Remove(path)
		}
	}
}

// turnFiles writes the run's files (mode 0600, in the provider home).
func (p *Provider) turnFiles(spec turnSpec, secret string) (turnFiles, error) {
	var files turnFiles
	id := secret[:16]
	cfg := mcpConfig{MCPServers: map[string]mcpServer{}}
	if spec.persist {
		files.mcp = filepath.Join(p.cfg.Home, "mcp-"+id+".json")
		cfg.Bridge = &bridgeSection{Socket: p.cfg.Socket, Secret: secret}
		cfg.MCPServers[ServerName] = mcpServer{Type: "stdio", Command: p.cfg.Bridge[0],
			Args: append(slices.Clone(p.cfg.Bridge[1:]), files.mcp), Env: map[string]string{}}
	} else {
		files.mcp = filepath.Join(p.cfg.Home, "mcp-"+id+"-none.json")
	}
	data, err := json.Marshal(cfg)
	if err != nil {
		return files, err
	}
	if err := writePrivate(files.mcp, data); err != nil {
		return files, err
	}
	if spec.req.System != "" {
		files.system = filepath.Join(p.cfg.Home, "system-"+id+".md")
		if err := writePrivate(files.system, []byte(spec.req.System)); err != nil {
			return files, err
		}
	}
	return files, nil
}

// writePrivate creates path with mode 0600 and writes data.
func writePrivate(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("claudecode: %w", err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("claudecode: %w", err)
	}
	return nil
}

// args are claude's arguments for spec (see the package doc for why each).
func (p *Provider) args(spec turnSpec, files turnFiles) []string {
	args := []string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
		"--include-partial-messages",
		"--strict-mcp-config", "--mcp-config", files.mcp,
		"--tools", "",
		"--permission-mode", "dontAsk",
		"--setting-sources", "",
		"--disable-slash-commands",
	}
	if len(spec.req.Tools) > 0 && spec.persist {
		names := make([]string, len(spec.req.Tools))
		for i, tool := range spec.req.Tools {
			names[i] = toolPrefix + tool.Name
		}
		args = append(args, "--allowedTools", strings.Join(names, ","))
	}
	switch {
	case !spec.persist:
		args = append(args, "--no-session-persistence")
	case spec.resume:
		args = append(args, "--resume", spec.session.UUID)
	default:
		args = append(args, "--session-id", spec.session.UUID)
	}
	if spec.req.Model != "" {
		args = append(args, "--model", spec.req.Model)
	}
	if files.system != "" {
		args = append(args, "--append-system-prompt-file", files.system)
	}
	return args
}

// lookPath finds command in env's PATH.
func lookPath(command string, env []string) (string, error) {
	for _, kv := range env {
		if dirs, ok := strings.CutPrefix(kv, "PATH="); ok {
			for _, dir := range filepath.SplitList(dirs) {
				path := filepath.Join(dir, command)
				if fi, err := os.Stat(path); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
					return path, nil
				}
			}
		}
	}
	return "", exec.ErrNotFound
}

// limitedBuffer keeps the first maxStderrBytes written to it.
type limitedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := maxStderrBytes - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (b *limitedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// truncate shortens s to at most n bytes, at a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
