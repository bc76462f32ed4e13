package privacy

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/internal/synth"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// testChain builds blocks of hand-made transactions.
type testChain struct {
	blocks MemChain
	next   int
}

// keyPair is a synthetic key: a 33-byte public-key-like string and its
// real hash160.
type keyPair struct {
	PubKey  []byte
	Hash160 []byte
}

// testKey returns a deterministic key.
func testKey(i uint64) keyPair {
	pk, h := synth.Key(777, 9, i)
	return keyPair{PubKey: pk, Hash160: h}
}

// block appends a block holding txs after a fresh coinbase.
func (c *testChain) block(txs ...*wire.MsgTx) {
	c.next++
	cb := wire.NewMsgTx(wire.TxVersion)
	cb.AddTxIn(&wire.TxIn{PreviousOutPoint: wire.OutPoint{Index: wire.MaxPrevOutIndex}, SignatureScript: synth.HeightScript(c.next + 100)})
	cb.AddTxOut(wire.NewTxOut(1, []byte{txscript.OP_TRUE}))
	b := wire.NewMsgBlock(wire.NewBlockHeader(1, &chainhash.Hash{}, &chainhash.Hash{}, 0, uint32(c.next)))
	b.AddTransaction(cb)
	for _, tx := range txs {
		b.AddTransaction(tx)
	}
	c.blocks = append(c.blocks, b)
}

// pay returns a transaction spending ins (each revealing its key) and
// paying one P2PKH output per key in to.
func pay(ins []wire.OutPoint, inKeys []keyPair, to ...keyPair) *wire.MsgTx {
	tx := wire.NewMsgTx(wire.TxVersion)
	for i := range ins {
		tx.AddTxIn(wire.NewTxIn(&ins[i], synth.SpendScript(inKeys[i].PubKey), nil))
	}
	if len(ins) == 0 {
		tx.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: chainhash.Hash{byte(len(to))}, Index: uint32(len(to))}, nil, nil))
	}
	for _, k := range to {
		tx.AddTxOut(wire.NewTxOut(1000, synth.P2PKH(k.Hash160)))
	}
	return tx
}

func TestOutputCandidates(t *testing.T) {
	k1, k2 := testKey(1), testKey(2)
	multisig, _ := txscript.NewScriptBuilder().AddOp(txscript.OP_1).AddData(k1.PubKey).AddData(k2.PubKey).
		AddOp(txscript.OP_2).AddOp(txscript.OP_CHECKMULTISIG).Script()
	p2pk, _ := txscript.NewScriptBuilder().AddData(k1.PubKey).AddOp(txscript.OP_CHECKSIG).Script()
	p2wpkh, _ := txscript.NewScriptBuilder().AddOp(txscript.OP_0).AddData(k1.Hash160).Script()
	p2sh, _ := txscript.NewScriptBuilder().AddOp(txscript.OP_HASH160).AddData(k2.Hash160).AddOp(txscript.OP_EQUAL).Script()
	nulldata, _ := txscript.NewScriptBuilder().AddOp(txscript.OP_RETURN).AddData([]byte("hello")).Script()
	tests := []struct {
		name   string
		script []byte
		want   [][][]byte
	}{
		{"p2pkh", synth.P2PKH(k1.Hash160), [][][]byte{{k1.Hash160}}},
		{"p2wpkh shares the hash160", p2wpkh, [][][]byte{{k1.Hash160}}},
		{"p2sh", p2sh, [][][]byte{{k2.Hash160}}},
		{"p2pk keyed by hash160", p2pk, [][][]byte{{k1.Hash160, k1.PubKey}}},
		{"bare multisig: every key", multisig, [][][]byte{{k1.Hash160, k1.PubKey}, {k2.Hash160, k2.PubKey}}},
		{"null data pays no one", nulldata, nil},
		{"garbage", []byte{0x4c}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := outputCandidates(tc.script)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d candidates, want %d", len(got), len(tc.want))
			}
			for i := range got {
				if !got[i].Equal(Candidate{Forms: tc.want[i]}) {
					t.Errorf("candidate %d = %x, want %x", i, got[i].Forms, tc.want[i])
				}
			}
		})
	}
	if !bytes.Equal(k1.Hash160, btcutil.Hash160(k1.PubKey)) {
		t.Fatal("synthetic key hash is not hash160(pubkey)")
	}
}

