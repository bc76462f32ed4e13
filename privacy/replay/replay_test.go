package replay

import (
	"math/rand/v2"
	"testing"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/stretchr/testify/require"
)

func TestReplay(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 21))
	w := randomElements(rng, 3)
	f := filterOf(t, 5, w[:1]...)
	g := filterOf(t, 6, w...)
	after := f.Clone()
	after.Add(w[1])
	big := make([]byte, bip37.MaxFilterAddSize+1)
	records := []transcript.Record{
		{Kind: transcript.KindFilterAdd, Peer: "a", Data: w[2]},                     // 0: no filter yet
		loadRecord(1, "a", 10, f),                                                   // 1: gen 0, state 0
		loadRecord(2, "b", 10, f),                                                   // 2: gen 1, same state 0
		{Seq: 3, Kind: transcript.KindFilterAdd, Peer: "a", Height: 11, Data: w[1]}, // 3: state 1
		{Seq: 4, Kind: transcript.KindFilterAdd, Peer: "b", Height: 11, Data: big},  // 4: rejected by the node
		{Seq: 5, Kind: transcript.KindFilterClear, Peer: "b", Height: 12},           // 5
		loadRecord(6, "b", 13, g),                                                   // 6: gen 2, state 2
	}
	tl, err := Replay(records)
	require.NoError(t, err)
	type want struct {
		state, gen int
		revealed   bool
		note       string
	}
	wants := []want{
		{-1, -1, true, noteAddWithoutFilter},
		{0, 0, false, ""},
		{0, 1, false, ""},
		{1, 0, true, ""},
		{-1, 1, true, noteAddTooLarge},
		{-1, -1, false, ""},
		{2, 2, false, ""},
	}
	for i, w := range wants {
		e := tl.Events[i]
		require.Equal(t, w.state, e.State, "event %d: state %d gen %d revealed %v note %q; want %+v", i, e.State, e.Generation, e.Revealed != nil, e.Note, w)
		require.Equal(t, w.gen, e.Generation, "event %d: state %d gen %d revealed %v note %q; want %+v", i, e.State, e.Generation, e.Revealed != nil, e.Note, w)
		require.Equal(t, w.revealed, (e.Revealed != nil), "event %d: state %d gen %d revealed %v note %q; want %+v", i, e.State, e.Generation, e.Revealed != nil, e.Note, w)
		require.Equal(t, w.note, e.Note, "event %d: state %d gen %d revealed %v note %q; want %+v", i, e.State, e.Generation, e.Revealed != nil, e.Note, w)
	}
	require.Len(t, tl.States, 3, "%d states, %d generations", len(tl.States), len(tl.Generations))
	require.Len(t, tl.Generations, 3, "%d states, %d generations", len(tl.States), len(tl.Generations))
	require.Equal(t, string(after.Serialize()), string(tl.States[1].Serialize()), "state 1 is not the filter after the filteradd")
	require.Equal(t, 1, tl.Generations[0].Latest, "latest states %+v", tl.Generations)
	require.Equal(t, 0, tl.Generations[1].Latest, "latest states %+v", tl.Generations)
	require.Equal(t, 2, tl.Generations[2].Latest, "latest states %+v", tl.Generations)
	// Replay never mutates the records' filters or shares state with them.
	require.Equal(t, string(f.Serialize()), string(records[1].Filter), "replay changed a record")
}

func TestReplayErrors(t *testing.T) {
	tests := []struct {
		name    string
		records []transcript.Record
		want    error
	}{
		{"no filterload", []transcript.Record{{Kind: transcript.KindFilterClear, Peer: "a"}}, ErrNoFilters},
		{"empty", nil, ErrNoFilters},
		{"truncated filter", []transcript.Record{{Kind: transcript.KindFilterLoad, Peer: "a", Filter: []byte{0x05, 0x01}}}, ErrBadFilterRecord},
		{"too many hash funcs", []transcript.Record{{Kind: transcript.KindFilterLoad, Peer: "a", Filter: []byte{0x01, 0xff, 0x33, 0, 0, 0, 0, 0, 0, 0, 0}}}, bip37.ErrTooManyHashFuncs},
		{"unknown kind", []transcript.Record{{Kind: "filterzap", Peer: "a"}}, transcript.ErrBad},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Replay(tc.records)
			require.ErrorIs(t, err, tc.want, "err = %v, want %v", err, tc.want)
		})
	}
}

// loadRecord returns a filterload record of f.
func loadRecord(seq uint64, peer string, height int32, f *bip37.Filter) transcript.Record {
	return transcript.Record{Seq: seq, Peer: peer, Height: height, Kind: transcript.KindFilterLoad, Filter: f.Serialize(), Reason: "initial"}
}

// randomElements returns n pseudorandom 20-byte elements.
func randomElements(rng *rand.Rand, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = make([]byte, 20)
		for b := range out[i] {
			out[i][b] = byte(rng.Uint32())
		}
	}
	return out
}

// filterOf returns a filter sized for 10 elements at rate 0.01 holding
// elems.
func filterOf(t testing.TB, tweak uint32, elems ...[]byte) *bip37.Filter {
	t.Helper()
	f, err := bip37.NewFilter(10, 0.01, tweak, bip37.UpdateAll)
	require.NoError(t, err)
	for _, e := range elems {
		f.Add(e)
	}
	return f
}
