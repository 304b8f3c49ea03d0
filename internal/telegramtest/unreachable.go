package telegramtest

import (
	"net"
	"testing"
)

// ClosedAddr returns a loopback address (host:port) nothing listens at: a
// port the kernel handed out and that was closed again, for the tests of a
// Bot API server that cannot be reached (a connection to it is refused).
func ClosedAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("telegramtest: listen: %v", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatalf("telegramtest: close: %v", err)
	}
	return addr
}