func TestChainUniverse(t *testing.T) {
	a, b, c := testKey(1), testKey(2), testKey(3)
	var ch testChain
	fund := pay(nil, nil, a, b)
	ch.block(fund)
	// a spends, revealing its public key; the output pays c and b again.
	spend := pay([]wire.OutPoint{{Hash: fund.TxHash(), Index: 0}}, []keyPair{a}, c, b)
	ch.block(spend)
	u, err := ChainUniverse(context.Background(), ch.blocks, -1)
	if err != nil {
		t.Fatal(err)
	}
	want := []Candidate{{Forms: [][]byte{a.Hash160, a.PubKey}}, {Forms: [][]byte{b.Hash160}}, {Forms: [][]byte{c.Hash160}, FirstSeen: 1}}
	if len(u) != len(want) {
		t.Fatalf("universe %d candidates, want %d (coinbase OP_TRUE pays no one)", len(u), len(want))
	}
	for i := range want {
		if !u[i].Equal(want[i]) {
			t.Errorf("candidate %d = %x, want %x", i, u[i].Forms, want[i].Forms)
		}
	}
	upTo0, err := ChainUniverse(context.Background(), ch.blocks, 0)
	if err != nil || len(upTo0) != 2 || len(upTo0[0].Forms) != 1 {
		t.Errorf("up to height 0: %v, %v", upTo0, err)
	}
	if _, err := (MemChain{}).BlockAt(0); !errors.Is(err, ErrChain) {
		t.Errorf("err = %v, want ErrChain", err)
	}
}

