//go:build !race

package scaletest

const race = false
