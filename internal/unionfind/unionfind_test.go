package unionfind

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAgainstLabels checks Sets against a naive relabelling partition over
// random unions: the same sets, the smallest member as representative, the
// right sizes.
func TestAgainstLabels(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 200; round++ {
		n := 1 + r.IntN(40)
		s := New(n)
		label := make([]int, n)
		for i := range label {
			label[i] = i
		}
		for u := 0; u < r.IntN(2*n); u++ {
			a, b := r.IntN(n), r.IntN(n)
			apart := label[a] != label[b]
			require.Equal(t, apart, s.Union(a, b))
			from, to := max(label[a], label[b]), min(label[a], label[b])
			for i := range label {
				if label[i] == from {
					label[i] = to
				}
			}
		}
		for i := 0; i < n; i++ {
			require.Equal(t, label[i], s.Find(i), "representative of %d", i)
			size := 0
			for j := range label {
				if label[j] == label[i] {
					size++
				}
			}
			require.Equal(t, size, s.Size(i))
			require.Equal(t, label[i] == label[0], s.Same(i, 0))
		}
		require.Equal(t, n, s.Len())
	}
}
