// Package scaletest scales the tests' heavy loops to the build: a property
// test runs its full count in an ordinary `go test` and a fraction of it
// under the race detector (which makes memory-bound loops 10 to 100 times
// slower) or with -short, so that the quick and the full suite finish in
// their budgets. Only the count of repetitions of one check shrinks (random
// texts, bytes printed): every case, seed and corpus entry of a test still
// runs.
package scaletest

import "testing"

// Divisor is how much smaller a scaled count is under the race detector or
// with -short.
const Divisor = 8

// Race reports whether the test binary was built with the race detector.
func Race() bool { return race }

// Reduced reports whether counts are scaled down: under the race detector
// or with -short.
func Reduced() bool { return race || testing.Short() }

// N returns full in an ordinary run and full/Divisor (at least 1) when
// counts are reduced.
func N(full int) int {
	if !Reduced() {
		return full
	}
	return max(1, full/Divisor)
}
