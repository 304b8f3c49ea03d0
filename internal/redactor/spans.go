package redactor

// span is the half-open byte range [start, end) of one replacement.
type span struct{ start, end int }

// insertSpan adds [start, end) to spans, which are sorted, disjoint and
// non-touching, wherever it falls (the encoded matcher finds matches out of
// order), merging it with the spans it overlaps or touches. The span is
// first clipped to start at floor; one that ends at or before floor is
// dropped.
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
