package sandbox_test

import (
	"fmt"
	"io"
	"net"
	"strings"
	"time"
)

// egressProbeArg starts the test binary as the egress probe: it connects
// over TCP to the proxy's address and to another listener's (the next two
// arguments), and sends a UDP datagram to the third, then prints
// "proxy=<ok|refused> direct=<...> udp=<...>", then on a line of its own
// "interfaces=<names>", the network interfaces it sees.
const egressProbeArg = "egress-probe"

// greeting is what the probe's TCP listeners write to each connection.
const greeting = "listener"

// probeEgress runs the egress probe and returns its exit code.
func probeEgress(proxy, direct, udp string) int {
	tcp := func(addr string) string {
		c, err := net.DialTimeout("tcp", addr, 10*time.Second)
		if err != nil {
			return "refused"
		}
		defer c.Close()
		// The listener's greeting: the connection reached it, not
		// only something listening on its port.
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		buf := make([]byte, len(greeting))
		if _, err := io.ReadFull(c, buf); err != nil || string(buf) != greeting {
			return "cut"
		}
		return "ok"
	}
	datagram := func(addr string) string {
		c, err := net.Dial("udp", addr)
		if err != nil {
			return "refused"
		}
		defer c.Close()
		if _, err := c.Write([]byte("probe")); err != nil {
			return "refused"
		}
		return "ok"
	}
	var names []string
	if ifaces, err := net.Interfaces(); err == nil {
		for _, i := range ifaces {
			names = append(names, i.Name)
		}
	}
	fmt.Println(strings.Join([]string{"proxy=" + tcp(proxy), "direct=" + tcp(direct), "udp=" + datagram(udp)}, " "))
	fmt.Println("interfaces=" + strings.Join(names, ","))
	return 0
}
