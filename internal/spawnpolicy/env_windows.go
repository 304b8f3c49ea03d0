//go:build windows

package spawnpolicy

// foldNames is true on Windows: the OS compares variable names
// case-insensitively, so PATH and Path are one variable.
const foldNames = true

// setsTZ is false on Windows: the OS does not use TZ, so TimeZoneID is
// ignored.
const setsTZ = false
