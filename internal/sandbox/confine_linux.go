//go:build linux

package sandbox

// confineThread confines the calling thread for s: no_new_privs and a
// new Landlock domain for the view, with a TCP rule for the egress proxy's
// port when s confines the network (restrictThread), then the seccomp
// filter that refuses calls on another process, and with egress every
// socket but Unix, netlink and TCP ones (filterThread), whose listener
// goes to serve. The caller must hold runtime.LockOSThread and never
// release it.
func confineThread(s spec, serve func(listener int)) error {
	var proxyPort uint16
	// Inside a network namespace the rule is a second wall, where the
	// kernel has it.
	if s.Egress != nil && (s.EgressTier != EgressNamespace || ABI() >= landlockNetABI) {
		proxyPort = s.Egress.ProxyPort
	}
	if err := restrictThread(s.View, proxyPort); err != nil {
		return err
	}
	if s.NoProcessFilter && s.Egress == nil {
		return nil
	}
	return filterThread(s.Egress != nil, serve)
}
