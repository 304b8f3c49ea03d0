package redactor

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"strings"
	"unsafe"
)

// fragKeyLen is the length of the runs of bytes the fragment matcher
// hashes: no fragment is shorter (MinimumSecretLength).
const fragKeyLen = MinimumSecretLength

// sampleLen is the length of the runs of bytes the fragment matcher
// samples the text with: a shorter run lets it sample more rarely (see
// fragMatcher), a longer one passes the filter less often.
const sampleLen = 4

// fragCarry is how many of the stream's last bytes the scanner keeps for
// the fragment matcher: at least the longest fragment, so a fragment that
// straddles two pieces is found in the second, and pending sees a whole
// fragment at the end too.
const fragCarry = 16

// fragMatcher finds the raw fragments of the secrets outside the automata.
// Fragments make every byte of every secret the beginning of a pattern, so
// in an automaton ordinary text keeps it a few states deep, in rows that do
// not stay in cache. Here the text is read at every stride-th position
// only: one unaligned 4-byte load, hashed into a Bloom filter of every
// 4-byte run of every fragment. A fragment of L bytes holds such a run at
// each of L-3 consecutive positions, so one of them is sampled when stride
// is at most L-3. The loads do not depend on each other, so they pipeline;
// a hit is verified exactly at every start from which a fragment could
// hold the sampled run.
type fragMatcher struct {
	bits   []uint64         // a Bloom filter of the runs, see probe
	shift  uint             // 64 less the width in bits of a word's index
	stride int              // positions between two samples: the shortest fragment's length less 3
	frags  []string         // every fragment, sorted, so those with one key are adjacent
	first  map[uint64]int32 // a fragment's first 8 bytes to the index of the first such in frags
	maxLen int              // length of the longest fragment
}

// newFragMatcher returns the matcher for frags, each at least fragKeyLen
// and at most fragCarry bytes long. With none it matches nothing.
func newFragMatcher(frags []string) *fragMatcher {
	m := &fragMatcher{frags: slices.Clone(frags), first: make(map[uint64]int32), stride: fragCarry}
	slices.Sort(m.frags)
	m.frags = slices.Compact(m.frags)
	runs := make(map[uint32]struct{})
	for i, f := range m.frags {
		m.maxLen = max(m.maxLen, len(f))
		m.stride = min(m.stride, len(f)-sampleLen+1)
		k := load64(f, 0)
		if _, ok := m.first[k]; !ok {
			m.first[k] = int32(i)
		}
		for o := 0; o+sampleLen <= len(f); o++ {
			runs[binary.LittleEndian.Uint32([]byte(f[o:]))] = struct{}{}
		}
	}
	// A word for every one or two runs (64 to 128 bits a run): the
	// benchmark text passes the filter at 0.1 to 0.8% of the samples, part
	// of it true runs of the secrets (see docs/performance.md).
	width := max(4, bits.Len(uint(len(runs))))
	m.shift = uint(64 - width)
	m.bits = make([]uint64, 1<<width)
	for k := range runs {
		w, mask := probe(k, m.shift)
		m.bits[w] |= mask
	}
	return m
}

// fragHashMul is the multiplier of the fragment matcher's first hash:
// 2^64 divided by the golden ratio.
const fragHashMul = 0x9e3779b97f4a7c15

// fragHashMul2 is the second hash's multiplier, an odd constant of
// splitmix64.
const fragHashMul2 = 0xbf58476d1ce4e5b9

// probe returns the word of bits a key tests and the two bits it wants
// set there: a Bloom filter with two hashes in one word, so a test is one
// load. The top bits of a product are the ones that depend on every byte
// of the key; a second product gives the bits, so that only one shift is
// by a variable amount.
func probe(k uint32, shift uint) (uint64, uint64) {
	h := uint64(k) * fragHashMul
	g := uint64(k) * fragHashMul2
	return h >> (shift & 63), 1<<(g>>58) | 1<<(g>>52&63)
}

