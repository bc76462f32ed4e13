package watch

import (
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// Elements is what a Watcher asks the BIP37 filter to match: the data pushes
// of its scripts (hash160s, compressed pubkeys, witness programs, script
// hashes) and the outpoints of its unspent outputs. Outpoints matter because
// BIP37 servers never look inside witnesses: a P2WPKH spend is only matched
// through its previous outpoint.
type Elements struct {
	// Data holds the byte strings to insert, each one element. The
	// watcher may share them with its own state: the node must not
	// modify them.
	Data [][]byte
	// OutPoints holds the watcher's unspent outpoints.
	OutPoints []wire.OutPoint
}

// Len returns the number of elements the filter must hold.
func (e Elements) Len() int { return len(e.Data) + len(e.OutPoints) }

// FilteredBlock is one block as the node delivers it to a Watcher: its
// header, its height on the best chain, and the transactions the peer sent
// for it (all of them inside the verified partial merkle tree), in block
// order.
type FilteredBlock struct {
	Height int32
	Hash   chainhash.Hash
	Header wire.BlockHeader
	// Txs are the matched transactions, in the order of the block.
	Txs []*wire.MsgTx
	// TxIndexes gives each matched transaction's position in the block.
	TxIndexes []uint32
	// TotalTxs is the block's transaction count from the merkle block.
	TotalTxs uint32
}

// BlockResult is a Watcher's verdict on one FilteredBlock.
type BlockResult struct {
	// Relevant are the txids that belong to the watcher.
	Relevant []chainhash.Hash
	// FalsePositives are the txids the peer sent that are not the
	// watcher's; they were dropped.
	FalsePositives []chainhash.Hash
	// Delta is how applying the block changed the watcher's elements
	// (addresses derived past the gap limit, outputs received, coins
	// spent). When the download peer's filter lacks an element the
	// watcher needs now (Data, Due, or an outpoint), the node reloads the
	// filters and fetches this block and every later one again with the
	// new filter; Reserve elements wait for the node's next scheduled
	// reload.
	Delta ElementDelta
	// Amounts gives the net satoshi change to the watcher of each relevant
	// transaction (negative when it spends more than it receives).
	Amounts map[chainhash.Hash]int64
}

// MempoolResult is a Watcher's verdict on one unconfirmed transaction.
type MempoolResult struct {
	Relevant bool
	// Delta is how the transaction changed the watcher's elements.
	Delta ElementDelta
	// Amount is the net satoshi change to the watcher when Relevant.
	Amount int64
}

// TxRefusal is the error a Watcher's ApplyMempoolTx returns when it will
// not keep an unconfirmed transaction and changed nothing: the transaction
// is invalid, or over one of the watcher's budgets. The node logs it with
// the peer that relayed the transaction and keeps syncing; when
// PeerAtFault it scores that peer (the node's refused-transaction score).
type TxRefusal struct {
	// PeerAtFault is set when the transaction alone is the reason: it
	// is invalid, larger than any standard transaction, or over a
	// budget of one transaction. It is clear when a budget of
	// everything pending is full, which a genuine relay can meet too.
	PeerAtFault bool
	// Err is the reason.
	Err error
}

// Error implements error.
func (r *TxRefusal) Error() string {
	return "unconfirmed transaction refused: " + r.Err.Error()
}

// Unwrap returns the reason.
func (r *TxRefusal) Unwrap() error { return r.Err }

// SyncPoint is the last block a Watcher has fully applied.
type SyncPoint struct {
	Height int32
	Hash   chainhash.Hash
}

// Watcher is what the node syncs: the watch-only wallet in production, an
// in-memory watcher in tests. The node calls it from its single sync
// goroutine, never concurrently.
type Watcher interface {
	// FilterElements returns the elements the filter must match now. The
	// node calls it once, when it starts; from then on it follows the
	// deltas the other methods return.
	FilterElements() (Elements, error)

	// Birthday returns the first height that can hold the watcher's
	// transactions; the node downloads only headers below it.
	Birthday() int32

	// SyncedTo returns the last block the watcher applied (height -1 and
	// a zero hash when it has applied none).
	SyncedTo() (SyncPoint, error)

	// ApplyBlock applies one block on top of SyncedTo, atomically with
	// the new sync point. Blocks arrive in height order. The same block
	// (same height and hash) may arrive again after a Delta; the
	// watcher must then apply only what is new, never count twice.
	ApplyBlock(b *FilteredBlock) (BlockResult, error)

	// ApplyMempoolTx offers one unconfirmed transaction that matched the
	// filter. It is only the relaying peer's word: a watcher that will
	// not keep it (invalid, or over one of its budgets) returns a
	// *TxRefusal, having changed nothing; the node logs the refusal and
	// goes on. Any other error stops the sync.
	ApplyMempoolTx(tx *wire.MsgTx) (MempoolResult, error)

	// Rollback removes every block above height (a reorg's fork point),
	// atomically with the new sync point, and returns how the elements
	// changed (coins the removed blocks spent are watched again, coins
	// they created are not).
	Rollback(height int32) (ElementDelta, error)
}

// Flusher is implemented by watchers that batch their commits. The node
// calls Flush when it reaches the peers' tip, before it waits for new
// blocks, and when it stops, so no applied block stays uncommitted while the
// node is idle. A watcher that batches reports through SyncedTo the last
// block it applied; after a crash it reopens at the last one it committed,
// and the node fetches again from there.
type Flusher interface {
	Flush() error
}
