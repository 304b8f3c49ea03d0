package sandbox_test

import (
	"fmt"
	"net"
	"strings"
	"time"
)

// egressProbeArg starts the test binary as the egress probe: it connects
// over TCP to the proxy's address and to another listener's (the next two
// arguments), and sends a UDP datagram to the third, then prints
// "proxy=<ok|refused> direct=<...> udp=<...>".
const egressProbeArg = "egress-probe"

// probeEgress runs the egress probe and returns its exit code.
func probeEgress(proxy, direct, udp string) int {
	tcp := func(addr string) string {
		c, err := net.DialTimeout("tcp", addr, 10*time.Second)
		if err != nil {
			return "refused"
		}
		c.Close()
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
	fmt.Println(strings.Join([]string{"proxy=" + tcp(proxy), "direct=" + tcp(direct), "udp=" + datagram(udp)}, " "))
	return 0
}
