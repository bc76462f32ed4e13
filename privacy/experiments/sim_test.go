package experiments

import (
	"testing"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/stretchr/testify/require"
)

// testKey returns a deterministic key of a stream no experiment uses.
func testKey(i uint64) Key { return synthKey(777, 9, i) }

func TestSimulate(t *testing.T) {
	keys := make([]Key, 10)
	for i := range keys {
		keys[i] = testKey(uint64(500 + i))
	}
	decoy := testKey(600)
	sc := Scenario{Seed: 1, InitialKeys: 2, Peers: 2, Steps: []Step{
		{Kind: StepNewKeys, Height: 10, Count: 1},
		{Kind: StepRestart, Height: 20},
		{Kind: StepNewPeer, Height: 30},
		{Kind: StepNewKeys, Height: 40, Count: 2},
	}}
	base := Policy{Name: "base", FPRate: 0.001, BothForms: true, Headroom: 2, FilterAdd: true, Flags: bip37.UpdateAll}
	persistent := base
	persistent.PersistentTweak, persistent.Headroom = true, 100
	noAdd := base
	noAdd.FilterAdd = false
	oneForm := base
	oneForm.BothForms, oneForm.Decoys = false, []Key{decoy}
	tests := []struct {
		name        string
		p           Policy
		wantKinds   string // l = filterload, a = filteradd
		wantTweaks  int
		wantReasons []string
	}{
		// initial on 2 peers; 1 key x 2 forms x 2 peers via filteradd;
		// restart reload on 2 peers; new peer; 2 keys = 4 elements exceed
		// the headroom of 2: resize on 3 peers.
		{"bitcoinj-like", base, "ll" + "aaaa" + "ll" + "l" + "lll", 2, []string{transcript.ReasonInitial, transcript.ReasonNewKey, transcript.ReasonRestart, transcript.ReasonNewPeer, transcript.ReasonResize}},
		{"persistent", persistent, "ll" + "aaaa" + "ll" + "l" + "aaaaaaaaaaaa", 1, []string{transcript.ReasonInitial, transcript.ReasonNewKey, transcript.ReasonRestart, transcript.ReasonNewPeer}},
		{"no filteradd", noAdd, "ll" + "ll" + "ll" + "l" + "lll", 2, []string{transcript.ReasonInitial, transcript.ReasonNewKey, transcript.ReasonRestart, transcript.ReasonNewPeer}},
		{"one form with a decoy", oneForm, "ll" + "aa" + "ll" + "l" + "aaaaaa", 2, []string{transcript.ReasonInitial, transcript.ReasonNewKey, transcript.ReasonRestart, transcript.ReasonNewPeer}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := Simulate(tc.p, sc, keys)
			require.NoError(t, err)
			kinds := ""
			tweaks := map[uint32]bool{}
			reasons := map[string]bool{}
			var last *bip37.Filter
			for i, r := range recs {
				require.Equal(t, uint64(i), r.Seq, "seq %d at %d", r.Seq, i)
				reasons[r.Reason] = true
				switch r.Kind {
				case transcript.KindFilterLoad:
					kinds += "l"
					f, err := bip37.Deserialize(r.Filter)
					require.NoError(t, err)
					tweaks[f.Tweak()] = true
					last = f
				case transcript.KindFilterAdd:
					kinds += "a"
				}
			}
			require.Equal(t, tc.wantKinds, kinds, "kinds %q, want %q", kinds, tc.wantKinds)
			require.Len(t, tweaks, tc.wantTweaks, "%d distinct tweaks, want %d", len(tweaks), tc.wantTweaks)
			for _, r := range tc.wantReasons {
				require.True(t, reasons[r], "no %q record", r)
			}
			// The last full filter holds every key loaded before it.
			require.True(t, last.Matches(keys[0].Hash160), "last filter misses the first key's forms")
			require.Equal(t, tc.p.BothForms, last.Matches(keys[0].PubKey), "last filter misses the first key's forms")
			require.False(t, len(tc.p.Decoys) > 0 && !last.Matches(decoy.Hash160), "decoy not inserted")
		})
	}
	_, err := Simulate(base, Scenario{InitialKeys: 20, Peers: 1}, keys)
	require.ErrorIs(t, err, ErrBadConfig, "too few keys: err = %v", err)
	_, err = Simulate(Policy{FPRate: 1}, sc, keys)
	require.ErrorIs(t, err, ErrBadConfig, "bad rate: err = %v", err)
}
