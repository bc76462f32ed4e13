package hostile

import (
	"sync"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// FakeMempool is an Upstream whose mempool holds, besides the honest
// node's, transactions that are in no real mempool: fabricated ones (a
// spend of a light wallet's confirmed coin with a made-up signature, a
// payment never broadcast). A Peer given it as Config.Upstream, with any
// scenario (Honest for the plain case), announces them in its answer to
// the node's BIP35 mempool request when they match the node's filter, as
// it does the honest ones, and serves them on getdata. An SPV node cannot
// tell them from real ones: it has no UTXO set to check their inputs
// against. It is not a Scenario of the catalogue because it changes what
// the upstream holds, not how the peer speaks, and combines with any of
// them.
//
// The blocks, headers and honest transactions come from the wrapped
// Upstream unchanged. It is safe for concurrent use.
type FakeMempool struct {
	Upstream

	mu     sync.Mutex
	fakes  map[chainhash.Hash]*wire.MsgTx
	order  []chainhash.Hash
	served map[chainhash.Hash]int
}

// NewFakeMempool wraps up, adding the fabricated transactions txs to its
// mempool.
func NewFakeMempool(up Upstream, txs ...*wire.MsgTx) *FakeMempool {
	f := &FakeMempool{
		Upstream: up,
		fakes:    make(map[chainhash.Hash]*wire.MsgTx),
		served:   make(map[chainhash.Hash]int),
	}
	for _, tx := range txs {
		f.Add(tx)
	}
	return f
}

// Add puts one more fabricated transaction in the mempool.
func (f *FakeMempool) Add(tx *wire.MsgTx) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := tx.TxHash()
	if _, ok := f.fakes[h]; !ok {
		f.order = append(f.order, h)
	}
	f.fakes[h] = tx.Copy()
}

// GetRawMempool returns the upstream's mempool followed by the fabricated
// transactions.
func (f *FakeMempool) GetRawMempool() ([]*chainhash.Hash, error) {
	hashes, err := f.Upstream.GetRawMempool()
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.order {
		h := f.order[i]
		hashes = append(hashes, &h)
	}
	return hashes, nil
}

// GetRawTransaction returns a fabricated transaction by its txid (counted
// in Served), or asks the upstream.
func (f *FakeMempool) GetRawTransaction(hash *chainhash.Hash) (*btcutil.Tx, error) {
	f.mu.Lock()
	tx, ok := f.fakes[*hash]
	if ok {
		f.served[*hash]++
	}
	f.mu.Unlock()
	if ok {
		return btcutil.NewTx(tx.Copy()), nil
	}
	return f.Upstream.GetRawTransaction(hash)
}

// Served returns how often the fabricated transaction hash was read,
// which the peer does to match it against a filter for its mempool
// answer and to serve it on getdata.
func (f *FakeMempool) Served(hash chainhash.Hash) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.served[hash]
}
