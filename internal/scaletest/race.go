//go:build race

package scaletest

const race = true
