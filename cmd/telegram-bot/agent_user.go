package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// AgentUserConfig is AGENT_UID, AGENT_GID and AGENT_ALLOW_ROOT: the ids
// agent processes run as where the bot can give them ids of their own,
// and whether a bot started as root that has no user to become may stay
// root.
type AgentUserConfig struct {
	IDs       sandbox.IDs
	AllowRoot bool
}

// defaultAgentID is AGENT_UID's and AGENT_GID's default: far above the
// ids distributions hand out to users and system accounts.
const defaultAgentID = 64000

// parseAgentUser checks AGENT_UID, AGENT_GID and AGENT_ALLOW_ROOT. Blank
// ones are the defaults: 64000, 64000 and off.
func parseAgentUser(e Env) (AgentUserConfig, error) {
	var errs []error
	var c AgentUserConfig
	for _, v := range []struct {
		name, raw string
		dst       *int
	}{{"AGENT_UID", e.AgentUID, &c.IDs.UID}, {"AGENT_GID", e.AgentGID, &c.IDs.GID}} {
		raw := strings.TrimSpace(v.raw)
		if raw == "" {
			*v.dst = defaultAgentID
			continue
		}
		n, err := strconv.Atoi(raw)
		if err != nil || n <= 0 || n >= 1<<31 {
			errs = append(errs, fmt.Errorf("%s must be a number above 0 (root's) and below 2^31", v.name))
			continue
		}
		*v.dst = n
	}
	on, ok := false, true
	if strings.TrimSpace(e.AgentAllowRoot) != "" {
		on, ok = parseSwitch(e.AgentAllowRoot)
	}
	if !ok {
		errs = append(errs, errors.New("AGENT_ALLOW_ROOT must be 1 or 0"))
	}
	c.AllowRoot = on
	return c, errors.Join(errs...)
}

// agentUser is what the bot's start did about its own uid and the agent's:
// the spawner that starts the agent's launchers (nil when agent processes
// run as the bot's uid), and the start-up lines that say so.
type agentUser struct {
	spawner *sandbox.Spawner
	info    []string
	warn    []string
}

// close ends the spawner, if any.
func (u agentUser) close() {
	if u.spawner != nil {
		u.spawner.Close()
	}
}

// becomeBotUser gives agent processes a uid of their own where the bot can,
// and the bot an unprivileged one, before anything reads a byte of
// Telegram's or of the agent's state. Started as root, the bot becomes the
// owner of AGENT_DIR (refusing to stay root unless AGENT_ALLOW_ROOT=1);
// started as root or with CAP_SETUID and CAP_SETGID, it first gives the
// workspace to AGENT_UID:AGENT_GID and starts the spawner, which alone
// keeps those two capabilities, then gives up its own. Without the
// sandbox (AGENT_SANDBOX=off, or no Landlock) there is no launcher to
// start as the agent's ids: the bot still gives up root. hardened says
// whether the bot hardens itself: a change of uid makes it dumpable again
// where fs.suid_dumpable says so, which is undone.
func becomeBotUser(cfg Config, hardened bool) (agentUser, error) {
	sandboxed := cfg.Sandbox.Mode != sandbox.Off && sandbox.ABI() > 0
	var u agentUser
	var err error
	switch {
	case os.Geteuid() == 0:
		u, err = fromRoot(cfg, sandboxed)
	case holdsSetid():
		u, err = fromCapabilities(cfg, sandboxed)
	default:
		u.info = append(u.info, fmt.Sprintf("Agent uid: agent processes run as the bot's own uid %d (started as root or with CAP_SETUID and CAP_SETGID, the bot would run them as AGENT_UID %d)", os.Getuid(), cfg.AgentUser.IDs.UID))
	}
	if err == nil && hardened {
		if perr := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); perr != nil {
			err = fmt.Errorf("make the bot non-dumpable again after the change of uid: %w", perr)
		}
	}
	if err != nil {
		u.close()
		return agentUser{}, err
	}
	return u, nil
}

