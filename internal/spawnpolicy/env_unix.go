//go:build !windows

package spawnpolicy

// foldNames is false off Windows: variable names are case-sensitive there,
// so PATH and Path are two variables. Deny and Allow still match names
// case-insensitively on every OS.
const foldNames = false

// setsTZ is true off Windows: TimeZoneID becomes TZ, which date, Python
// and Node read.
const setsTZ = true
