//go:build !linux

package tools_test

import "testing"

// publicTempDir skips the test: running the permission helper as another
// user is implemented on Linux only.
func publicTempDir(t *testing.T) string {
	t.Helper()
	t.Skip("running the tools as another user is implemented on Linux only")
	return ""
}

// runPermissionHelperAsOther is never reached outside Linux (publicTempDir
// skips first).
func runPermissionHelperAsOther(t *testing.T, _, _ string) []permissionOutcome {
	t.Helper()
	t.Skip("running the tools as another user is implemented on Linux only")
	return nil
}
