package credproxy

import "net"

// netIPNet is the type x509's IP constraints take.
type netIPNet = net.IPNet

// allIPv4 and allIPv6 are every address of each family.
func allIPv4() *net.IPNet { return &net.IPNet{IP: net.IPv4zero.To4(), Mask: net.CIDRMask(0, 32)} }
func allIPv6() *net.IPNet { return &net.IPNet{IP: net.IPv6zero, Mask: net.CIDRMask(0, 128)} }
