package watchtest

import (
	"testing"

	"github.com/bloomwatch/bloomwatch/watch"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// p2wpkh returns a P2WPKH script for a 20-byte program filled with b.
func p2wpkh(b byte) []byte {
	s := []byte{0x00, 0x14}
	for range 20 {
		s = append(s, b)
	}
	return s
}

// payTx returns a tx spending ins and paying values to scripts.
func payTx(ins []wire.OutPoint, outs ...*wire.TxOut) *wire.MsgTx {
	tx := wire.NewMsgTx(2)
	for _, op := range ins {
		tx.AddTxIn(wire.NewTxIn(&op, nil, nil))
	}
	if len(ins) == 0 {
		tx.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: chainhash.Hash{0xee}, Index: uint32(len(outs))}, nil, nil))
	}
	for _, o := range outs {
		tx.AddTxOut(o)
	}
	return tx
}

// chainOf builds filtered blocks at heights from.. with the given txs.
type memChain struct {
	prev   chainhash.Hash
	height int32
}

func (c *memChain) block(txs ...*wire.MsgTx) *watch.FilteredBlock {
	c.height++
	hdr := wire.BlockHeader{Version: 4, PrevBlock: c.prev, Nonce: uint32(c.height)}
	fb := &watch.FilteredBlock{Height: c.height, Hash: hdr.BlockHash(), Header: hdr, Txs: txs, TotalTxs: uint32(len(txs) + 1)}
	for i := range txs {
		fb.TxIndexes = append(fb.TxIndexes, uint32(i+1))
	}
	c.prev = fb.Hash
	return fb
}

func TestMemWatcherApplySpendRollback(t *testing.T) {
	w := NewMemWatcher(1, p2wpkh(1), p2wpkh(2))
	c := &memChain{}
	pay := payTx(nil, wire.NewTxOut(1000, p2wpkh(1)), wire.NewTxOut(5, p2wpkh(9)))
	noise := payTx(nil, wire.NewTxOut(7, p2wpkh(8)))
	b1 := c.block(pay, noise)
	res, err := w.ApplyBlock(b1)
	require.NoError(t, err)
	payOp := wire.OutPoint{Hash: pay.TxHash(), Index: 0}
	require.Len(t, res.Relevant, 1, "block 1: %+v", res)
	require.Len(t, res.FalsePositives, 1, "block 1: %+v", res)
	require.Equal(t, int64(1000), res.Amounts[pay.TxHash()], "block 1: %+v", res)
	require.Len(t, res.Delta.OutPoints, 1, "block 1: %+v", res)
	require.Equal(t, payOp, res.Delta.OutPoints[0], "block 1: %+v", res)
	require.Len(t, res.Delta.Spent, 0, "block 1: %+v", res)
	els, _ := w.FilterElements()
	require.Len(t, els.OutPoints, 1, "elements %+v", els)
	require.Len(t, els.Data, 2, "elements %+v", els)
	spend := payTx([]wire.OutPoint{{Hash: pay.TxHash(), Index: 0}}, wire.NewTxOut(900, p2wpkh(7)))
	b2 := c.block(spend)
	res, err = w.ApplyBlock(b2)
	require.NoError(t, err, "spend: %+v", res)
	require.Equal(t, int64(-1000), res.Amounts[spend.TxHash()], "spend: %+v %v", res, err)
	require.Len(t, res.Delta.Spent, 1, "spend: %+v %v", res, err)
	require.Equal(t, payOp, res.Delta.Spent[0], "spend: %+v %v", res, err)
	require.Equal(t, int64(0), w.Balance(), "balance %d", w.Balance())
	// Applying b2 again (after an element change) counts nothing twice.
	res, err = w.ApplyBlock(b2)
	require.NoError(t, err, "reapply: %+v %v %d", res, err, len(w.Txs()))
	require.Len(t, res.Relevant, 1, "reapply: %+v %v %d", res, err, len(w.Txs()))
	require.Len(t, w.Txs(), 2, "reapply: %+v %v %d", res, err, len(w.Txs()))
	// A block that does not extend the sync point is refused.
	stray := &memChain{prev: chainhash.Hash{9}, height: 5}
	_, err = w.ApplyBlock(stray.block())
	require.ErrorIs(t, err, ErrNotNext, "stray block: %v", err)
	d, err := w.Rollback(1)
	require.NoError(t, err, "rollback to 1: %+v %v (the spent coin is watched again)", d, err)
	require.Len(t, d.OutPoints, 1, "rollback to 1: %+v %v (the spent coin is watched again)", d, err)
	require.Equal(t, payOp, d.OutPoints[0], "rollback to 1: %+v %v (the spent coin is watched again)", d, err)
	sp, _ := w.SyncedTo()
	require.Equal(t, int32(1), sp.Height, "after rollback: %+v balance %d txs %d", sp, w.Balance(), len(w.Txs()))
	require.Equal(t, b1.Hash, sp.Hash, "after rollback: %+v balance %d txs %d", sp, w.Balance(), len(w.Txs()))
	require.Equal(t, int64(1000), w.Balance(), "after rollback: %+v balance %d txs %d", sp, w.Balance(), len(w.Txs()))
	require.Len(t, w.Txs(), 1, "after rollback: %+v balance %d txs %d", sp, w.Balance(), len(w.Txs()))
	d, err = w.Rollback(0)
	require.NoError(t, err, "rollback to 0: %+v %v (the received coin is gone)", d, err)
	require.Len(t, d.Spent, 1, "rollback to 0: %+v %v (the received coin is gone)", d, err)
	require.Equal(t, payOp, d.Spent[0], "rollback to 0: %+v %v (the received coin is gone)", d, err)
	sp, _ = w.SyncedTo()
	require.Equal(t, int32(-1), sp.Height, "after full rollback: %+v", sp)
	require.Equal(t, int64(0), w.Balance(), "after full rollback: %+v", sp)
	// Mempool: relevant only when it pays or spends the watcher.
	r, _ := w.ApplyMempoolTx(payTx(nil, wire.NewTxOut(3, p2wpkh(2))))
	require.True(t, r.Relevant, "mempool pay: %+v", r)
	require.Equal(t, int64(3), r.Amount, "mempool pay: %+v", r)
	r, _ = w.ApplyMempoolTx(noise)
	require.False(t, r.Relevant, "mempool noise relevant")
	require.Len(t, w.Mempool(), 1, "mempool %v", w.Mempool())
}

func TestMemWatcherGapLimit(t *testing.T) {
	derive := func(i uint32) ([]byte, error) { return p2wpkh(byte(10 + i)), nil }
	w, err := NewMemWatcherGap(1, 3, derive)
	require.NoError(t, err)
	n := len(w.Scripts())
	require.Equal(t, 3, n, "%d scripts, want 3", n)
	c := &memChain{}
	res, err := w.ApplyBlock(c.block(payTx(nil, wire.NewTxOut(1, p2wpkh(12)))))
	require.NoError(t, err, "%+v", res)
	require.Len(t, res.Delta.Data, 3, "%+v %v", res, err)
	n = len(w.Scripts())
	require.Equal(t, 6, n, "%d scripts after using index 2, want 6", n)
	_, err = NewMemWatcherGap(1, 0, derive)
	require.ErrorIs(t, err, ErrBadConfig, "gap 0: %v", err)
	_, err = w.ApplyBlock(nil)
	require.Error(t, err, "nil block accepted")
}
