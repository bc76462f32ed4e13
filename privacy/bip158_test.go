package privacy

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/replay"
	"github.com/bloomwatch/bloomwatch/privacy/stats"
	"github.com/bloomwatch/bloomwatch/transcript"
)

// p2wpkh returns the P2WPKH script of the 20-byte hash filled with b.
func p2wpkh(b byte) []byte {
	s, _ := txscript.NewScriptBuilder().AddOp(txscript.OP_0).AddData(bytes.Repeat([]byte{b}, 20)).Script()
	return s
}

// TestAnalyzeBlockRequests builds a chain where the wallet (key 1) is
// paid in block 2 with key 2 and spends in block 4 to key 3, key 4 is
// paid in blocks 2 and 3, key 5 in block 5: the client asked blocks 2 and
// 4. Keys 2 and 3 appear only in requested blocks (candidates beside the
// wallet), key 4 also in block 3 (not asked: ruled out), key 5 only in
// block 5 (ruled out).
func TestAnalyzeBlockRequests(t *testing.T) {
	coinbase := func(script []byte) *wire.MsgTx {
		tx := wire.NewMsgTx(1)
		tx.AddTxIn(wire.NewTxIn(&wire.OutPoint{Index: wire.MaxPrevOutIndex}, []byte{1}, nil))
		tx.AddTxOut(wire.NewTxOut(50, script))
		return tx
	}
	miner := p2wpkh(0xee)
	pay := func(from wire.OutPoint, scripts ...[]byte) *wire.MsgTx {
		tx := wire.NewMsgTx(2)
		tx.AddTxIn(wire.NewTxIn(&from, nil, nil))
		for _, s := range scripts {
			tx.AddTxOut(wire.NewTxOut(1, s))
		}
		return tx
	}
	var chain element.MemChain
	add := func(txs ...*wire.MsgTx) {
		b := wire.NewMsgBlock(&wire.BlockHeader{Nonce: uint32(len(chain))})
		b.AddTransaction(coinbase(miner))
		for _, tx := range txs {
			b.AddTransaction(tx)
		}
		chain = append(chain, b)
	}
	add()                                        // 0
	add()                                        // 1
	funding := chain[1].Transactions[0].TxHash() //
	payment := pay(wire.OutPoint{Hash: funding}, p2wpkh(1), p2wpkh(2), p2wpkh(4))
	add(payment)                                                                // 2: wallet paid
	add(pay(wire.OutPoint{Hash: payment.TxHash(), Index: 2}, p2wpkh(4)))        // 3
	add(pay(wire.OutPoint{Hash: payment.TxHash()}, p2wpkh(3)))                  // 4: wallet spends
	add(pay(wire.OutPoint{Hash: chain[2].Transactions[0].TxHash()}, p2wpkh(5))) // 5
	at := time.Unix(1_700_000_000, 0)
	recs := []transcript.Record{
		{Seq: 0, Time: at, Peer: "p", Height: 2, Kind: transcript.KindGetCFilters, Count: 4},
		{Seq: 1, Time: at, Peer: "p", Height: 2, Kind: transcript.KindGetBlock, Count: 1, Reason: transcript.ReasonSync},
		{Seq: 2, Time: at, Peer: "p", Height: 4, Kind: transcript.KindGetBlock, Count: 1, Reason: transcript.ReasonSync},
	}
	truth := []element.Candidate{{Forms: [][]byte{bytes.Repeat([]byte{1}, 20)}}}
	rep, err := AnalyzeBlockRequests(context.Background(), recs, chain, truth, -1)
	require.NoError(t, err)
	require.Equal(t, int32(2), rep.From)
	require.Equal(t, int32(5), rep.To)
	// Appearing in 2..5: the miner key, keys 1 to 5.
	require.Equal(t, 6, rep.Appearing)
	require.Equal(t, 3, rep.Candidates, "keys 1, 2 and 3")
	require.Equal(t, 1, rep.Members)
	require.InDelta(t, 1.0/3, rep.Precision, 1e-12)
	require.InDelta(t, stats.Entropy(1, 2), rep.Entropy, 1e-12)
	require.Equal(t, 2, rep.WalletBlocks)
	require.Zero(t, rep.FalsePositiveBlocks)
	require.Len(t, rep.Curve, 2)
	// After block 2: keys 1, 2, 4 and the miner's (block 3, which rules
	// out the last two, comes later).
	require.Equal(t, 4, rep.Curve[0].Candidates)
	require.Equal(t, int32(2), rep.Curve[0].Height)

	_, err = AnalyzeBlockRequests(context.Background(), recs[1:2], chain, nil, -1)
	require.ErrorIs(t, err, replay.ErrNoFilters)
}
