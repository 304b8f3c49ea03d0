//go:build !linux

package redactor

import "time"

// threadCPU is not available here: the benchmarks report wall time only.
func threadCPU() time.Duration { return 0 }
