package testnet

import (
	"context"
	"fmt"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// FullNode is a full node on 127.0.0.1 as a Chain drives it: btcd's
// Node, and bcoin's (testnet/bcoin). Its coinbases pay the funding
// wallet unless it was started with another mining address. A stopped
// node answers ErrStopped.
type FullNode interface {
	// P2PAddr and RPCAddr are the node's 127.0.0.1 listeners.
	P2PAddr() string
	RPCAddr() string
	// Params are the chain parameters of the node's chain.
	Params() *chaincfg.Params
	// PID is the node process's id.
	PID() int
	// GenerateBlocks mines n blocks with the mempool's transactions and
	// returns their hashes.
	GenerateBlocks(ctx context.Context, n int) ([]*chainhash.Hash, error)
	// BestBlock returns the hash and height of the node's tip.
	BestBlock() (*chainhash.Hash, int32, error)
	// BlockAt returns the main-chain block at height and its hash.
	BlockAt(height int32) (*chainhash.Hash, *wire.MsgBlock, error)
	// Block returns a block by hash.
	Block(hash *chainhash.Hash) (*wire.MsgBlock, error)
	// Tx returns a transaction from the mempool or the chain (both nodes
	// run with a transaction index).
	Tx(txid *chainhash.Hash) (*wire.MsgTx, error)
	// Unspent returns the unspent output op (the mempool's outputs too
	// with mempool), or nil when there is none. btcd and bcoin both
	// still report a confirmed output a mempool transaction spends.
	Unspent(op wire.OutPoint, mempool bool) (*Unspent, error)
	// Mempool returns the txids in the node's mempool.
	Mempool() ([]chainhash.Hash, error)
	// SendTx submits tx to the mempool and returns once the node took it.
	SendTx(tx *wire.MsgTx) error
	// WaitForHeight polls until the tip is at least h.
	WaitForHeight(ctx context.Context, h int32) error
	// WaitForMempool polls until every txid is in the mempool.
	WaitForMempool(ctx context.Context, txids ...chainhash.Hash) error
	// Tail returns the last couple of kilobytes of the node's output.
	Tail() string
	// Exited reports whether the process has exited (and reaps it).
	Exited() bool
	// Stop stops the process and removes its temporary directory.
	Stop() error
}

// FunderAddress returns the funding wallet's P2WPKH address on params:
// the coinbases' recipient of every node a Chain drives.
func FunderAddress(params *chaincfg.Params) (btcutil.Address, error) { return funderAddress(params) }

// Unspent is an unspent output as a node's gettxout reports it.
type Unspent struct {
	// Value is in satoshis; Confirmations is 0 for a mempool output.
	Value         int64
	Confirmations int64
	Coinbase      bool
}

var _ FullNode = (*Node)(nil)

// GenerateBlocks is Generate for the FullNode interface (btcd's RPC
// client takes no context).
func (n *Node) GenerateBlocks(_ context.Context, nblocks int) ([]*chainhash.Hash, error) {
	return n.Generate(uint32(nblocks))
}

// BlockAt returns the main-chain block at height and its hash.
func (n *Node) BlockAt(height int32) (*chainhash.Hash, *wire.MsgBlock, error) {
	if err := n.alive(); err != nil {
		return nil, nil, err
	}
	hash, err := n.rpc.GetBlockHash(int64(height))
	if err != nil {
		return nil, nil, fmt.Errorf("testnet: getblockhash %d: %w", height, err)
	}
	b, err := n.Block(hash)
	if err != nil {
		return nil, nil, err
	}
	return hash, b, nil
}

// Block returns a block by hash.
func (n *Node) Block(hash *chainhash.Hash) (*wire.MsgBlock, error) {
	if err := n.alive(); err != nil {
		return nil, err
	}
	b, err := n.rpc.GetBlock(hash)
	if err != nil {
		return nil, fmt.Errorf("testnet: getblock %s: %w", hash, err)
	}
	return b, nil
}

// Tx returns a transaction from the mempool or the chain (--txindex).
func (n *Node) Tx(txid *chainhash.Hash) (*wire.MsgTx, error) {
	if err := n.alive(); err != nil {
		return nil, err
	}
	tx, err := n.rpc.GetRawTransaction(txid)
	if err != nil {
		return nil, fmt.Errorf("testnet: getrawtransaction %s: %w", txid, err)
	}
	return tx.MsgTx(), nil
}

// Unspent returns the unspent output op from gettxout, or nil.
func (n *Node) Unspent(op wire.OutPoint, mempool bool) (*Unspent, error) {
	if err := n.alive(); err != nil {
		return nil, err
	}
	res, err := n.rpc.GetTxOut(&op.Hash, op.Index, mempool)
	if err != nil {
		return nil, fmt.Errorf("testnet: gettxout %v: %w", op, err)
	}
	if res == nil {
		return nil, nil
	}
	amt, err := btcutil.NewAmount(res.Value)
	if err != nil {
		return nil, fmt.Errorf("testnet: gettxout %v: %w", op, err)
	}
	return &Unspent{Value: int64(amt), Confirmations: res.Confirmations, Coinbase: res.Coinbase}, nil
}

// Mempool returns the txids in btcd's mempool.
func (n *Node) Mempool() ([]chainhash.Hash, error) {
	if err := n.alive(); err != nil {
		return nil, err
	}
	ids, err := n.rpc.GetRawMempool()
	if err != nil {
		return nil, fmt.Errorf("testnet: getrawmempool: %w", err)
	}
	out := make([]chainhash.Hash, len(ids))
	for i, id := range ids {
		out[i] = *id
	}
	return out, nil
}

// SendTx submits tx with sendrawtransaction, which returns once btcd
// accepted it into its mempool.
func (n *Node) SendTx(tx *wire.MsgTx) error {
	if err := n.alive(); err != nil {
		return err
	}
	if _, err := n.rpc.SendRawTransaction(tx, true); err != nil {
		return fmt.Errorf("testnet: sendrawtransaction %s: %w", tx.TxHash(), err)
	}
	return nil
}

// WaitForMempool polls until every txid is in the node's mempool.
func (n *Node) WaitForMempool(ctx context.Context, txids ...chainhash.Hash) error {
	return waitForMempool(ctx, n, txids)
}

// waitForMempool polls node's mempool until it holds every txid.
func waitForMempool(ctx context.Context, node FullNode, txids []chainhash.Hash) error {
	return poll(ctx, fmt.Sprintf("%d txs in the mempool of %s", len(txids), node.P2PAddr()), func() (bool, error) {
		pool, err := node.Mempool()
		if err != nil {
			return false, err
		}
		have := make(map[chainhash.Hash]bool, len(pool))
		for _, id := range pool {
			have[id] = true
		}
		for _, id := range txids {
			if !have[id] {
				return false, nil
			}
		}
		return true, nil
	})
}

// WaitForMempool polls node's mempool until it holds every txid, for a
// node type of another package (testnet/bcoin).
func WaitForMempool(ctx context.Context, node FullNode, txids ...chainhash.Hash) error {
	return waitForMempool(ctx, node, txids)
}