// load64 returns the 8 bytes of s at i as a little-endian number.
func load64(s string, i int) uint64 {
	return binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[i:]), fragKeyLen))
}

// scan appends to spans every fragment that occurs in the stream's kept
// last bytes (see scanner.tail) followed by s and ends in s, s starting at
// position base (clipped to start at floor, see addFragSpan), and then
// keeps the stream's last bytes. A fragment that starts in the kept bytes
// may have been found in the previous piece already; finding it again is
// harmless, since spans are merged.
func (m *fragMatcher) scan(sc *scanner, s string, base, floor int, spans []span) []span {
	if sc.tn > 0 {
		// Every start in the kept bytes, with as much of s as a fragment
		// can reach.
		var buf [2 * fragCarry]byte
		n := copy(buf[:], sc.tail[:sc.tn])
		n += copy(buf[n:], s[:min(len(s), fragCarry)])
		w := unsafe.String(&buf[0], n)
		for j := range sc.tn {
			if end := m.longest(w, j); end > 0 {
				spans = addFragSpan(spans, base-sc.tn+j, base-sc.tn+end, floor)
			}
		}
	}

	// The samples. A fragment that starts at p in s and ends in it holds
	// the run at some sample q with p <= q <= p+len-4, so a hit at q is
	// verified at every start from q-(maxLen-4) to q not verified yet.
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	bs, shift, stride, back := m.bits, m.shift, m.stride, m.maxLen-sampleLen
	next := 0 // the first start not verified yet
	for q := 0; q+sampleLen <= len(b); q += stride {
		if w, mask := probe(binary.LittleEndian.Uint32(b[q:]), shift); bs[w]&mask != mask {
			continue
		}
		for p := max(next, q-back); p <= q; p++ {
			if end := m.longest(s, p); end > 0 {
				spans = addFragSpan(spans, base+p, base+end, floor)
			}
		}
		next = q + 1
	}

	if len(s) >= fragCarry {
		sc.tn = copy(sc.tail[:], s[len(s)-fragCarry:])
	} else {
		keep := min(sc.tn, fragCarry-len(s))
		copy(sc.tail[:], sc.tail[sc.tn-keep:sc.tn])
		sc.tn = keep + copy(sc.tail[keep:], s)
	}
	return spans
}

// longest returns the end of the longest fragment that occurs in s at i,
// or 0 when none does.
func (m *fragMatcher) longest(s string, i int) int {
	if len(s)-i < fragKeyLen {
		return 0
	}
	k := load64(s, i)
	j, ok := m.first[k]
	if !ok {
		return 0
	}
	end := 0
	for ; int(j) < len(m.frags); j++ {
		f := m.frags[j]
		if load64(f, 0) != k {
			break
		}
		if len(f) <= len(s)-i && s[i:i+len(f)] == f {
			end = i + len(f)
		}
	}
	return end
}

// prefixLen returns the length of the longest ending of s that begins a
// fragment (a whole fragment included).
func (m *fragMatcher) prefixLen(s string) int {
	for l := min(len(s), m.maxLen); l > 0; l-- {
		p := s[len(s)-l:]
		j, _ := slices.BinarySearch(m.frags, p)
		if j < len(m.frags) && strings.HasPrefix(m.frags[j], p) {
			return l
		}
	}
	return 0
}

// addFragSpan adds [start, end) to spans, whose starts never decrease
// (fragments are found in the order of their starts, but their ends are
// not ordered). Like addSpan it clips the span to start at floor and keeps
// spans sorted, disjoint and non-touching.
func addFragSpan(spans []span, start, end, floor int) []span {
	if end <= floor {
		return spans
	}
	start = max(start, floor)
	if n := len(spans); n > 0 && spans[n-1].end >= start {
		spans[n-1].end = max(spans[n-1].end, end)
		return spans
	}
	return append(spans, span{start, end})
}
