package scaletest

import (
	"testing"
)

func TestN(t *testing.T) {
	tests := []struct{ full, reduced int }{{1, 1}, {7, 1}, {8, 1}, {64, 8}, {1000, 125}}
	for _, tt := range tests {
		want := tt.full
		if Reduced() {
			want = tt.reduced
		}
		if got := N(tt.full); got != want {
			t.Errorf("N(%d) = %d, want %d (race %v, short %v)", tt.full, got, want, Race(), testing.Short())
		}
	}
}
