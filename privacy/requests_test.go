package privacy

import (
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/replay"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/stretchr/testify/require"
)

// TestGetDataRecordsAreRequests checks that version 3 getdata records
// change no filter: Replay keeps them apart (Timeline.Requests) and its
// events and generations are those of the filter records alone, and the
// meter adds no reading for them.
func TestGetDataRecordsAreRequests(t *testing.T) {
	f, err := bip37.NewFilter(20, 0.01, 7, bip37.UpdateAll)
	require.NoError(t, err)
	f.Add([]byte("a"))
	at := time.Unix(1700000000, 0)
	recs := []transcript.Record{
		{Seq: 0, Time: at, Peer: "p", Height: 10, Kind: transcript.KindFilterLoad, Filter: f.Serialize()},
		{Seq: 1, Time: at, Peer: "p", Height: 3, Kind: transcript.KindGetData, Count: 8, Reason: "sync"},
		{Seq: 2, Time: at, Peer: "p", Height: 11, Kind: transcript.KindFilterAdd, Data: []byte("b")},
		{Seq: 3, Time: at, Peer: "p", Height: 11, Kind: transcript.KindGetData, Count: 1, Reason: "refetch"},
	}
	tl, err := replay.Replay(recs)
	require.NoError(t, err)
	require.Len(t, tl.Events, 2, "%d events, %d requests, %d generations", len(tl.Events), len(tl.Requests), len(tl.Generations))
	require.Len(t, tl.Requests, 2, "%d events, %d requests, %d generations", len(tl.Events), len(tl.Requests), len(tl.Generations))
	require.Equal(t, int64(1), tl.Requests[1].Count, "%d events, %d requests, %d generations", len(tl.Events), len(tl.Requests), len(tl.Generations))
	require.Len(t, tl.Generations, 1, "%d events, %d requests, %d generations", len(tl.Events), len(tl.Requests), len(tl.Generations))
	require.Equal(t, 0, tl.Generations[0].Load, "events %+v", tl.Events)
	require.Equal(t, transcript.KindFilterAdd, tl.Events[1].Record.Kind, "events %+v", tl.Events)
	require.Equal(t, 1, tl.Events[1].Index, "events %+v", tl.Events)
	m := NewMeter(MeterConfig{})
	for _, r := range recs {
		_, err := m.Observe(r)
		require.NoError(t, err, "seq %d", r.Seq)
	}
	n := len(m.History())
	require.Equal(t, 2, n, "%d readings for 2 filter records and 2 requests", n)
}
