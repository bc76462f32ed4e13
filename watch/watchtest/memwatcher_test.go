package watchtest

import (
	"errors"
	"testing"

	"github.com/bloomwatch/bloomwatch/watch"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
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
	if err != nil {
		t.Fatal(err)
	}
	payOp := wire.OutPoint{Hash: pay.TxHash(), Index: 0}
	if len(res.Relevant) != 1 || len(res.FalsePositives) != 1 || res.Amounts[pay.TxHash()] != 1000 ||
		len(res.Delta.OutPoints) != 1 || res.Delta.OutPoints[0] != payOp || len(res.Delta.Spent) != 0 {
		t.Fatalf("block 1: %+v", res)
	}
	els, _ := w.FilterElements()
	if len(els.OutPoints) != 1 || len(els.Data) != 2 {
		t.Fatalf("elements %+v", els)
	}
	spend := payTx([]wire.OutPoint{{Hash: pay.TxHash(), Index: 0}}, wire.NewTxOut(900, p2wpkh(7)))
	b2 := c.block(spend)
	if res, err = w.ApplyBlock(b2); err != nil || res.Amounts[spend.TxHash()] != -1000 ||
		len(res.Delta.Spent) != 1 || res.Delta.Spent[0] != payOp {
		t.Fatalf("spend: %+v %v", res, err)
	}
	if w.Balance() != 0 {
		t.Fatalf("balance %d", w.Balance())
	}
	// Applying b2 again (after an element change) counts nothing twice.
	if res, err = w.ApplyBlock(b2); err != nil || len(res.Relevant) != 1 || len(w.Txs()) != 2 {
		t.Fatalf("reapply: %+v %v %d", res, err, len(w.Txs()))
	}
	// A block that does not extend the sync point is refused.
	stray := &memChain{prev: chainhash.Hash{9}, height: 5}
	if _, err := w.ApplyBlock(stray.block()); !errors.Is(err, ErrNotNext) {
		t.Fatalf("stray block: %v", err)
	}
	if d, err := w.Rollback(1); err != nil || len(d.OutPoints) != 1 || d.OutPoints[0] != payOp {
		t.Fatalf("rollback to 1: %+v %v (the spent coin is watched again)", d, err)
	}
	if sp, _ := w.SyncedTo(); sp.Height != 1 || sp.Hash != b1.Hash || w.Balance() != 1000 || len(w.Txs()) != 1 {
		t.Fatalf("after rollback: %+v balance %d txs %d", sp, w.Balance(), len(w.Txs()))
	}
	if d, err := w.Rollback(0); err != nil || len(d.Spent) != 1 || d.Spent[0] != payOp {
		t.Fatalf("rollback to 0: %+v %v (the received coin is gone)", d, err)
	}
	if sp, _ := w.SyncedTo(); sp.Height != -1 || w.Balance() != 0 {
		t.Fatalf("after full rollback: %+v", sp)
	}
	// Mempool: relevant only when it pays or spends the watcher.
	if r, _ := w.ApplyMempoolTx(payTx(nil, wire.NewTxOut(3, p2wpkh(2)))); !r.Relevant || r.Amount != 3 {
		t.Fatalf("mempool pay: %+v", r)
	}
	if r, _ := w.ApplyMempoolTx(noise); r.Relevant {
		t.Fatal("mempool noise relevant")
	}
	if len(w.Mempool()) != 1 {
		t.Fatalf("mempool %v", w.Mempool())
	}
}

func TestMemWatcherGapLimit(t *testing.T) {
	derive := func(i uint32) ([]byte, error) { return p2wpkh(byte(10 + i)), nil }
	w, err := NewMemWatcherGap(1, 3, derive)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(w.Scripts()); n != 3 {
		t.Fatalf("%d scripts, want 3", n)
	}
	c := &memChain{}
	res, err := w.ApplyBlock(c.block(payTx(nil, wire.NewTxOut(1, p2wpkh(12)))))
	if err != nil || len(res.Delta.Data) != 3 {
		t.Fatalf("%+v %v", res, err)
	}
	if n := len(w.Scripts()); n != 6 {
		t.Fatalf("%d scripts after using index 2, want 6", n)
	}
	if _, err := NewMemWatcherGap(1, 0, derive); !errors.Is(err, ErrBadConfig) {
		t.Fatalf("gap 0: %v", err)
	}
	if _, err := w.ApplyBlock(nil); err == nil {
		t.Fatal("nil block accepted")
	}
}