// fromRoot is becomeBotUser for a bot started as root.
func fromRoot(cfg Config, sandboxed bool) (agentUser, error) {
	agent := cfg.AgentUser.IDs
	bot, err := stateOwner(cfg.AgentDir)
	if err != nil {
		if !cfg.AgentUser.AllowRoot {
			return agentUser{}, fmt.Errorf("the bot runs as root and has no user to become: %w; chown AGENT_DIR to the user the bot should run as (the image's is 10001), or set AGENT_ALLOW_ROOT=1 to run as root, agent processes too", err)
		}
		return agentUser{warn: []string{"Agent uid: the bot runs as root (AGENT_ALLOW_ROOT=1), and so do agent processes: root reads every process's environment, and only the sandbox stands between them and the bot's secrets and state"}}, nil
	}
	if bot.UID == agent.UID || bot.GID == agent.GID {
		return agentUser{}, fmt.Errorf("AGENT_UID and AGENT_GID (%s) must differ from the bot's ids (%s, the owner of AGENT_DIR)", agent, bot)
	}
	var u agentUser
	groups := []int{}
	if err := ownTree(cfg.AgentDir, mcpServerHome(cfg), bot); err != nil {
		return agentUser{}, fmt.Errorf("agent uid: give AGENT_DIR to the bot's ids %s: %w", bot, err)
	}
	if sandboxed {
		if err := prepareAgentDirs(cfg, agent, true); err != nil {
			return agentUser{}, err
		}
		if u.spawner, err = startSpawner(bot, agent); err != nil {
			return agentUser{}, err
		}
		// The bot's file tools write the workspace the agent owns: as a
		// member of the agent's group, with group-writable modes.
		groups = []int{agent.GID}
		syscall.Umask(0o002)
		u.info = append(u.info, fmt.Sprintf("Agent uid: the bot runs as %s (the owner of AGENT_DIR), agent processes as %s (AGENT_UID, AGENT_GID), started by a spawner (pid %d) that keeps CAP_SETUID and CAP_SETGID alone", bot, agent, u.spawner.Pid()))
	} else {
		u.warn = append(u.warn, fmt.Sprintf("Agent uid: the bot runs as %s (the owner of AGENT_DIR); without the sandbox agent processes run as that uid too", bot))
	}
	if err := dropRoot(bot, groups); err != nil {
		u.close()
		return agentUser{}, err
	}
	return u, nil
}

// fromCapabilities is becomeBotUser for a bot that is not root but holds
// CAP_SETUID and CAP_SETGID: it keeps its uid and gives up the
// capabilities once the spawner has them.
func fromCapabilities(cfg Config, sandboxed bool) (agentUser, error) {
	agent := cfg.AgentUser.IDs
	bot := sandbox.IDs{UID: os.Getuid(), GID: os.Getgid()}
	if bot.UID == agent.UID || bot.GID == agent.GID {
		return agentUser{}, fmt.Errorf("AGENT_UID and AGENT_GID (%s) must differ from the bot's ids (%s)", agent, bot)
	}
	var u agentUser
	if sandboxed {
		// The bot joins the agent's group first: without CAP_CHOWN it can
		// give the workspace to the agent's group only.
		if err := syscall.Setgroups([]int{agent.GID}); err != nil {
			return agentUser{}, fmt.Errorf("join the agent's group %d: %w", agent.GID, err)
		}
		if err := prepareAgentDirs(cfg, agent, false); err != nil {
			return agentUser{}, err
		}
		var err error
		if u.spawner, err = startSpawner(bot, agent); err != nil {
			return agentUser{}, err
		}
		syscall.Umask(0o002)
		u.info = append(u.info, fmt.Sprintf("Agent uid: the bot runs as %s, agent processes as %s (AGENT_UID, AGENT_GID), started by a spawner (pid %d) that keeps CAP_SETUID and CAP_SETGID alone; the workspace is shared through the agent's group", bot, agent, u.spawner.Pid()))
	}
	if err := dropCapabilities(); err != nil {
		u.close()
		return agentUser{}, err
	}
	return u, nil
}

// startSpawner starts the spawner of the bot's own binary.
func startSpawner(bot, agent sandbox.IDs) (*sandbox.Spawner, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("agent uid: find the bot's own binary: %w", err)
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	return sandbox.StartSpawner(exe, bot, agent)
}

// stateOwner returns the ids of AGENT_DIR's owner, the user a bot started
// as root becomes; an error when it is missing or root's.
func stateOwner(dir string) (sandbox.IDs, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return sandbox.IDs{}, fmt.Errorf("AGENT_DIR (%s) does not exist", dir)
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !info.IsDir() || !ok {
		return sandbox.IDs{}, fmt.Errorf("AGENT_DIR (%s) is not a directory", dir)
	}
	if st.Uid == 0 || st.Gid == 0 {
		return sandbox.IDs{}, fmt.Errorf("AGENT_DIR (%s) belongs to root", dir)
	}
	return sandbox.IDs{UID: int(st.Uid), GID: int(st.Gid)}, nil
}

