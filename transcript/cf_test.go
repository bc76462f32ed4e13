package transcript

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCFRecords checks the compact-filter kinds: written as version 5
// with their count, read back, refused in an older version, without a
// count, and left out of FilterRecords.
func TestCFRecords(t *testing.T) {
	at := time.Unix(1_700_000_000, 0).UTC()
	recs := []Record{
		{Seq: 0, Time: at, Peer: "p", Height: 101, Kind: KindGetCFilters, Count: 60, Reason: ReasonSync},
		{Seq: 1, Time: at, Peer: "p", Height: 130, Kind: KindGetBlock, Count: 1, Reason: ReasonSync},
	}
	var b bytes.Buffer
	for _, r := range recs {
		require.Equal(t, 5, VersionOf(r))
		require.NoError(t, Write(&b, r))
	}
	got, err := Read(&b)
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.Equal(t, KindGetBlock, got[1].Kind)
	require.EqualValues(t, 1, got[1].Count)
	require.True(t, got[0].Kind.BIP158())
	require.Empty(t, FilterRecords(got))

	old := recs[1]
	old.V = 4
	require.ErrorContains(t, old.Validate(), "start at version 5")
	none := recs[0]
	none.Count = 0
	require.ErrorContains(t, none.Validate(), "want at least 1 block")
}
