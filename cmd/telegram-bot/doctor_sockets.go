package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// socketDialTimeout bounds each connect of the socket check: a local
// socket answers at once, accepting or refusing.
const socketDialTimeout = 250 * time.Millisecond

// What to do about a reachable socket: a container engine's socket is
// root on the host, handed to the bot by a mount or a group; the others
// belong to a login session of the bot's user.
const (
	fixEngine  = "do not mount it into the bot's container, and keep the bot's user out of the group that owns it"
	fixSession = "run the bot as a user of its own, without a login session"
)

// socketPlace is where the socket check looks, and what a socket found
// there gives a process that connects to it.
type socketPlace struct {
	// pattern is a path or a filepath.Glob pattern.
	pattern string
	// gives says what a connection gives the agent.
	gives string
	// fix says how the operator takes it away.
	fix string
}

// reachableSocket is a socket the check connected to.
type reachableSocket struct {
	path, gives, fix string
}

// hostSocketPlaces returns the well-known places of the sockets that give
// a process more than the sandbox does, for a bot running as uid with the
// environment environ (of which it reads SSH_AUTH_SOCK, XDG_RUNTIME_DIR and
// HOME). The more specific places come first, so that a socket found twice
// is described by the first.
//
// The D-Bus system bus (/run/dbus/system_bus_socket) is left out on
// purpose: every user of every systemd host may connect to it, and its
// policy and polkit give an unprivileged caller outside an active session
// nothing the sandbox withholds. What polkit grants an active session's
// processes (a reboot, mounting media) comes with that session, whose
// own bus and user manager this check reports already; a warning on every
// host would teach operators to ignore this one.
func hostSocketPlaces(uid int, environ map[string]string) []socketPlace {
	runUser := "/run/user/" + strconv.Itoa(uid)
	places := []socketPlace{
		{"/var/run/docker.sock", "the Docker API, root on the host", fixEngine},
		{"/run/docker.sock", "the Docker API, root on the host", fixEngine},
		{"/run/containerd/containerd.sock", "containerd's API, root on the host", fixEngine},
		{"/run/podman/podman.sock", "the Podman API as root, root on the host", fixEngine},
		{runUser + "/podman/podman.sock", "the rootless Podman API: containers of the bot's user, outside the sandbox", fixSession},
		{runUser + "/docker.sock", "a rootless Docker API: containers of the bot's user, outside the sandbox", fixSession},
		{runUser + "/bus", "the D-Bus session bus: services that start programs outside the sandbox", fixSession},
		{runUser + "/systemd/private", "the systemd user manager: systemd-run --user starts a process outside the sandbox", fixSession},
		{runUser + "/gnupg/S.gpg-agent*", "a gpg-agent: signs and decrypts with the user's keys", fixSession},
	}
	if home := environ["HOME"]; filepath.IsAbs(home) {
		places = append(places, socketPlace{escapeGlob(home) + "/.gnupg/S.gpg-agent*", "a gpg-agent: signs and decrypts with the user's keys", fixSession})
	}
	if sock := environ["SSH_AUTH_SOCK"]; filepath.IsAbs(sock) {
		places = append(places, socketPlace{escapeGlob(sock), "the ssh-agent of SSH_AUTH_SOCK: logs in and signs with the user's SSH keys", fixSession})
	}
	places = append(places,
		socketPlace{"/tmp/ssh-*/agent.*", "an ssh-agent: logs in and signs with its user's SSH keys", fixSession},
		socketPlace{"/tmp/.X11-unix/X*", "an X server: reads the keyboard and the screen of its display, and types into its windows", fixSession},
	)
	// The rest of the session's runtime directory, three levels deep
	// (gpg-agent with its own home directory puts its sockets in
	// gnupg/d.<hash>/).
	dirs := []string{runUser}
	if x := environ["XDG_RUNTIME_DIR"]; filepath.IsAbs(x) && filepath.Clean(x) != runUser {
		dirs = append([]string{filepath.Clean(x)}, dirs...)
	}
	for _, dir := range dirs {
		pattern := escapeGlob(dir)
		for range 3 {
			pattern += "/*"
			places = append(places, socketPlace{pattern, "a socket of the user's session (" + dir + ")", fixSession})
		}
	}
	return places
}

// escapeGlob quotes the characters filepath.Match treats as special, so
// that a path from the environment matches only itself.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// findReachableSockets returns, in the order of places, the stream
// sockets at places this process connects to. A connection is opened and
// closed at once: nothing is read or written. A socket that refuses (its
// listener is gone), that the process may not connect to, a file that is
// not a socket, and a path named twice (through a symbolic link such as
// /var/run) are left out.
func findReachableSockets(ctx context.Context, places []socketPlace) []reachableSocket {
	var found []reachableSocket
	seen := make(map[string]bool)
	dialer := net.Dialer{Timeout: socketDialTimeout}
	for _, p := range places {
		// Glob fails only on a malformed pattern, which escapeGlob
		// rules out; a directory it cannot read it skips.
		matches, _ := filepath.Glob(p.pattern)
		for _, path := range matches {
			key := path
			if resolved, err := filepath.EvalSymlinks(path); err == nil {
				key = resolved
			}
			if seen[key] {
				continue
			}
			seen[key] = true
			if info, err := os.Stat(path); err != nil || info.Mode()&os.ModeSocket == 0 {
				continue
			}
			conn, err := dialer.DialContext(ctx, "unix", path)
			if err != nil {
				continue
			}
			conn.Close()
			found = append(found, reachableSocket{path: path, gives: p.gives, fix: p.fix})
		}
	}
	return found
}

// doctorSockets reports each socket at places that this process, and so
// every agent process, can connect to: Landlock (up to ABI 7 at least)
// does not govern connect(2) to a named Unix socket, so the sandbox does
// not keep the agent from it (docs/security.md, "Unix sockets by path").
func doctorSockets(ctx context.Context, r *report, places []socketPlace) {
	r.line("\nUnix sockets agent processes can connect to")
	found := findReachableSockets(ctx, places)
	if len(found) == 0 {
		r.line("  none reachable (the container engines' sockets, the user session's, ssh-agents, X servers)")
		return
	}
	r.line("  the sandbox does not govern connecting to a named Unix socket: agent processes reach every socket the bot's user can")
	for _, s := range found {
		r.warn("%s is open to the agent (%s): %s", s.path, s.gives, s.fix)
	}
}

// socketsWarning returns the start-up warning that names the sockets in
// found, or "" when there is none.
func socketsWarning(found []reachableSocket) string {
	if len(found) == 0 {
		return ""
	}
	names := make([]string, len(found))
	for i, s := range found {
		names[i] = fmt.Sprintf("%s (%s)", s.path, s.gives)
	}
	return "agent processes can connect to these Unix sockets, which the sandbox does not govern: " + strings.Join(names, "; ") +
		"; run the bot as a user of its own, without a login session, and do not mount the Docker socket into its container (telegram-bot doctor says more)"
}