// prepareAgentDirs gives the agent what it writes, before the bot gives up
// its privileges: the workspace (and the MCP servers' home in AGENT_DIR)
// to agent, or, without CAP_CHOWN (chown false), to its group alone, and
// a temporary directory of its own. AGENT_DIR itself is the bot's and
// 0711: the MCP servers reach their home below it, nobody else lists,
// watches or changes it.
func prepareAgentDirs(cfg Config, agent sandbox.IDs, chown bool) error {
	if err := os.MkdirAll(cfg.AgentDir, 0o711); err != nil {
		return fmt.Errorf("agent uid: %w", err)
	}
	if err := os.Chmod(cfg.AgentDir, 0o711); err != nil {
		return fmt.Errorf("agent uid: %w", err)
	}
	for _, dir := range []string{cfg.WorkspaceDir, mcpServerHome(cfg)} {
		if err := os.MkdirAll(dir, 0o2775); err != nil {
			return fmt.Errorf("agent uid: %w", err)
		}
		uid := -1
		if chown {
			uid = agent.UID
		}
		if err := giveTree(dir, uid, agent); err != nil {
			return fmt.Errorf("agent uid: give %s to the agent's ids %s: %w", dir, agent, err)
		}
	}
	if err := setOwnerNoFollow(mcpServerHome(cfg), -1, agent.GID, 0o2770); err != nil {
		return fmt.Errorf("agent uid: %w", err)
	}
	_, err := agentTempDir(os.TempDir(), agent, chown)
	return err
}

// agentTempDir makes the agent's temporary directory,
// <base>/telegram-agent-<AGENT_UID>: the agent's (or the bot's, without
// chown), in the agent's group, 2770. One that exists must be a directory,
// not a link, of the agent's or the bot's.
func agentTempDir(base string, agent sandbox.IDs, chown bool) (string, error) {
	dir := filepath.Join(base, "telegram-agent-"+strconv.Itoa(agent.UID))
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("agent uid: make the temporary directory %s: %w", dir, err)
	}
	if _, err := checkAgentTempDir(base, agent, false); err != nil {
		return "", err
	}
	owner := -1
	if chown {
		owner = agent.UID
	} else if info, err := os.Lstat(dir); err == nil && int(info.Sys().(*syscall.Stat_t).Uid) != os.Geteuid() {
		// The agent's from a start as root: without CAP_CHOWN and
		// CAP_FOWNER it stays as it is, and checkAgentTempDir judges it.
		return checkAgentTempDir(base, agent, true)
	}
	if err := setOwnerNoFollow(dir, owner, agent.GID, 0o2770); err != nil {
		return "", fmt.Errorf("agent uid: temporary directory: %w", err)
	}
	return dir, nil
}

