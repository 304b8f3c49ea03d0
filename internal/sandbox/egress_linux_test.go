package sandbox_test

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/asusertest"
	"github.com/volcanic/telegram-agent/internal/procgroup"
	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// TestEgress confines a command's network to a stand-in for the egress
// proxy (a TCP listener on loopback), at each tier the kernel offers, and
// runs the egress probe as the unprivileged user: the proxy's port is
// reached, a direct connection to another loopback listener and a UDP
// datagram are refused, and the datagram never arrives; in a network
// namespace lo is the only interface. The control, the same view without
// the egress rule, reaches all three, so the refusals are the tier's.
func TestEgress(t *testing.T) {
	for _, tier := range []sandbox.EgressTier{sandbox.EgressLandlock, sandbox.EgressNamespace} {
		t.Run(tier.String(), func(t *testing.T) { testEgress(t, tier) })
	}
}

func testEgress(t *testing.T, tier sandbox.EgressTier) {
	l := newLayout(t, sandbox.Paths{})
	if got, err := sandbox.DetectEgress(l.launcher.Executable()); got < tier {
		t.Skipf("the kernel offers %v, not %v: %v", got, tier, err)
	}
	proxy, direct := listenTCP(t), listenTCP(t)
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { udp.Close() })
	port := uint16(proxy.Addr().(*net.TCPAddr).Port)
	confined, err := sandbox.NewLauncher(l.launcher.Executable(), l.launcher.View(), sandbox.WithEgress(sandbox.Egress{ProxyPort: port}), sandbox.WithEgressAtMost(tier))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := confined.Egress(); got != tier {
		t.Errorf("Egress() = %v, want %v", got, tier)
	}
	if got, _ := l.launcher.Egress(); got != sandbox.EgressNone {
		t.Errorf("a launcher without WithEgress: Egress() = %v, want %v", got, sandbox.EgressNone)
	}
	addrs := []string{proxy.Addr().String(), direct.Addr().String(), udp.LocalAddr().String()}
	tests := []struct {
		name     string
		launcher *sandbox.Launcher
		want     string
		arrives  bool
	}{
		{"confined to the proxy", confined, "proxy=ok direct=refused udp=refused", false},
		{"control: the sandbox without the egress rule", l.launcher, "proxy=ok direct=ok udp=ok", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(tt.launcher.Executable(), append([]string{"egress-probe"}, addrs...)...)
			cmd.Dir = l.workspace
			cmd.Env = []string{"PATH=" + testPATH}
			tt.launcher.Wrap(cmd, sandbox.Paths{Read: []string{filepath.Dir(tt.launcher.Executable())}})
			procgroup.Set(cmd)
			if asusertest.Needed() {
				asusertest.Drop(cmd)
			}
			cmd.Stderr = os.Stderr
			var out strings.Builder
			cmd.Stdout = &out
			if err := asusertest.Run(t, cmd); err != nil {
				t.Fatalf("the probe: %v", err)
			}
			got, interfaces, _ := strings.Cut(strings.TrimSpace(out.String()), "\n")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("probe (-want +got):\n%s", diff)
			}
			if tier == sandbox.EgressNamespace && tt.launcher == confined && interfaces != "interfaces=lo" {
				t.Errorf("in the network namespace the probe saw %q, want lo alone", interfaces)
			}
			if got := datagramArrived(t, udp); got != tt.arrives {
				t.Errorf("the datagram arrived: %v, want %v", got, tt.arrives)
			}
		})
	}
	// The command gets its own environment (and the view's TMPDIR) and
	// directory, whatever the stage ran with.
	cmd := exec.Command("/bin/bash", "-c", `echo "$PROBE_VAR $TMPDIR $PWD"`)
	cmd.Dir = l.workspace
	cmd.Env = []string{"PATH=" + testPATH, "PROBE_VAR=kept"}
	confined.Wrap(cmd, sandbox.Paths{})
	procgroup.Set(cmd)
	if asusertest.Needed() {
		asusertest.Drop(cmd)
	}
	out, err := asusertest.CombinedOutput(t, cmd)
	if want := "kept " + l.temp + " " + l.workspace; err != nil || strings.TrimSpace(string(out)) != want {
		t.Errorf("the confined command printed %q (%v), want %q", out, err, want)
	}
	// The process calls' filter holds at every tier: in the namespace the
	// stage sets it and hands its listener to the launcher.
	other := l.startFakeBot(t, fakeSecret(t), false)
	want := map[string]string{"zero": "allowed", "self": "allowed", "other": "refused"}
	if diff := cmp.Diff(want, l.probeWith(t, confined, "prlimit64", other)); diff != "" {
		t.Errorf("prlimit64 under the egress tier (-want +got):\n%s", diff)
	}
}

// listenTCP listens on a loopback port, writing the greeting to every
// connection and closing it, until the test ends.
func listenTCP(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte(greeting))
			c.Close()
		}
	}()
	return ln
}

// datagramArrived reads what reached udp: whether a datagram came.
func datagramArrived(t *testing.T, udp net.PacketConn) bool {
	t.Helper()
	if err := udp.SetReadDeadline(time.Now().Add(200 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	_, _, err := udp.ReadFrom(buf)
	return err == nil
}

// TestEgressWithoutPort: an egress proxy without a port is refused, never
// a launcher whose commands reach nothing or everything.
func TestEgressWithoutPort(t *testing.T) {
	if tier, err := sandbox.DetectEgress(""); tier == sandbox.EgressNone {
		t.Skipf("the kernel cannot confine the network: %v", err)
	}
	dir := t.TempDir()
	_, err := sandbox.NewLauncher(mustExecutable(t), sandbox.View{Workspace: dir, Temp: dir}, sandbox.WithEgress(sandbox.Egress{}))
	if err == nil || !strings.Contains(err.Error(), "no port") {
		t.Errorf("NewLauncher with an egress proxy of port 0: %v, want an error naming the port", err)
	}
}