func TestGraphPruning(t *testing.T) {
	w0, w1, w2 := testKey(10), testKey(11), testKey(12)
	x, y := testKey(20), testKey(21) // unrelated addresses the filter matches anyway
	payee := testKey(30)
	var ch testChain
	in0, in1 := pay(nil, nil, w0), pay(nil, nil, w1, y)
	ch.block(in0, in1, pay(nil, nil, x))
	// The wallet co-spends w0 and w1, pays someone and takes change to w2.
	ch.block(pay([]wire.OutPoint{{Hash: in0.TxHash()}, {Hash: in1.TxHash()}}, []keyPair{w0, w1}, payee, w2))
	wallet := []Candidate{{Forms: [][]byte{w0.Hash160}}, {Forms: [][]byte{w1.Hash160}}, {Forms: [][]byte{w2.Hash160}}}
	inFilter := append(append([]Candidate{}, wallet...), Candidate{Forms: [][]byte{x.Hash160}}, Candidate{Forms: [][]byte{y.Hash160}})
	f := mustFilter(t, 100, 0.0001, 1, bip37.UpdateNone, inFilter...)
	u, err := ChainUniverse(context.Background(), ch.blocks, -1)
	if err != nil {
		t.Fatal(err)
	}
	recs := []transcript.Record{loadRecord(0, "a", 0, f), {Seq: 1, Peer: "a", Kind: transcript.KindFilterAdd, Data: y.Hash160}}
	rep := analyze(t, Input{Records: recs, Universe: Stream(u), Truth: wallet, Chain: ch.blocks, Attacks: Attacks{Graph: true}})
	single, graph := lastPoint(t, rep, StageSingle), lastPoint(t, rep, StageGraph)
	if single.Matched != 5 || single.FalsePositives != 2 {
		t.Fatalf("single stage matched %d (fp %d), want 5 (2)", single.Matched, single.FalsePositives)
	}
	// x is isolated and pruned; y is kept only because filteradd revealed it.
	if graph.Matched != 4 || graph.TruePositives != 3 || graph.Recall != 1 {
		t.Errorf("graph stage matched %d tp %d recall %v, want 4 3 1", graph.Matched, graph.TruePositives, graph.Recall)
	}
	for _, l := range rep.Final {
		if l.Forms[0] == hexOf(x.Hash160) {
			t.Error("isolated false positive survived the graph attack")
		}
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
	w := testKey(40)
	later := testKey(41)
	var ch testChain
	// Twenty blocks, each paying the wallet and a few strangers.
	for i := range 20 {
		ch.block(pay(nil, nil, w, testKey(uint64(100+i))), pay(nil, nil, testKey(uint64(200+i))), pay(nil, nil, later))
	}
	tight := mustFilter(t, 1, 0.01, 3, bip37.UpdateAll, Candidate{Forms: [][]byte{w.Hash160}})
	recs := []transcript.Record{
		loadRecord(0, "a", 4, tight), // serves blocks 5..14
		{Seq: 1, Peer: "a", Height: 9, Kind: transcript.KindFilterAdd, Data: later.Hash160}, // from block 10
		loadRecord(2, "a", 14, tight), // serves blocks 15..19
	}
	truth := []Candidate{{Forms: [][]byte{w.Hash160}}, {Forms: [][]byte{later.Hash160}}}
	u, err := ChainUniverse(context.Background(), ch.blocks, -1)
	if err != nil {
		t.Fatal(err)
	}
	rep := analyze(t, Input{Records: recs, Universe: Stream(u), Truth: truth, Chain: ch.blocks, Attacks: Attacks{Saturation: true}})
	c := rep.Curve(StageSaturation)
	if len(c.Points) != 15 {
		t.Fatalf("%d saturation points, want 10 + 5", len(c.Points))
	}
	// The same replay by hand.
	f := tight.Clone()
	var matched, wallet uint64
	for h := 5; h <= 14; h++ {
		if h == 10 {
			f.Add(later.Hash160)
		}
		_, idx := bip37.FilterBlock(f, ch.blocks[h])
		matched += uint64(len(idx))
		for _, i := range idx {
			if i == 1 || i == 3 { // the payments to w and to later
				wallet++
			}
		}
	}
	if matched == 10*4 || wallet < 10 {
		t.Fatalf("hand replay matched %d (wallet %d): the filter must saturate part-way", matched, wallet)
	}
	p := c.Points[9]
	if p.Height != 14 || p.TxMatched != matched || p.Fill != float64(f.BitsSet())/float64(f.NumBits()) || p.FPRate != f.CurrentFPRate() {
		t.Errorf("point %+v, want %d matched at fill %v", p, matched, float64(f.BitsSet())/float64(f.NumBits()))
	}
	if p.TxWallet != wallet {
		t.Errorf("wallet txs %d, want %d", p.TxWallet, wallet)
	}
	if c.Points[10].Height != 15 || c.Points[10].TxMatched > c.Points[9].TxMatched {
		t.Errorf("second generation did not restart its counts: %+v", c.Points[10])
	}
}

func TestWalletTxs(t *testing.T) {
	w, change, stranger := testKey(50), testKey(51), testKey(52)
	var ch testChain
	fund := pay(nil, nil, w)
	ch.block(fund, pay(nil, nil, stranger))
	// The wallet spends w's output to the stranger with change; the
	// stranger then spends what it was paid, which is not the wallet's.
	spend := pay([]wire.OutPoint{{Hash: fund.TxHash()}}, []keyPair{w}, stranger, change)
	ch.block(spend)
	ch.block(pay([]wire.OutPoint{{Hash: spend.TxHash()}}, []keyPair{stranger}, stranger))
	truth := NewElementSetFromCandidates([]Candidate{{Forms: [][]byte{w.Hash160}}, {Forms: [][]byte{change.Hash160}}})
	wt := NewWalletTxs(truth)
	want := [][]bool{{false, true, false}, {false, true}, {false, false}}
	for h, b := range ch.blocks {
		if got := wt.Block(b); !slices.Equal(got, want[h]) {
			t.Errorf("block %d: %v, want %v", h, got, want[h])
		}
	}
	if !wt.PaysWallet(synth.P2PKH(w.Hash160)) || wt.PaysWallet(synth.P2PKH(stranger.Hash160)) {
		t.Error("PaysWallet does not tell the wallet's script from a stranger's")
	}
	if got := NewWalletTxs(nil).Block(ch.blocks[0]); slices.Contains(got, true) {
		t.Errorf("no truth marked %v", got)
	}
}
