package scan

import (
	"context"
	"testing"

	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/stretchr/testify/require"
)

// scanAll scans u with the filters and fails the test on error.
func scanAll(t testing.TB, u element.Universe, cfg Config) *Result {
	t.Helper()
	r, err := Run(context.Background(), u, cfg)
	require.NoError(t, err)
	return r
}

// hitKeys returns the primary forms of the hits matching filter j.
func hitKeys(r *Result, j int, all bool) map[string]bool {
	out := map[string]bool{}
	for _, h := range r.Hits {
		m := h.Any
		if all {
			m = h.All
		}
		if m.Has(j) {
			out[h.Candidate.Key()] = true
		}
	}
	return out
}
