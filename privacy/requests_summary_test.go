package privacy

import (
	"slices"
	"strings"
	"testing"

	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/stretchr/testify/require"
)

// TestSummarizeRequests reads getdata records as their peers saw them:
// the first height asked, and the blocks one peer was asked for again
// (a run counted once by its first height); another peer asking for the
// same block is not a re-ask of either.
func TestSummarizeRequests(t *testing.T) {
	gd := func(peer string, h int32, n int64, reason string) transcript.Record {
		return transcript.Record{Peer: peer, Height: h, Kind: transcript.KindGetData, Count: n, Reason: reason}
	}
	recs := []transcript.Record{
		{Peer: "a", Kind: transcript.KindFilterLoad},
		gd("a", 100, 500, "sync"),
		gd("a", 600, 400, "sync"),
		gd("a", 300, 5, "refetch"), // 300-304 again
		gd("a", 700, 1, "refetch"),
		gd("b", 650, 1, "check"),    // another peer: not a re-ask
		gd("a", 302, 10, "refetch"), // 302-311: the run 300-311 goes on
	}
	s := SummarizeRequests(recs)
	require.NotNil(t, s, "summary %+v", s)
	require.Equal(t, 6, s.Records, "summary %+v", s)
	require.Equal(t, int64(917), s.Blocks, "summary %+v", s)
	require.Equal(t, int32(100), s.FirstHeight, "summary %+v", s)
	require.Equal(t, 2, s.Peers, "summary %+v", s)
	require.Equal(t, int64(12+1), s.ReAskedBlocks, "re-asked %d blocks from %v", s.ReAskedBlocks, s.ReAsked)
	require.True(t, slices.Equal(s.ReAsked, []int32{300, 700}), "re-asked %d blocks from %v", s.ReAskedBlocks, s.ReAsked)
	require.Nil(t, SummarizeRequests(recs[:1]), "a transcript without getdata records has no request summary")
	rep := &Report{Requests: s}
	var b strings.Builder
	require.NoError(t, rep.WriteTable(&b))
	require.Contains(t, b.String(), "requests: 6 getdata records asked 2 peer(s) for 917 blocks from height 100", "table:\n%s", b.String())
	require.Contains(t, b.String(), "13 blocks asked again of the same peer, from heights 300, 700", "table:\n%s", b.String())
}
