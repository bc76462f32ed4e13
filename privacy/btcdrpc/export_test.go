package btcdrpc

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/experiments"
	"github.com/bloomwatch/bloomwatch/privacy/scan"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// exportChain is a synthetic chain of P2PKH payments, co-spends and
// change, plus a block with a bare P2PK output, a 1-of-2 multisig and a
// P2WPKH output spent with a witness, so that every kind of candidate and
// revealed key is exported.
func exportChain(t *testing.T) element.MemChain {
	t.Helper()
	sc, err := experiments.NewSynthChain(experiments.ChainConfig{Seed: 5, Blocks: 40, TxsPerBlock: 6, Users: 30, WalletKeys: 10,
		WalletReceiveEvery: 3, WalletSpendEvery: 7})
	if err != nil {
		t.Fatal(err)
	}
	ch := slices.Clone(sc.Chain)
	k1, k2 := sc.Wallet[0].PubKey, sc.Wallet[1].PubKey
	p2pk, _ := txscript.NewScriptBuilder().AddData(k1).AddOp(txscript.OP_CHECKSIG).Script()
	multi, _ := txscript.NewScriptBuilder().AddOp(txscript.OP_1).AddData(k1).AddData(k2).AddOp(txscript.OP_2).AddOp(txscript.OP_CHECKMULTISIG).Script()
	wpkh, _ := txscript.NewScriptBuilder().AddOp(txscript.OP_0).AddData(btcutil.Hash160(k2)).Script()
	fund := wire.NewMsgTx(wire.TxVersion)
	fund.AddTxIn(&wire.TxIn{PreviousOutPoint: wire.OutPoint{Hash: chainhash.Hash{7}, Index: 0}})
	fund.AddTxOut(wire.NewTxOut(1, p2pk))
	fund.AddTxOut(wire.NewTxOut(1, multi))
	fund.AddTxOut(wire.NewTxOut(1, wpkh))
	spend := wire.NewMsgTx(wire.TxVersion)
	spend.AddTxIn(&wire.TxIn{PreviousOutPoint: wire.OutPoint{Hash: fund.TxHash(), Index: 2}, Witness: wire.TxWitness{make([]byte, 72), k2}})
	spend.AddTxOut(wire.NewTxOut(1, wpkh))
	prev := ch[len(ch)-1].BlockHash()
	for _, txs := range [][]*wire.MsgTx{{fund}, {spend}} {
		b := wire.NewMsgBlock(wire.NewBlockHeader(1, &prev, &chainhash.Hash{}, 0, uint32(len(ch))))
		for _, tx := range txs {
			b.AddTransaction(tx)
		}
		prev = b.BlockHash()
		ch = append(ch, b)
	}
	return ch
}

// sortedUniverse returns the candidates as sorted lines of the element
// file format.
func sortedUniverse(t *testing.T, cands []element.Candidate) []string {
	t.Helper()
	var b bytes.Buffer
	if err := element.WriteCandidates(&b, cands); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	slices.Sort(lines)
	return lines
}

// TestExportUniverseEqualsChainUniverse checks that the exporter writes,
// whatever the number of partitions, exactly the universes the analyzer
// builds in memory (element.ChainUniverse, element.ChainOutpointUniverse), each candidate
// once, holding at most one partition's observations.
func TestExportUniverseEqualsChainUniverse(t *testing.T) {
	ch := exportChain(t)
	ctx := context.Background()
	for _, outpoints := range []bool{false, true} {
		var want element.SliceUniverse
		var err error
		if outpoints {
			want, err = element.ChainOutpointUniverse(ctx, ch, -1)
		} else {
			want, err = element.ChainUniverse(ctx, ch, -1)
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, parts := range []int{1, 3, 16} {
			var out bytes.Buffer
			st, err := ExportUniverse(ctx, ch, ExportConfig{UpTo: -1, Outpoints: outpoints, Partitions: parts, TempDir: t.TempDir()}, &out)
			if err != nil {
				t.Fatal(err)
			}
			got, err := element.ReadCandidates(&out)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(sortedUniverse(t, got), sortedUniverse(t, want)) {
				t.Errorf("outpoints=%v partitions=%d: export differs from the in-memory universe (%d vs %d candidates)", outpoints, parts, len(got), len(want))
			}
			if st.Candidates != uint64(len(want)) || st.Blocks != len(ch) {
				t.Errorf("outpoints=%v partitions=%d: stats %+v", outpoints, parts, st)
			}
			if parts > 1 && st.MaxPartition*uint64(parts)/4 > st.Observations {
				t.Errorf("partitions=%d: %d of %d observations in one partition", parts, st.MaxPartition, st.Observations)
			}
		}
	}
	if !slices.ContainsFunc(mustUniverse(t, ch), func(c element.Candidate) bool { return len(c.Forms) == 2 }) {
		t.Error("no candidate with a revealed key: the chain does not exercise the merge")
	}
}

// mustUniverse returns the chain's in-memory universe.
func mustUniverse(t *testing.T, ch element.Chain) element.SliceUniverse {
	t.Helper()
	u, err := element.ChainUniverse(context.Background(), ch, -1)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestExportOverRPCReadsEachBlockOnce checks the RPC path: with caching
// off the chain is read once, block by block, and the export is the same
// as from memory; a height cap is honoured; bad partition counts fail.
func TestExportOverRPCReadsEachBlockOnce(t *testing.T) {
	ch := exportChain(t)
	node := &fakeNode{blocks: ch}
	addr := serve(t, node)
	c, err := Dial(addr, "user", "pass", 20)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetCaching(false)
	var out bytes.Buffer
	st, err := ExportUniverse(context.Background(), c, ExportConfig{UpTo: -1, TempDir: t.TempDir()}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if st.Blocks != 21 || node.calls["getblock"] != 21 {
		t.Errorf("%d blocks exported, %d getblock calls, want 21 each", st.Blocks, node.calls["getblock"])
	}
	want, err := element.ChainUniverse(context.Background(), ch, 20)
	if err != nil {
		t.Fatal(err)
	}
	got, err := element.ReadCandidates(&out)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sortedUniverse(t, got), sortedUniverse(t, want)) {
		t.Error("export over RPC differs from the in-memory universe")
	}
	if len(c.cache) != 0 {
		t.Errorf("%d blocks cached with caching off", len(c.cache))
	}
	for _, p := range []int{-1, maxPartitions + 1} {
		if _, err := ExportUniverse(context.Background(), ch, ExportConfig{Partitions: p}, &out); !errors.Is(err, ErrExport) {
			t.Errorf("partitions %d: err = %v", p, err)
		}
	}
}

// TestExportSyntheticStreamsBack checks that a synthetic export reads
// back, streamed, as the same candidates.
func TestExportSyntheticStreamsBack(t *testing.T) {
	var out bytes.Buffer
	if err := ExportSynthetic(&out, 3, 1000, true, nil); err != nil {
		t.Fatal(err)
	}
	u := element.NewFileUniverse(&out)
	syn := scan.Synthetic{Seed: 3, Count: 1000, PubKeys: true}
	var c, want element.Candidate
	var n uint64
	for u.Next(&c) {
		syn.Fill(n, &want)
		if !c.Equal(want) {
			t.Fatalf("candidate %d differs", n)
		}
		n++
	}
	if u.Err() != nil || n != 1000 {
		t.Errorf("%d candidates, err %v", n, u.Err())
	}
}
