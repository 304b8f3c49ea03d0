package spawnpolicy

// Notices are what the host saw a prepared process do that the process's
// own output may not tell, and that the model can act on: a client that
// refused the credential proxy's certificate, for one, fails with a
// message about a bad certificate that does not say the proxy is in the
// way. A tool that runs a prepared process takes a mark before it starts
// and adds the lines noticed since to its result.
type Notices interface {
	// Mark returns where the record stands now.
	Mark() uint64
	// Since returns the lines noticed after mark, one notice each.
	Since(mark uint64) []string
}
