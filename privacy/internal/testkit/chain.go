package testkit

import (
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/internal/synth"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// Chain builds blocks of hand-made transactions; its zero value is an
// empty chain.
type Chain struct {
	// Blocks are the blocks built so far, the first at height 0.
	Blocks element.MemChain
	next   int
}

// Key is a synthetic key: a 33-byte public-key-like string and its real
// hash160.
type Key struct {
	PubKey  []byte
	Hash160 []byte
}

// NewKey returns the deterministic key number i.
func NewKey(i uint64) Key {
	pk, h := synth.Key(777, 9, i)
	return Key{PubKey: pk, Hash160: h}
}

// Block appends a block holding txs after a fresh coinbase.
func (c *Chain) Block(txs ...*wire.MsgTx) {
	c.next++
	cb := wire.NewMsgTx(wire.TxVersion)
	cb.AddTxIn(&wire.TxIn{PreviousOutPoint: wire.OutPoint{Index: wire.MaxPrevOutIndex}, SignatureScript: synth.HeightScript(c.next + 100)})
	cb.AddTxOut(wire.NewTxOut(1, []byte{txscript.OP_TRUE}))
	b := wire.NewMsgBlock(wire.NewBlockHeader(1, &chainhash.Hash{}, &chainhash.Hash{}, 0, uint32(c.next)))
	b.AddTransaction(cb)
	for _, tx := range txs {
		b.AddTransaction(tx)
	}
	c.Blocks = append(c.Blocks, b)
}

// Pay returns a transaction spending ins (each revealing its key in
// inKeys) and paying one P2PKH output per key in to. Without inputs it
// spends a made-up outpoint.
func Pay(ins []wire.OutPoint, inKeys []Key, to ...Key) *wire.MsgTx {
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
