package privacy

import (
	"context"
	"testing"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/internal/testkit"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

func TestGraphPruning(t *testing.T) {
	w0, w1, w2 := testkit.NewKey(10), testkit.NewKey(11), testkit.NewKey(12)
	x, y := testkit.NewKey(20), testkit.NewKey(21) // unrelated addresses the filter matches anyway
	payee := testkit.NewKey(30)
	var ch testkit.Chain
	in0, in1 := testkit.Pay(nil, nil, w0), testkit.Pay(nil, nil, w1, y)
	ch.Block(in0, in1, testkit.Pay(nil, nil, x))
	// The wallet co-spends w0 and w1, pays someone and takes change to w2.
	ch.Block(testkit.Pay([]wire.OutPoint{{Hash: in0.TxHash()}, {Hash: in1.TxHash()}}, []testkit.Key{w0, w1}, payee, w2))
	wallet := []element.Candidate{{Forms: [][]byte{w0.Hash160}}, {Forms: [][]byte{w1.Hash160}}, {Forms: [][]byte{w2.Hash160}}}
	inFilter := append(append([]element.Candidate{}, wallet...), element.Candidate{Forms: [][]byte{x.Hash160}}, element.Candidate{Forms: [][]byte{y.Hash160}})
	f := testkit.MustFilter(t, 100, 0.0001, 1, bip37.UpdateNone, inFilter...)
	u, err := element.ChainUniverse(context.Background(), ch.Blocks, -1)
	require.NoError(t, err)
	recs := []transcript.Record{testkit.LoadRecord(0, "a", 0, f), {Seq: 1, Peer: "a", Kind: transcript.KindFilterAdd, Data: y.Hash160}}
	rep := analyze(t, Input{Records: recs, Universe: element.Stream(u), Truth: wallet, Chain: ch.Blocks, Attacks: Attacks{Graph: true}})
	single, graph := lastPoint(t, rep, StageSingle), lastPoint(t, rep, StageGraph)
	require.Equal(t, uint64(5), single.Matched, "single stage matched %d (fp %d), want 5 (2)", single.Matched, single.FalsePositives)
	require.Equal(t, uint64(2), single.FalsePositives, "single stage matched %d (fp %d), want 5 (2)", single.Matched, single.FalsePositives)
	// x is isolated and pruned; y is kept only because filteradd revealed it.
	require.Equal(t, uint64(4), graph.Matched, "graph stage matched %d tp %d recall %v, want 4 3 1", graph.Matched, graph.TruePositives, graph.Recall)
	require.Equal(t, uint64(3), graph.TruePositives, "graph stage matched %d tp %d recall %v, want 4 3 1", graph.Matched, graph.TruePositives, graph.Recall)
	require.Equal(t, float64(1), graph.Recall, "graph stage matched %d tp %d recall %v, want 4 3 1", graph.Matched, graph.TruePositives, graph.Recall)
	for _, l := range rep.Final {
		require.NotEqual(t, hexOf(x.Hash160), l.Forms[0], "isolated false positive survived the graph attack")
	}
}

// hexOf is hex.EncodeToString.
func hexOf(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, x := range b {
		out = append(out, digits[x>>4], digits[x&0xf])
	}
	return string(out)
}

func TestSaturationReplay(t *testing.T) {
	w := testkit.NewKey(40)
	later := testkit.NewKey(41)
	var ch testkit.Chain
	// Twenty blocks, each paying the wallet and a few strangers.
	for i := range 20 {
		ch.Block(testkit.Pay(nil, nil, w, testkit.NewKey(uint64(100+i))), testkit.Pay(nil, nil, testkit.NewKey(uint64(200+i))), testkit.Pay(nil, nil, later))
	}
	tight := testkit.MustFilter(t, 1, 0.01, 3, bip37.UpdateAll, element.Candidate{Forms: [][]byte{w.Hash160}})
	recs := []transcript.Record{
		testkit.LoadRecord(0, "a", 4, tight),                                                // serves blocks 5..14
		{Seq: 1, Peer: "a", Height: 9, Kind: transcript.KindFilterAdd, Data: later.Hash160}, // from block 10
		testkit.LoadRecord(2, "a", 14, tight),                                               // serves blocks 15..19
	}
	truth := []element.Candidate{{Forms: [][]byte{w.Hash160}}, {Forms: [][]byte{later.Hash160}}}
	u, err := element.ChainUniverse(context.Background(), ch.Blocks, -1)
	require.NoError(t, err)
	rep := analyze(t, Input{Records: recs, Universe: element.Stream(u), Truth: truth, Chain: ch.Blocks, Attacks: Attacks{Saturation: true}})
	c := rep.Curve(StageSaturation)
	require.Len(t, c.Points, 15, "%d saturation points, want 10 + 5", len(c.Points))
	// The same replay by hand.
	f := tight.Clone()
	var matched, wallet uint64
	for h := 5; h <= 14; h++ {
		if h == 10 {
			f.Add(later.Hash160)
		}
		_, idx := bip37.FilterBlock(f, ch.Blocks[h])
		matched += uint64(len(idx))
		for _, i := range idx {
			if i == 1 || i == 3 { // the payments to w and to later
				wallet++
			}
		}
	}
	require.NotEqual(t, uint64(10*4), matched, "hand replay matched %d (wallet %d): the filter must saturate part-way", matched, wallet)
	require.GreaterOrEqual(t, wallet, uint64(10), "hand replay matched %d (wallet %d): the filter must saturate part-way", matched, wallet)
	p := c.Points[9]
	require.Equal(t, int32(14), p.Height, "point %+v, want %d matched at fill %v", p, matched, float64(f.BitsSet())/float64(f.NumBits()))
	require.Equal(t, matched, p.TxMatched, "point %+v, want %d matched at fill %v", p, matched, float64(f.BitsSet())/float64(f.NumBits()))
	require.Equal(t, float64(f.BitsSet())/float64(f.NumBits()), p.Fill, "point %+v, want %d matched at fill %v", p, matched, float64(f.BitsSet())/float64(f.NumBits()))
	require.Equal(t, f.CurrentFPRate(), p.FPRate, "point %+v, want %d matched at fill %v", p, matched, float64(f.BitsSet())/float64(f.NumBits()))
	require.Equal(t, wallet, p.TxWallet, "wallet txs %d, want %d", p.TxWallet, wallet)
	require.Equal(t, int32(15), c.Points[10].Height, "second generation did not restart its counts: %+v", c.Points[10])
	require.LessOrEqual(t, c.Points[10].TxMatched, c.Points[9].TxMatched, "second generation did not restart its counts: %+v", c.Points[10])
}
