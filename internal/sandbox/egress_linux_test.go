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

// TestEgressLandlock confines a command's network to a stand-in for the
// egress proxy (a TCP listener on loopback) and runs the egress probe as
// the unprivileged user: the proxy's port is reached, a direct connection
// to another loopback listener and a UDP datagram are refused, and the
// datagram never arrives. The control, the same launcher's view without
// the egress rule, reaches all three, so the refusals are the rule's.
func TestEgressLandlock(t *testing.T) {
	if tier, err := sandbox.DetectEgress(); tier != sandbox.EgressLandlock {
		t.Skipf("the kernel cannot confine the network with Landlock: %v", err)
	}
	l := newLayout(t, sandbox.Paths{})
	proxy, direct := listenTCP(t), listenTCP(t)
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { udp.Close() })
	port := uint16(proxy.Addr().(*net.TCPAddr).Port)
	confined, err := sandbox.NewLauncher(l.launcher.Executable(), l.launcher.View(), sandbox.WithEgress(sandbox.Egress{ProxyPort: port}))
	if err != nil {
		t.Fatal(err)
	}
	if got := confined.Egress(); got != sandbox.EgressLandlock {
		t.Errorf("Egress() = %v, want %v", got, sandbox.EgressLandlock)
	}
	if got := l.launcher.Egress(); got != sandbox.EgressNone {
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
			if diff := cmp.Diff(tt.want, strings.TrimSpace(out.String())); diff != "" {
				t.Errorf("probe (-want +got):\n%s", diff)
			}
			if got := datagramArrived(t, udp); got != tt.arrives {
				t.Errorf("the datagram arrived: %v, want %v", got, tt.arrives)
			}
		})
	}
}

// listenTCP listens on a loopback port, accepting and closing every
// connection, until the test ends.
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
	if tier, err := sandbox.DetectEgress(); tier == sandbox.EgressNone {
		t.Skipf("the kernel cannot confine the network: %v", err)
	}
	dir := t.TempDir()
	_, err := sandbox.NewLauncher(mustExecutable(t), sandbox.View{Workspace: dir, Temp: dir}, sandbox.WithEgress(sandbox.Egress{}))
	if err == nil || !strings.Contains(err.Error(), "no port") {
		t.Errorf("NewLauncher with an egress proxy of port 0: %v, want an error naming the port", err)
	}
}
