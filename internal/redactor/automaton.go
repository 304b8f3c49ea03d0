package redactor

// denseBudget caps the entries (int32) of the dense transition table. States
// are made dense in breadth-first order, shallowest first, until the next row
// would pass the cap; deeper states keep their trie edges and failure link.
// Text that does not match sits near the root, so the hot loop stays on
// dense rows: 1<<21 entries is 8 MiB, enough for every state of depth three
// or four with a thousand secrets and all their derived forms.
const denseBudget = 1 << 21

// maxDenseDepth is the deepest state that gets a dense row. Text that does
// not match rarely walks deeper (with fragments, every byte of a secret
// begins a pattern, and ordinary text walks deeper than three bytes at
// about 1.6% of its bytes: measured on the benchmark text), and a small
// redactor stays small: every state of a few secrets would fit the budget,
// at megabytes a secret.
const maxDenseDepth = 3

// span is the half-open byte range [start, end) of one replacement.
type span struct{ start, end int }

// automaton is an Aho-Corasick automaton over bytes. States are numbered in
// breadth-first order, so a state's failure target always has a smaller
// number. States below nDense have a complete row in dense (a DFA: no
// failure links needed); the others are walked through their trie edges and
// failure links until a dense state is reached again.
//
// A dense entry is the row offset of its target when the target is dense and
// ends no pattern, and the bitwise complement of the target's number
// otherwise, so the hot loop handles both cases with one sign test.
type automaton struct {
	class  [256]uint8 // byte to column; bytes in no pattern share one column
	stride int        // columns per dense row
	dense  []int32    // nDense rows of stride entries
	nDense int32

	// Per state, indexed by state number.
	matchLen   []int32 // length of the longest pattern ending in this state, 0 if none
	depth      []int32 // length of the pattern prefix the state stands for
	fail       []int32 // failure link
	label      []byte  // byte on the edge into the state
	childStart []int32 // children of s are the states childStart[s] to childStart[s+1]-1

	maxLen int // length of the longest pattern
}

// newAutomaton builds the automaton for patterns, which must be sorted,
// unique and non-empty.
func newAutomaton(patterns []string) *automaton {
	a := &automaton{}
	for _, p := range patterns {
		a.maxLen = max(a.maxLen, len(p))
	}
	a.buildClasses(patterns)

	// The trie, built from the sorted patterns with a path stack: each
	// pattern shares the path of its longest common prefix with the previous
	// one, and the children of any node are created in byte order.
	parent := []int32{-1}
	label := []byte{0}
	term := []bool{false}
	path := []int32{0}
	prev := ""
	for _, p := range patterns {
		l := commonPrefix(prev, p)
		path = path[:l+1]
		for d := l; d < len(p); d++ {
			parent = append(parent, path[d])
			label = append(label, p[d])
			term = append(term, false)
			path = append(path, int32(len(parent)-1))
		}
		term[path[len(p)]] = true
		prev = p
	}
	n := len(parent)

	// Children lists in creation order (which is byte order), then the
	// breadth-first renumbering: the children of a state get consecutive
	// numbers, so they are described by one start index.
	childCount := make([]int32, n+1)
	for v := 1; v < n; v++ {
		childCount[parent[v]+1]++
	}
	for v := 1; v <= n; v++ {
		childCount[v] += childCount[v-1]
	}
	children := make([]int32, n)
	fill := append([]int32(nil), childCount[:n]...)
	for v := 1; v < n; v++ {
		p := parent[v]
		children[fill[p]] = int32(v)
		fill[p]++
	}
	order := make([]int32, 0, n) // order[new] = old
	order = append(order, 0)
	a.childStart = make([]int32, n+1)
	for i := 0; i < len(order); i++ {
		old := order[i]
		a.childStart[i] = int32(len(order))
		order = append(order, children[childCount[old]:childCount[old+1]]...)
	}
	a.childStart[n] = int32(n)
	a.label = make([]byte, n)
	a.depth = make([]int32, n)
	depth := a.depth
	isTerm := make([]bool, n)
	for i, old := range order {
		a.label[i] = label[old]
		isTerm[i] = term[old]
	}
	for s := 0; s < n; s++ {
		for c := a.childStart[s]; c < a.childStart[s+1]; c++ {
			depth[c] = depth[s] + 1
		}
	}

	// How many states get a dense row: the shallow ones, within the
	// budget. States are in breadth-first order, so they are a prefix.
	dense := 1
	for dense < n && depth[dense] <= maxDenseDepth {
		dense++
	}
	a.nDense = int32(min(dense, max(1, denseBudget/a.stride)))

	// Failure links, match lengths and dense rows, in breadth-first order.
	// Rows first hold plain state numbers; they are encoded at the end, once
	// every match length is known.
	a.fail = make([]int32, n)
	a.matchLen = make([]int32, n)
	a.dense = make([]int32, int(a.nDense)*a.stride)
	for s := int32(0); s < int32(n); s++ {
		if s < a.nDense {
			row := a.dense[int(s)*a.stride : int(s+1)*a.stride]
			if s != 0 {
				copy(row, a.dense[int(a.fail[s])*a.stride:int(a.fail[s]+1)*a.stride])
			}
			for c := a.childStart[s]; c < a.childStart[s+1]; c++ {
				row[a.class[a.label[c]]] = c
			}
		}
		for c := a.childStart[s]; c < a.childStart[s+1]; c++ {
			if s != 0 {
				a.fail[c] = a.step(a.fail[s], a.label[c], false)
			}
			if isTerm[c] {
				a.matchLen[c] = depth[c]
			} else {
				a.matchLen[c] = a.matchLen[a.fail[c]]
			}
		}
	}
	for i, t := range a.dense {
		a.dense[i] = a.encode(t)
	}
	return a
}

