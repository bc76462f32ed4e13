package btcdrpc

import (
	"bytes"
	"context"
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
	"github.com/stretchr/testify/require"
)

// exportChain is a synthetic chain of P2PKH payments, co-spends and
// change, plus a block with a bare P2PK output, a 1-of-2 multisig and a
// P2WPKH output spent with a witness, so that every kind of candidate and
// revealed key is exported.
func exportChain(t *testing.T) element.MemChain {
	t.Helper()
	sc, err := experiments.NewSynthChain(experiments.ChainConfig{Seed: 5, Blocks: 40, TxsPerBlock: 6, Users: 30, WalletKeys: 10,
		WalletReceiveEvery: 3, WalletSpendEvery: 7})
	require.NoError(t, err)
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
	require.NoError(t, element.WriteCandidates(&b, cands))
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
		require.NoError(t, err)
		for _, parts := range []int{1, 3, 16} {
			var out bytes.Buffer
			st, err := ExportUniverse(ctx, ch, ExportConfig{UpTo: -1, Outpoints: outpoints, Partitions: parts, TempDir: t.TempDir()}, &out)
			require.NoError(t, err)
			got, err := element.ReadCandidates(&out)
			require.NoError(t, err)
			require.True(t, slices.Equal(sortedUniverse(t, got), sortedUniverse(t, want)), "outpoints=%v partitions=%d: export differs from the in-memory universe (%d vs %d candidates)", outpoints, parts, len(got), len(want))
			require.Equal(t, uint64(len(want)), st.Candidates, "outpoints=%v partitions=%d: stats %+v", outpoints, parts, st)
			require.Equal(t, len(ch), st.Blocks, "outpoints=%v partitions=%d: stats %+v", outpoints, parts, st)
			require.False(t, parts > 1 && st.MaxPartition*uint64(parts)/4 > st.Observations, "partitions=%d: %d of %d observations in one partition", parts, st.MaxPartition, st.Observations)
		}
	}
	require.True(t, slices.ContainsFunc(mustUniverse(t, ch), func(c element.Candidate) bool { return len(c.Forms) == 2 }), "no candidate with a revealed key: the chain does not exercise the merge")
}

// mustUniverse returns the chain's in-memory universe.
func mustUniverse(t *testing.T, ch element.Chain) element.SliceUniverse {
	t.Helper()
	u, err := element.ChainUniverse(context.Background(), ch, -1)
	require.NoError(t, err)
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
	require.NoError(t, err)
	defer c.Close()
	c.SetCaching(false)
	var out bytes.Buffer
	st, err := ExportUniverse(context.Background(), c, ExportConfig{UpTo: -1, TempDir: t.TempDir()}, &out)
	require.NoError(t, err)
	require.Equal(t, 21, st.Blocks, "%d blocks exported, %d getblock calls, want 21 each", st.Blocks, node.calls["getblock"])
	require.Equal(t, 21, node.calls["getblock"], "%d blocks exported, %d getblock calls, want 21 each", st.Blocks, node.calls["getblock"])
	want, err := element.ChainUniverse(context.Background(), ch, 20)
	require.NoError(t, err)
	got, err := element.ReadCandidates(&out)
	require.NoError(t, err)
	require.True(t, slices.Equal(sortedUniverse(t, got), sortedUniverse(t, want)), "export over RPC differs from the in-memory universe")
	require.Len(t, c.cache, 0, "%d blocks cached with caching off", len(c.cache))
	for _, p := range []int{-1, maxPartitions + 1} {
		_, err := ExportUniverse(context.Background(), ch, ExportConfig{Partitions: p}, &out)
		require.ErrorIs(t, err, ErrExport, "partitions %d: err = %v", p, err)
	}
}

// TestExportSyntheticStreamsBack checks that a synthetic export reads
// back, streamed, as the same candidates.
func TestExportSyntheticStreamsBack(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, ExportSynthetic(&out, 3, 1000, true, nil))
	u := element.NewFileUniverse(&out)
	syn := scan.Synthetic{Seed: 3, Count: 1000, PubKeys: true}
	var c, want element.Candidate
	var n uint64
	for u.Next(&c) {
		syn.Fill(n, &want)
		require.True(t, c.Equal(want), "candidate %d differs", n)
		n++
	}
	require.NoError(t, u.Err(), "%d candidates", n)
	require.Equal(t, uint64(1000), n, "%d candidates, err %v", n, u.Err())
}
