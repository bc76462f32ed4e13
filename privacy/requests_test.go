package privacy

import (
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/replay"
	"github.com/bloomwatch/bloomwatch/transcript"
)

// TestGetDataRecordsAreRequests checks that version 3 getdata records
// change no filter: Replay keeps them apart (Timeline.Requests) and its
// events and generations are those of the filter records alone, and the
// meter adds no reading for them.
func TestGetDataRecordsAreRequests(t *testing.T) {
	f, err := bip37.NewFilter(20, 0.01, 7, bip37.UpdateAll)
	if err != nil {
		t.Fatal(err)
	}
	f.Add([]byte("a"))
	at := time.Unix(1700000000, 0)
	recs := []transcript.Record{
		{Seq: 0, Time: at, Peer: "p", Height: 10, Kind: transcript.KindFilterLoad, Filter: f.Serialize()},
		{Seq: 1, Time: at, Peer: "p", Height: 3, Kind: transcript.KindGetData, Count: 8, Reason: "sync"},
		{Seq: 2, Time: at, Peer: "p", Height: 11, Kind: transcript.KindFilterAdd, Data: []byte("b")},
		{Seq: 3, Time: at, Peer: "p", Height: 11, Kind: transcript.KindGetData, Count: 1, Reason: "refetch"},
	}
	tl, err := replay.Replay(recs)
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.Events) != 2 || len(tl.Requests) != 2 || tl.Requests[1].Count != 1 || len(tl.Generations) != 1 {
		t.Fatalf("%d events, %d requests, %d generations", len(tl.Events), len(tl.Requests), len(tl.Generations))
	}
	if tl.Generations[0].Load != 0 || tl.Events[1].Record.Kind != transcript.KindFilterAdd || tl.Events[1].Index != 1 {
		t.Errorf("events %+v", tl.Events)
	}
	m := NewMeter(MeterConfig{})
	for _, r := range recs {
		if _, err := m.Observe(r); err != nil {
			t.Fatalf("seq %d: %v", r.Seq, err)
		}
	}
	if n := len(m.History()); n != 2 {
		t.Errorf("%d readings for 2 filter records and 2 requests", n)
	}
}
