package testnet

import (
	"context"
	"fmt"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// ReorgOptions are the transactions of the two branches of a Reorg.
type ReorgOptions struct {
	// OrphanTxs are sent to the main node after the split and mined in
	// the first block of the branch that loses (e.g. a payment to the
	// user that will vanish).
	OrphanTxs []*wire.MsgTx
	// WinnerTxs are sent to the node that mines the winning branch (btcd:
	// the second node) and mined in its first block (e.g. a double spend of an
	// orphaned transaction's inputs, from DoubleSpend).
	WinnerTxs []*wire.MsgTx
	// P2P (btcd only) delivers the winning branch to the main node over
	// the P2P connection instead of submitblock. btcd v0.24.2 then leaves the
	// orphaned transactions in its mempool even when the winning branch
	// double-spends them (its sync manager skips the mempool cleanup of
	// connected blocks while it is not "current", which it is not while
	// its sync peer is ahead, but re-adds disconnected blocks'
	// transactions). The default (submitblock, no sync peer) leaves a
	// clean mempool.
	P2P bool
	// AfterLosing, when set, is called once the losing branch is mined on
	// the main node and before the winning branch reaches it: a test
	// waits there until its client has followed the losing branch (a
	// client that never saw it has no reorg to follow). It must not call
	// the Chain (its lock is held); an error ends the Reorg.
	AfterLosing func() error
}

// ReorgResult describes a finished reorganisation of the main node.
type ReorgResult struct {
	// ForkHeight and ForkHash name the last block both branches share.
	ForkHeight int32          `json:"fork_height"`
	ForkHash   chainhash.Hash `json:"fork_hash"`
	// Orphaned are the main node's blocks the reorg disconnected, in
	// height order from ForkHeight+1.
	Orphaned []*chainhash.Hash `json:"orphaned"`
	// New are the winning branch's blocks, in height order from
	// ForkHeight+1 (one more than Orphaned).
	New []*chainhash.Hash `json:"new"`
	// TipHeight is the main node's height afterwards.
	TipHeight int32 `json:"tip_height"`
}

// Brancher is how one kind of node makes the competing branch of a
// Chain's Reorg: btcd with a second node it cuts off and joins again,
// bcoin on its one node with invalidateblock. Its methods run under the
// Chain's lock and must not call the Chain.
type Brancher interface {
	// Split runs at the fork, before the losing branch is mined on the
	// main node, and returns the node that mines the winning branch.
	Split(ctx context.Context) (FullNode, error)
	// Switch runs once the losing branch is mined (and AfterLosing has
	// returned), before the winning branch is mined on Split's node.
	Switch(ctx context.Context, forkHeight int32) error
	// Join makes the main node follow the winning branch. The losing
	// branch's transactions that the winning one neither holds nor
	// conflicts with are in the main node's mempool afterwards.
	Join(ctx context.Context, losing, winning []*wire.MsgBlock, opts ReorgOptions) error
}

// Reorg reorganises the node's chain: from its tip (the fork) it mines
// depth blocks (the first one holding opts.OrphanTxs), then a competing
// branch of depth+1 from the fork (the first holding opts.WinnerTxs),
// and makes the node follow the longer branch (Brancher). The funder
// forgets coins the reorg removed. On btcd the second node stays
// connected afterwards, so blocks mined later reach both.
func (c *Chain) Reorg(ctx context.Context, depth int, opts ReorgOptions) (ReorgResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.usable(); err != nil {
		return ReorgResult{}, err
	}
	if depth < 1 {
		return ReorgResult{}, fmt.Errorf("%w: reorg depth %d < 1", ErrBadSpec, depth)
	}
	if c.br == nil {
		return ReorgResult{}, fmt.Errorf("%w: this chain's node has no way to reorganise", ErrBadSpec)
	}
	winner, err := c.br.Split(ctx)
	if err != nil {
		return ReorgResult{}, err
	}
	forkHash, forkHeight, err := c.node.BestBlock()
	if err != nil {
		return ReorgResult{}, err
	}
	res := ReorgResult{ForkHeight: forkHeight, ForkHash: *forkHash}

	losing, err := c.mineBranch(ctx, c.node, depth, opts.OrphanTxs)
	if err != nil {
		return res, fmt.Errorf("testnet: reorg losing branch: %w", err)
	}
	if opts.AfterLosing != nil {
		if err := opts.AfterLosing(); err != nil {
			return res, fmt.Errorf("testnet: reorg after the losing branch: %w", err)
		}
	}
	if err := c.br.Switch(ctx, forkHeight); err != nil {
		return res, fmt.Errorf("testnet: reorg switch: %w", err)
	}
	winning, err := c.mineBranch(ctx, winner, depth+1, opts.WinnerTxs)
	if err != nil {
		return res, fmt.Errorf("testnet: reorg winning branch: %w", err)
	}
	for _, b := range losing {
		hash := b.BlockHash()
		res.Orphaned = append(res.Orphaned, &hash)
	}
	for _, b := range winning {
		hash := b.BlockHash()
		res.New = append(res.New, &hash)
	}
	if err := c.br.Join(ctx, losing, winning, opts); err != nil {
		return res, err
	}
	tipHash, tip, err := c.node.BestBlock()
	if err != nil {
		return res, err
	}
	if !tipHash.IsEqual(res.New[len(res.New)-1]) {
		return res, fmt.Errorf("testnet: after reorg the main node's tip is %s, want %s", tipHash, res.New[len(res.New)-1])
	}
	res.TipHeight = tip
	if err := c.refreshFunder(losing, forkHeight, tip); err != nil {
		return res, err
	}
	return res, nil
}

// mineBranch sends txs to node, mines n blocks there and returns them;
// every tx must be in the first block. The blocks are applied to the
// funder (a losing branch is undone by refreshFunder).
func (c *Chain) mineBranch(ctx context.Context, node FullNode, n int, txs []*wire.MsgTx) ([]*wire.MsgBlock, error) {
	for _, tx := range txs {
		if err := node.SendTx(tx); err != nil {
			return nil, err
		}
		c.f.applyTx(tx, unconfirmed, false)
	}
	_, blocks, err := c.mineLocked(ctx, node, n)
	if err != nil {
		return nil, err
	}
	in := make(map[chainhash.Hash]bool)
	for _, tx := range blocks[0].Transactions {
		in[tx.TxHash()] = true
	}
	for _, tx := range txs {
		if !in[tx.TxHash()] {
			return nil, fmt.Errorf("%w: tx %s was not mined in the branch's first block", ErrBadSpec, tx.TxHash())
		}
	}
	return blocks, nil
}

// btcdBrancher makes a btcd Harness's competing branch on a second btcd
// node (started on first use and kept until Close): synced and then cut
// off at the fork, it mines the winning branch, which reaches the main
// node by submitblock (or P2P: see ReorgOptions.P2P) before the nodes
// connect again and the main node follows the longer branch.
type btcdBrancher struct{ h *Harness }

// Split starts or syncs the second node and disconnects it.
func (b btcdBrancher) Split(ctx context.Context) (FullNode, error) {
	h := b.h
	if err := h.ensureNode2(ctx); err != nil {
		return nil, err
	}
	if err := h.node2.DisconnectFromCtx(ctx, h.node); err != nil {
		return nil, err
	}
	return h.node2, nil
}

// Switch has nothing to do: the second node is already apart.
func (btcdBrancher) Switch(context.Context, int32) error { return nil }

// Join hands the winning blocks to the main node and reconnects the
// nodes; btcd itself puts the losing branch's transactions back in its
// mempool.
func (b btcdBrancher) Join(ctx context.Context, _, winning []*wire.MsgBlock, opts ReorgOptions) error {
	h := b.h
	if !opts.P2P {
		for _, blk := range winning {
			if err := h.node.RPC().SubmitBlock(btcutil.NewBlock(blk), nil); err != nil {
				return fmt.Errorf("testnet: reorg submitblock %s: %w", blk.BlockHash(), err)
			}
		}
	}
	if err := h.node2.ConnectToCtx(ctx, h.node); err != nil {
		return fmt.Errorf("testnet: reorg reconnect: %w", err)
	}
	return nil
}

// ensureNode2 starts the reorg partner (first use) and syncs it with the
// main node.
func (h *Harness) ensureNode2(ctx context.Context) error {
	if h.node2 == nil {
		n2, err := StartNode(ctx, Config{Network: h.opts.Network, Log: h.opts.Log, Args: h.opts.Args, V2Transport: h.opts.V2Transport})
		if err != nil {
			return fmt.Errorf("testnet: reorg node: %w", err)
		}
		h.node2 = n2
	}
	p, err := h.node2.peerWith(h.node.P2PAddr())
	if err != nil {
		return err
	}
	if p == nil {
		return h.node2.ConnectToCtx(ctx, h.node)
	}
	return h.node2.WaitSynced(ctx, h.node)
}

// refreshFunder drops the funder coins the reorg removed, restores coins
// that only orphaned transactions spent, and updates heights: every coin
// above the fork or unconfirmed is checked with gettxout.
func (c *Chain) refreshFunder(orphaned []*wire.MsgBlock, forkHeight, tip int32) error {
	f := c.f
	f.tip = tip
	check := func(op wire.OutPoint, old coin) (coin, bool, error) {
		res, err := c.node.Unspent(op, true)
		if err != nil || res == nil {
			return old, false, err
		}
		old.height = unconfirmed
		if res.Confirmations > 0 {
			old.height = tip - int32(res.Confirmations) + 1
		}
		old.coinbase = res.Coinbase
		return old, true, nil
	}
	for op, cn := range f.coins {
		if cn.height != unconfirmed && cn.height <= forkHeight {
			continue
		}
		nc, ok, err := check(op, cn)
		if err != nil {
			return err
		}
		if ok {
			f.coins[op] = nc
		} else {
			delete(f.coins, op)
		}
	}
	for _, b := range orphaned {
		for _, tx := range b.Transactions[1:] {
			for _, in := range tx.TxIn {
				cn, ok := f.spent[in.PreviousOutPoint]
				if !ok {
					continue
				}
				nc, ok, err := check(in.PreviousOutPoint, cn)
				if err != nil {
					return err
				}
				if ok {
					f.coins[in.PreviousOutPoint] = nc
					delete(f.spent, in.PreviousOutPoint)
				}
			}
		}
	}
	// gettxout (btcd's and bcoin's) reports an output as unspent even
	// when a mempool transaction spends it, and the orphaned blocks'
	// transactions are back in the mempool: replay the mempool so those
	// spends count and their change is known.
	return c.applyMempool()
}

// applyMempool records every transaction of the node's mempool in the
// funder as unconfirmed.
func (c *Chain) applyMempool() error {
	ids, err := c.node.Mempool()
	if err != nil {
		return err
	}
	txs := make([]*wire.MsgTx, 0, len(ids))
	for _, id := range ids {
		tx, err := c.node.Tx(&id)
		if err != nil {
			continue // mined or evicted meanwhile
		}
		txs = append(txs, tx)
		c.f.applyTx(tx, unconfirmed, false)
	}
	// The mempool comes in no particular order: a parent applied after
	// its child brought back the coin the child spends. Spend again.
	for _, tx := range txs {
		for _, in := range tx.TxIn {
			if cn, ok := c.f.coins[in.PreviousOutPoint]; ok {
				c.f.spent[in.PreviousOutPoint] = cn
				delete(c.f.coins, in.PreviousOutPoint)
			}
		}
	}
	return nil
}