// checkAgentTempDir returns the agent's temporary directory once it is a
// directory (not a link) of the agent's or the bot's; made (made true), it
// must be the agent group's and closed to others.
func checkAgentTempDir(base string, agent sandbox.IDs, made bool) (string, error) {
	dir := filepath.Join(base, "telegram-agent-"+strconv.Itoa(agent.UID))
	info, err := os.Lstat(dir)
	if err != nil {
		return "", fmt.Errorf("agent uid: temporary directory: %w", err)
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	switch {
	case !info.IsDir() || !ok || (int(st.Uid) != agent.UID && int(st.Uid) != os.Geteuid()):
		return "", fmt.Errorf("agent uid: the temporary directory %s is not a directory of the agent's or the bot's", dir)
	case made && (int(st.Gid) != agent.GID || info.Mode().Perm()&0o007 != 0):
		return "", fmt.Errorf("agent uid: the temporary directory %s is not the agent group's alone", dir)
	}
	return dir, nil
}

// dropRoot makes every thread of the bot bot's uid and gid, with groups as
// its supplementary groups; root's capabilities go with the uid. Go's
// syscall.Setuid and friends change every thread (by AllThreadsSyscall,
// or the C library's broadcast in a cgo build).
func dropRoot(bot sandbox.IDs, groups []int) error {
	if err := syscall.Setgroups(groups); err != nil {
		return fmt.Errorf("agent uid: setgroups: %w", err)
	}
	if err := syscall.Setresgid(bot.GID, bot.GID, bot.GID); err != nil {
		return fmt.Errorf("agent uid: become gid %d: %w", bot.GID, err)
	}
	if err := syscall.Setresuid(bot.UID, bot.UID, bot.UID); err != nil {
		return fmt.Errorf("agent uid: become uid %d: %w", bot.UID, err)
	}
	return checkUnprivileged(bot)
}

// dropCapabilities clears every capability of every thread of the bot:
// permitted, effective, inheritable and ambient. It needs
// AllThreadsSyscall, which a cgo build lacks: such a build refuses to
// start rather than keep the capabilities on some thread.
func dropCapabilities() error {
	if _, _, e := syscall.AllThreadsSyscall6(unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0, 0); e != 0 {
		return fmt.Errorf("agent uid: clear the bot's ambient capabilities (a binary built with cgo cannot; build with CGO_ENABLED=0): %w", e)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if _, _, e := syscall.AllThreadsSyscall(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return fmt.Errorf("agent uid: drop the bot's capabilities: %w", e)
	}
	return checkUnprivileged(sandbox.IDs{UID: os.Getuid(), GID: os.Getgid()})
}

// checkUnprivileged fails unless every thread of the bot runs as bot with
// no capability.
func checkUnprivileged(bot sandbox.IDs) error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return fmt.Errorf("agent uid: %w", err)
	}
	want := strings.TrimSpace(strings.Repeat(strconv.Itoa(bot.UID)+"\t", 4))
	for _, task := range tasks {
		data, err := os.ReadFile("/proc/self/task/" + task.Name() + "/status")
		if err != nil {
			continue // the thread ended
		}
		for _, line := range strings.Split(string(data), "\n") {
			k, v, _ := strings.Cut(line, ":")
			v = strings.TrimSpace(v)
			switch {
			case k == "Uid" && v != want:
				return fmt.Errorf("agent uid: thread %s runs as uid %s after the change", task.Name(), v)
			case (k == "CapPrm" || k == "CapEff" || k == "CapAmb") && strings.Trim(v, "0") != "":
				return fmt.Errorf("agent uid: thread %s keeps capabilities (%s %s)", task.Name(), k, v)
			}
		}
	}
	return nil
}

// holdsSetid reports whether the bot holds CAP_SETUID and CAP_SETGID in its
// permitted set.
func holdsSetid() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	want := uint32(1)<<unix.CAP_SETUID | uint32(1)<<unix.CAP_SETGID
	return data[0].Permitted&want == want
}

// doctorAgentUser says which uid the bot and its agent processes would run
// as, started as the doctor is: a bot started as root with no user to
// become is a problem, unless AGENT_ALLOW_ROOT=1 (then a warning).
func doctorAgentUser(r *report, cfg Config) {
	r.line("\nAgent uid (AGENT_UID=%d, AGENT_GID=%d)", cfg.AgentUser.IDs.UID, cfg.AgentUser.IDs.GID)
	sandboxed := cfg.Sandbox.Mode != sandbox.Off && sandbox.ABI() > 0
	agent := cfg.AgentUser.IDs.String()
	switch {
	case os.Geteuid() == 0:
		bot, err := stateOwner(cfg.AgentDir)
		switch {
		case err != nil && cfg.AgentUser.AllowRoot:
			r.warn("started as root, the bot stays root (AGENT_ALLOW_ROOT=1), and so do agent processes: %v", err)
		case err != nil:
			r.problem("started as root, the bot would refuse to start: %v; chown AGENT_DIR to the user the bot should run as, or set AGENT_ALLOW_ROOT=1", err)
		case bot.UID == cfg.AgentUser.IDs.UID || bot.GID == cfg.AgentUser.IDs.GID:
			r.problem("AGENT_UID and AGENT_GID (%s) must differ from the bot's ids (%s, the owner of AGENT_DIR)", agent, bot)
		case sandboxed:
			r.line("  ✔ started as root, the bot runs as %s (the owner of AGENT_DIR), agent processes as %s, started by a spawner that keeps CAP_SETUID and CAP_SETGID alone", bot, agent)
		default:
			r.warn("started as root, the bot runs as %s (the owner of AGENT_DIR); without the sandbox agent processes run as that uid too", bot)
		}
	case holdsSetid() && sandboxed:
		r.line("  ✔ the bot holds CAP_SETUID and CAP_SETGID: it keeps its uid %d, gives them to the spawner, and agent processes run as %s", os.Getuid(), agent)
	default:
		r.line("  agent processes run as the bot's own uid %d: the sandbox alone keeps them from the bot (start the bot as root, or with CAP_SETUID and CAP_SETGID, to give them AGENT_UID)", os.Getuid())
	}
}