// buildClasses gives every byte that occurs in a pattern its own column and
// all other bytes a shared one.
func (a *automaton) buildClasses(patterns []string) {
	var seen [256]bool
	for _, p := range patterns {
		for i := 0; i < len(p); i++ {
			seen[p[i]] = true
		}
	}
	next := 1
	for b := range 256 {
		if seen[b] {
			a.class[b] = uint8(next % 256)
			next++
		}
	}
	a.stride = next
	if next == 257 { // every byte occurs: no shared column needed
		for b := range 256 {
			a.class[b] = uint8(b)
		}
		a.stride = 256
	}
}

// encode turns a target state number into a dense table entry.
func (a *automaton) encode(t int32) int32 {
	if t < a.nDense && a.matchLen[t] == 0 {
		return t * int32(a.stride)
	}
	return ^t
}

// decode turns a dense table entry back into a state number.
func (a *automaton) decode(v int32) int32 {
	if v >= 0 {
		return v / int32(a.stride)
	}
	return ^v
}

// step returns the state reached from s on byte b. encoded says whether the
// dense rows are already encoded (after construction) or hold plain state
// numbers (during it).
func (a *automaton) step(s int32, b byte, encoded bool) int32 {
	for s >= a.nDense {
		for c := a.childStart[s]; c < a.childStart[s+1]; c++ {
			if a.label[c] == b {
				return c
			}
		}
		s = a.fail[s]
	}
	v := a.dense[int(s)*a.stride+int(a.class[b])]
	if encoded {
		return a.decode(v)
	}
	return v
}

// addSpan adds [start, end) to spans, whose ends never decrease. Spans that
// overlap or touch the new one are merged into it, so spans stays sorted,
// disjoint and non-touching. The new span is first clipped to start at
// floor; one that ends at or before floor is dropped.
func addSpan(spans []span, start, end, floor int) []span {
	if end <= floor {
		return spans
	}
	start = max(start, floor)
	for len(spans) > 0 && spans[len(spans)-1].end >= start {
		start = min(start, spans[len(spans)-1].start)
		spans = spans[:len(spans)-1]
	}
	return append(spans, span{start, end})
}

// insertSpan adds [start, end) to spans, which are sorted, disjoint and
// non-touching, wherever it falls (the encoded matcher finds matches out of
// order), merging it with the spans it overlaps or touches. Like addSpan it
// first clips the span to start at floor.
func insertSpan(spans []span, start, end, floor int) []span {
	if end <= floor {
		return spans
	}
	start = max(start, floor)
	i := len(spans) // the first span that ends at or after start
	for i > 0 && spans[i-1].end >= start {
		i--
	}
	j := i // spans[i:j] overlap or touch the new one
	for j < len(spans) && spans[j].start <= end {
		start, end = min(start, spans[j].start), max(end, spans[j].end)
		j++
	}
	if i < j {
		spans[i] = span{start, end}
		return append(spans[:i+1], spans[j:]...)
	}
	spans = append(spans, span{})
	copy(spans[i+1:], spans[i:])
	spans[i] = span{start, end}
	return spans
}

// commonPrefix returns the length of the longest common prefix of a and b.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
