package element_test

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/internal/testkit"
	"github.com/stretchr/testify/require"
)

// TestFileUniverseMatchesReadCandidates checks that streaming a file
// yields the candidates ReadCandidates returns, comments, blank lines and
// heights included, and that a malformed line ends the stream with an
// error naming it.
func TestFileUniverseMatchesReadCandidates(t *testing.T) {
	file := "# a universe\n" +
		"00112233445566778899aabbccddeeff00112233 02aabbccddeeff00112233445566778899aabbccddeeff0011223344556677889900 @12\n" +
		"\n" +
		"ffeeddccbbaa99887766554433221100ffeeddcc   # one form\n" +
		"0102\t0304 0506 @0\n"
	want, err := element.ReadCandidates(strings.NewReader(file))
	require.NoError(t, err)
	u := element.NewFileUniverse(strings.NewReader(file))
	var got []element.Candidate
	var c element.Candidate
	for u.Next(&c) {
		got = append(got, c.Clone())
	}
	require.NoError(t, u.Err())
	require.Len(t, got, len(want), "%d candidates streamed, %d read", len(got), len(want))
	require.Equal(t, uint64(len(want)), u.Count(), "%d candidates streamed, %d read", len(got), len(want))
	for i := range want {
		require.True(t, got[i].Equal(want[i]), "candidate %d: %+v, want %+v", i, got[i], want[i])
	}
	bad := []struct{ file, want string }{
		{"0011\nzz\n", "line 2"},
		{"0011\n001\n", "line 2"},
		{"0011 @x\n", "first-seen height"},
		{"@5\n", "without a form"},
		{"00 @5 11\n", "last field"},
		{strings.Repeat("00 ", element.MaxFormsPerLine+1) + "\n", "forms, at most"},
		{strings.Repeat("ab", element.MaxFormSize+1) + "\n", "bytes, want 1 to"},
	}
	for _, tc := range bad {
		u := element.NewFileUniverse(strings.NewReader(tc.file))
		for u.Next(&c) {
		}
		require.ErrorIs(t, u.Err(), element.ErrBadElementFile, "%q: err = %v, want %q", tc.file, u.Err(), tc.want)
		require.Contains(t, u.Err().Error(), tc.want, "%q: err = %v, want %q", tc.file, u.Err(), tc.want)
	}
}

// TestFileUniverseReusesBuffers checks that streaming allocates nothing
// per candidate once the buffers have grown: memory stays bounded
// whatever the file's length.
func TestFileUniverseReusesBuffers(t *testing.T) {
	var file bytes.Buffer
	all := testkit.RandomCandidates(rand.New(rand.NewPCG(1, 2)), 2000, 2)
	require.NoError(t, element.WriteCandidates(&file, all))
	raw := file.Bytes()
	allocs := testing.AllocsPerRun(3, func() {
		u := element.NewFileUniverse(bytes.NewReader(raw))
		var c element.Candidate
		for u.Next(&c) {
		}
	})
	require.LessOrEqual(t, allocs, float64(50), "%.0f allocations to stream %d candidates: buffers are not reused", allocs, len(all))
}
