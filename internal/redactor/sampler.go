package redactor

import (
	"cmp"
	"encoding/binary"
	"math/bits"
	"slices"
	"strings"
	"unsafe"
)

// sampler finds a set of patterns in a stream without an automaton: the
// raw patterns in the text itself, the encoded ones in the encoded
// channel's symbol stream (the text less its separators and dump columns,
// see encChannel). In an automaton, fragments make every byte of every
// secret the beginning of a pattern, and base64, base32 and hex forms are
// made of the alphabets of words and hex ids, so ordinary text keeps it off
// the root, in rows that do not stay in cache; and a step a byte is a chain
// of dependent loads. Here the stream is read at every stride-th position
// only: keyLen bytes as one 8-byte load, tested against a Bloom filter; the
// loads do not depend on each other, so they pipeline. A pattern that starts
// at p holds the first sample at or after p at offset o = (-p) mod stride,
// and stride is chosen so that the key there lies inside the shortest
// pattern; so the filter holds, per pattern, only its keys at the offsets 0
// to stride-1, and a hit names, through an exact index, the few (pattern,
// offset) pairs to compare.
type sampler struct {
	patterns []string // sorted
	keyLen   int      // bytes a key
	keyMask  uint64   // the low keyLen bytes
	stride   int      // positions between two samples
	maxLen   int      // length of the longest pattern

	bits  []uint64 // a Bloom filter of the keys, see probe64
	shift uint
	keys  []uint64      // every key, sorted
	runs  []int32       // the entries of keys[i] are entry[runs[i]:runs[i+1]]
	entry []sampleEntry // (pattern, offset) pairs, by key

	// For pending: every pattern's first 8 bytes (patterns are at least
	// MinimumSecretLength long) in a Bloom filter.
	firstBits  []uint64
	firstShift uint
}

// sampleEntry is one pattern that holds a key at an offset.
type sampleEntry struct {
	pat, off int32
}

// newSampler returns the sampler of patterns, which must be sorted,
// unique and at least MinimumSecretLength long.
func newSampler(patterns []string) *sampler {
	m := &sampler{patterns: patterns}
	minLen := maxEncodedLen // a stride for this length serves any longer one
	for _, p := range patterns {
		m.maxLen = max(m.maxLen, len(p))
		minLen = min(minLen, len(p))
	}
	// Keys of 8 bytes pass ordinary text almost never; shorter ones leave
	// a longer stride for short patterns (8-byte secrets have 8-byte raw
	// and 10-symbol base64 forms).
	m.keyLen = min(8, max(4, minLen/2))
	m.keyMask = ^uint64(0) >> (64 - 8*m.keyLen)
	m.stride = minLen - m.keyLen + 1

	type keyed struct {
		k uint64
		e sampleEntry
	}
	all := make([]keyed, 0, len(patterns)*m.stride)
	for i, p := range patterns {
		for o := 0; o < m.stride && o+m.keyLen <= len(p); o++ {
			all = append(all, keyed{keyOf(p[o:], m.keyLen), sampleEntry{int32(i), int32(o)}})
		}
	}
	slices.SortFunc(all, func(a, b keyed) int { return cmp.Compare(a.k, b.k) })
	distinct := 0
	for i := range all {
		if i == 0 || all[i].k != all[i-1].k {
			distinct++
		}
	}
	// Sized exactly: at 1000 secrets the key index is the largest thing
	// New builds, and growing it by appending would allocate it twice.
	m.keys = make([]uint64, 0, distinct)
	m.runs = make([]int32, 0, distinct+1)
	m.entry = make([]sampleEntry, len(all))
	for i, a := range all {
		m.entry[i] = a.e
		if i == 0 || a.k != all[i-1].k {
			m.keys = append(m.keys, a.k)
			m.runs = append(m.runs, int32(i))
		}
	}
	m.runs = append(m.runs, int32(len(all)))
	m.bits, m.shift = bloom(len(m.keys), func(add func(uint64)) {
		for _, k := range m.keys {
			add(k)
		}
	})
	m.firstBits, m.firstShift = bloom(len(patterns), func(add func(uint64)) {
		for _, p := range patterns {
			add(keyOf(p, 8))
		}
	})
	return m
}

// entries returns the (pattern, offset) pairs of the key k.
func (m *sampler) entries(k uint64) []sampleEntry {
	i, ok := slices.BinarySearch(m.keys, k)
	if !ok {
		return nil
	}
	return m.entry[m.runs[i]:m.runs[i+1]]
}

// bloom returns a Bloom filter (two bits in one word, see probe64) for
// the n keys that each calls add with: 4 to 8 words a key, at most 64K
// words (512 KiB, which the encoded keys of 1000 secrets fill at 3 keys a
// word). Text passes it at 0.1 to 1% of the samples.
func bloom(n int, each func(add func(uint64))) ([]uint64, uint) {
	width := max(6, min(bits.Len(uint(n))+2, 16))
	shift := uint(64 - width)
	b := make([]uint64, 1<<width)
	each(func(k uint64) {
		w, mask := probe64(k, shift)
		b[w] |= mask
	})
	return b, shift
}

// sampleHashMul is the multiplier of the sampler's first hash: 2^64 divided
// by the golden ratio.
const sampleHashMul = 0x9e3779b97f4a7c15

// sampleHashMul2 is the second hash's multiplier, an odd constant of
// splitmix64.
const sampleHashMul2 = 0xbf58476d1ce4e5b9

// probe64 returns the word of bits a key tests and the two bits it wants
// set there: a Bloom filter with two hashes in one word, so a test is one
// load. The top bits of a product are the ones that depend on every byte
// of the key; a second product gives the bits, so that only one shift is
// by a variable amount.
func probe64(k uint64, shift uint) (uint64, uint64) {
	h := k * sampleHashMul
	h ^= h >> 29
	g := h * sampleHashMul2
	return h >> (shift & 63), 1<<(g>>58) | 1<<(g>>52&63)
}

// load64 returns the 8 bytes of s at i as a little-endian number.
func load64(s string, i int) uint64 {
	return binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[i:]), 8))
}

// keyOf returns the first n (at most 8) bytes of s as a little-endian
// number.
func keyOf(s string, n int) uint64 {
	var k uint64
	for i := n - 1; i >= 0; i-- {
		k = k<<8 | uint64(s[i])
	}
	return k
}

// isPrefix reports whether s, at most maxLen bytes, begins a pattern (or
// is one).
func (m *sampler) isPrefix(s string) bool {
	if len(s) >= 8 {
		if w, mask := probe64(load64(s, 0), m.firstShift); m.firstBits[w]&mask != mask {
			return false
		}
	}
	j, _ := slices.BinarySearch(m.patterns, s)
	return j < len(m.patterns) && strings.HasPrefix(m.patterns[j], s)
}
