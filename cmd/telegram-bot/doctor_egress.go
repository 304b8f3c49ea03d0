package main

import (
	"context"
	"errors"
	"net"
	"os/exec"
	"strconv"
	"time"

	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// doctorEgressProbe proves AGENT_EGRESS's allow-list live: it builds the
// sandbox as the bot does, with agent processes' network confined to the
// proxy, and a child started as agent processes are (bash's /dev/tcp and
// /dev/udp, which ignore the proxy variables) tries a direct connection to
// a loopback port the doctor listens on and a UDP datagram to another;
// both must be refused, and the datagram must not arrive.
func doctorEgressProbe(ctx context.Context, r *report, cfg Config, environ func() map[string]string, cp credentialProxy) {
	enf, running := cp.Enforcement()
	box, line, warn, err := setupConfinedSandbox(cfg, environ(), enf, running)
	switch {
	case err != nil:
		r.problem("egress allow-list: %v", err)
		return
	case warn:
		r.warn("%s", line)
		box.close()
		return
	}
	defer box.close()
	r.line("  %s", line)
	bash, err := exec.LookPath("bash")
	if err != nil {
		r.warn("egress live probe skipped: no bash here (its /dev/tcp makes the direct connection)")
		return
	}
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		r.problem("egress live probe: %v", err)
		return
	}
	defer tcp.Close()
	go func() {
		for {
			c, err := tcp.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		r.problem("egress live probe: %v", err)
		return
	}
	defer udp.Close()
	opts := cfg.Policy
	opts.HardenHostProcess = false
	opts.Sandbox = box.launcher
	policy, err := spawnpolicy.New(opts, nil, environ)
	if err != nil {
		r.problem("egress live probe: %v", err)
		return
	}
	tcpPort := strconv.Itoa(tcp.Addr().(*net.TCPAddr).Port)
	udpPort := strconv.Itoa(udp.LocalAddr().(*net.UDPAddr).Port)
	script := `if (exec 3<>/dev/tcp/127.0.0.1/` + tcpPort + `) 2>/dev/null; then printf 'connected\0'; else printf 'refused\0'; fi
if (printf probe > /dev/udp/127.0.0.1/` + udpPort + `) 2>/dev/null; then printf 'sent\0'; else printf 'refused\0'; fi`
	got, err := runProbe(ctx, policy, bash, script)
	if err != nil || len(got) != 2 {
		r.problem("egress live probe: the child did not answer (%v)", err)
		return
	}
	r.line("  live probe (a sandboxed child that ignores the proxy):")
	check := func(what, answer string) {
		if answer == "refused" {
			r.line("    ✔ %s: refused", what)
			return
		}
		r.line("    ✘ %s: %s", what, answer)
		r.problems = append(r.problems, "egress allow-list: agent processes can make "+what)
	}
	check("a direct TCP connection to a loopback port", got[0])
	check("a UDP datagram", got[1])
	if udpArrived(udp) {
		r.line("    ✘ the datagram arrived")
		r.problems = append(r.problems, "egress allow-list: a UDP datagram of agent processes arrived")
	}
}

// udpArrived reports whether a datagram is waiting on c.
func udpArrived(c net.PacketConn) bool {
	if err := c.SetReadDeadline(time.Now().Add(100 * time.Millisecond)); err != nil {
		return false
	}
	_, _, err := c.ReadFrom(make([]byte, 16))
	var ne net.Error
	return err == nil || !(errors.As(err, &ne) && ne.Timeout())
}
