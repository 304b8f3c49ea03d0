package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// agentSandbox is the sandbox the bot runs with: the launcher every agent
// process starts through and the view the file tools get (both nil when
// the sandbox is off), and the start-up line that says so.
type agentSandbox struct {
	launcher *sandbox.Launcher
	view     *sandbox.View
	abi      int
	// line is logged at Info, or at Warn when warn is set.
	line string
	warn bool
}

// setupSandbox builds the agent sandbox from cfg. environ is what agent
// processes inherit from (its PATH finds the Node, Python and Go prefixes).
// With AGENT_SANDBOX=required, a kernel without Landlock is an error; with
// auto, the sandbox is off and the line is a warning. A view that cannot
// hide AGENT_DIR, the MCP configuration file or the bot's home is an error.
// The launcher gets opts (sandbox.WithWarm for the running bot, which
// must Close it).
func setupSandbox(cfg Config, environ map[string]string, opts ...sandbox.Option) (agentSandbox, error) {
	return buildSandbox(cfg, environ, sandbox.ABI, opts...)
}

// buildSandbox is setupSandbox with the kernel's Landlock ABI from abi.
func buildSandbox(cfg Config, environ map[string]string, abiOf func() int, opts ...sandbox.Option) (agentSandbox, error) {
	if cfg.Sandbox.Mode == sandbox.Off {
		return agentSandbox{line: "Agent sandbox: off (AGENT_SANDBOX=off): agent processes and the file tools see what the bot's user sees"}, nil
	}
	abi := abiOf()
	if abi == 0 {
		const missing = "the kernel offers no Landlock (Linux 5.13 or later with landlock in its lsm= list, and a seccomp profile that allows the landlock_* calls)"
		if cfg.Sandbox.Mode == sandbox.Required {
			return agentSandbox{}, fmt.Errorf("AGENT_SANDBOX=required but %s", missing)
		}
		return agentSandbox{line: "Agent sandbox: not available: " + missing + "; agent processes and the file tools run unconfined (AGENT_SANDBOX=required refuses to start instead)", warn: true}, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return agentSandbox{}, fmt.Errorf("agent sandbox: find the bot's own binary: %w", err)
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	temp, err := sandboxTempDir(os.TempDir())
	if err != nil {
		return agentSandbox{}, err
	}
	view := sandbox.View{
		Workspace: cfg.WorkspaceDir,
		Temp:      temp,
		System:    sandbox.SystemDirs(pathLookup(environ["PATH"])),
		Extra:     sandbox.Paths{Read: cfg.Sandbox.Read, Write: cfg.Sandbox.Write},
	}
	hidden := map[string]string{"AGENT_DIR": cfg.AgentDir}
	if cfg.MCPConfig != "" && !strings.HasPrefix(strings.TrimSpace(cfg.MCPConfig), "{") {
		hidden["MCP_CONFIG"] = cfg.MCPConfig
	}
	if home, err := os.UserHomeDir(); err == nil && home != "/" && filepath.Clean(home) != cfg.WorkspaceDir {
		hidden["the bot's home"] = home
	}
	view, err = view.Hide(hidden)
	if err != nil {
		return agentSandbox{}, err
	}
	launcher, err := sandbox.NewLauncher(exe, view, opts...)
	if err != nil {
		return agentSandbox{}, err
	}
	return agentSandbox{
		launcher: launcher,
		view:     &view,
		abi:      abi,
		line:     fmt.Sprintf("Agent sandbox: landlock ABI %d, %s, view: %s", abi, sandbox.Seccomp(), view.Summary()),
	}, nil
}

// sandboxTempDir returns the sandboxed processes' temporary directory,
// <base>/telegram-agent-<uid>, made private to the bot's user. One that
// exists must be a directory (not a link) the user owns and nobody else
// may write: another user could otherwise plant it.
func sandboxTempDir(base string) (string, error) {
	dir := filepath.Join(base, "telegram-agent-"+strconv.Itoa(os.Geteuid()))
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("agent sandbox: make the temporary directory %s: %w", dir, err)
	}
	info, err := os.Lstat(dir)
	if err != nil {
		return "", fmt.Errorf("agent sandbox: temporary directory: %w", err)
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !info.IsDir() || !ok || int(st.Uid) != os.Geteuid() || info.Mode().Perm()&0o022 != 0 {
		return "", fmt.Errorf("agent sandbox: the temporary directory %s is not a directory of the bot's user that only it may write", dir)
	}
	return dir, nil
}

// pathLookup finds an executable on path (a PATH value) the way the
// agent's processes would.
func pathLookup(path string) func(string) (string, error) {
	return func(name string) (string, error) {
		for _, dir := range filepath.SplitList(path) {
			if dir == "" || !filepath.IsAbs(dir) {
				continue
			}
			p := filepath.Join(dir, name)
			if info, err := os.Stat(p); err == nil && !info.IsDir() && info.Mode()&0o111 != 0 {
				return p, nil
			}
		}
		return "", exec.ErrNotFound
	}
}

// agentWritable returns every directory the agent's processes may write:
// the workspace first, then those of writable.
func (b agentSandbox) agentWritable(cfg Config) []string {
	return append([]string{cfg.WorkspaceDir}, b.writable(cfg)...)
}

// writable returns the directories besides the workspace that the file
// tools may write without the approvals asking: the view's temporary
// directory and AGENT_SANDBOX_WRITE (without a sandbox, the latter alone).
func (b agentSandbox) writable(cfg Config) []string {
	if b.view == nil {
		return cfg.Sandbox.Write
	}
	return append([]string{b.view.Temp}, b.view.Extra.Write...)
}
