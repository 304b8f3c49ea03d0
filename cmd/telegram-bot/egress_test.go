package main

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/openaitest"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// TestBinaryEgressAllowlist runs the bot with AGENT_EGRESS=allowlist: where
// the kernel offers a tier, a bash call that ignores the proxy cannot
// connect to a loopback listener that is not the proxy, nor send a UDP
// datagram, while the proxy's port answers; where it offers none, the
// start-up line says the allow-list is not enforced, as a warning.
func TestBinaryEgressAllowlist(t *testing.T) {
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	go func() {
		for {
			c, err := other.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	otherPort := strconv.Itoa(other.Addr().(*net.TCPAddr).Port)
	udpPort := strconv.Itoa(udp.LocalAddr().(*net.UDPAddr).Port)
	command := `p=${HTTPS_PROXY##*:}; p=${p%/}
if (exec 3<>/dev/tcp/127.0.0.1/` + otherPort + `) 2>/dev/null; then echo direct=connected; else echo direct=refused; fi
if (echo leak > /dev/udp/127.0.0.1/` + udpPort + `) 2>/dev/null; then echo udp=sent; else echo udp=refused; fi
if (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then echo proxy=reached; else echo proxy=unreached; fi`
	tg := telegramtest.New(t)
	oa := openaitest.New(t, openaitest.WithScript(
		openaitest.ToolCalls(openaitest.ToolCall{Name: "bash", Arguments: `{"command":` + strconv.Quote(command) + `}`}),
		openaitest.Text("done"),
	))
	p := startBot(t, procEnv(tg, oa.URL(), t.TempDir(), t.TempDir(), "AGENT_EGRESS=allowlist"))
	line := p.waitLog("Egress allow-list:")
	t.Log(line)
	if strings.Contains(line, "not enforced") {
		if !strings.Contains(line, "WARN") {
			t.Errorf("an allow-list the kernel cannot enforce is not a warning: %s", line)
		}
		t.Skipf("the kernel offers no tier to confine agent processes' network here: %s", line)
	}
	tg.SendText(procUser, procUser, "try the network")
	waitMessage(t, tg, procUser, "done")
	// The tool's result, not the request that quotes the command.
	var result string
	for _, req := range oa.ChatRequests() {
		for _, m := range req.Messages {
			if m.Role == "tool" {
				result = m.Text()
			}
		}
	}
	for _, want := range []string{"direct=refused", "udp=refused", "proxy=reached"} {
		if !strings.Contains(result, want) {
			t.Errorf("the bash call's output lacks %s (start-up: %s):\n%s", want, line, result)
		}
	}
	// The datagram must not have arrived either.
	udp.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if n, _, err := udp.ReadFrom(make([]byte, 16)); err == nil {
		t.Errorf("a %d-byte datagram of the agent's arrived", n)
	}
}

// TestBinaryEgressRequiredRefusesUnenforced checks that AGENT_EGRESS=required
// with no way to enforce it (the sandbox off) refuses to start, naming why.
func TestBinaryEgressRequiredRefusesUnenforced(t *testing.T) {
	tg := telegramtest.New(t)
	oa := openaitest.New(t)
	p := startBot(t, procEnv(tg, oa.URL(), t.TempDir(), t.TempDir(), "AGENT_EGRESS=required", "AGENT_SANDBOX=off"))
	select {
	case <-p.exited:
	case <-time.After(20 * time.Second):
		t.Fatal("the bot started with AGENT_EGRESS=required and the sandbox off")
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 2 {
		t.Errorf("exit code %d, want 2", code)
	}
	if log := p.log(); !strings.Contains(log, "AGENT_EGRESS=required") || !strings.Contains(log, "sandbox is off") {
		t.Errorf("the log does not say why:\n%s", log)
	}
}
