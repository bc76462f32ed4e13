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
	// WinnerTxs are sent to the second node after the split and mined in
	// the first block of the branch that wins (e.g. a double spend of an
	// orphaned transaction's inputs, from DoubleSpend).
	WinnerTxs []*wire.MsgTx
	// P2P delivers the winning branch to the main node over the P2P
	// connection instead of submitblock. btcd v0.24.2 then leaves the
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
	// the Harness (its lock is held); an error ends the Reorg.
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

// Reorg reorganises the main node's chain with a second btcd node (started
// on first use and kept until Close): it syncs and then disconnects the
// second node, mines depth blocks on the main node (the first one holding
// opts.OrphanTxs) and depth+1 on the second (the first holding
// opts.WinnerTxs), hands the winning blocks to the main node (submitblock,
// or P2P: see ReorgOptions.P2P), reconnects the nodes and waits until the
// main node follows the longer branch. The funder forgets coins the reorg removed. The
// nodes stay connected afterwards, so blocks mined later reach both.
func (h *Harness) Reorg(ctx context.Context, depth int, opts ReorgOptions) (ReorgResult, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.usable(); err != nil {
		return ReorgResult{}, err
	}
	if depth < 1 {
		return ReorgResult{}, fmt.Errorf("%w: reorg depth %d < 1", ErrBadSpec, depth)
	}
	if err := h.ensureNode2(ctx); err != nil {
		return ReorgResult{}, err
	}
	n1, n2 := h.node, h.node2
	if err := n2.DisconnectFromCtx(ctx, n1); err != nil {
		return ReorgResult{}, err
	}
	forkHash, forkHeight, err := n1.BestBlock()
	if err != nil {
		return ReorgResult{}, err
	}
	res := ReorgResult{ForkHeight: forkHeight, ForkHash: *forkHash}

	orphanBlocks, err := h.mineBranch(n1, depth, opts.OrphanTxs)
	if err != nil {
		return res, fmt.Errorf("testnet: reorg losing branch: %w", err)
	}
	if opts.AfterLosing != nil {
		if err := opts.AfterLosing(); err != nil {
			return res, fmt.Errorf("testnet: reorg after the losing branch: %w", err)
		}
	}
	winBlocks, err := h.mineBranch(n2, depth+1, opts.WinnerTxs)
	if err != nil {
		return res, fmt.Errorf("testnet: reorg winning branch: %w", err)
	}
	for _, b := range orphanBlocks {
		hash := b.BlockHash()
		res.Orphaned = append(res.Orphaned, &hash)
	}
	for _, b := range winBlocks {
		hash := b.BlockHash()
		res.New = append(res.New, &hash)
	}
	if !opts.P2P {
		for _, b := range winBlocks {
			if err := n1.RPC().SubmitBlock(btcutil.NewBlock(b), nil); err != nil {
				return res, fmt.Errorf("testnet: reorg submitblock %s: %w", b.BlockHash(), err)
			}
		}
	}
	if err := n2.ConnectToCtx(ctx, n1); err != nil {
		return res, fmt.Errorf("testnet: reorg reconnect: %w", err)
	}
	tipHash, tip, err := n1.BestBlock()
	if err != nil {
		return res, err
	}
	if !tipHash.IsEqual(res.New[len(res.New)-1]) {
		return res, fmt.Errorf("testnet: after reorg the main node's tip is %s, want %s", tipHash, res.New[len(res.New)-1])
	}
	res.TipHeight = tip
	if err := h.refreshFunder(orphanBlocks, forkHeight, tip); err != nil {
		return res, err
	}
	return res, nil
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

// mineBranch sends txs to node, mines n blocks there and returns them;
// every tx must be in the first block. The blocks are applied to the
// funder (a losing branch is undone by refreshFunder).
func (h *Harness) mineBranch(node *Node, n int, txs []*wire.MsgTx) ([]*wire.MsgBlock, error) {
	for _, tx := range txs {
		if err := sendTx(node, tx); err != nil {
			return nil, err
		}
		h.f.applyTx(tx, unconfirmed, false)
	}
	_, tip, err := node.BestBlock()
	if err != nil {
		return nil, err
	}
	hashes, err := node.Generate(uint32(n))
	if err != nil {
		return nil, err
	}
	blocks := make([]*wire.MsgBlock, len(hashes))
	for i, hash := range hashes {
		if blocks[i], err = node.RPC().GetBlock(hash); err != nil {
			return nil, fmt.Errorf("testnet: getblock %s: %w", hash, err)
		}
		h.f.applyBlock(blocks[i], tip+1+int32(i))
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

// refreshFunder drops the funder coins the reorg removed, restores coins
// that only orphaned transactions spent, and updates heights: every coin
// above the fork or unconfirmed is checked with gettxout.
func (h *Harness) refreshFunder(orphaned []*wire.MsgBlock, forkHeight, tip int32) error {
	f := h.f
	f.tip = tip
	rpc := h.node.RPC()
	check := func(op wire.OutPoint, c coin) (coin, bool, error) {
		res, err := rpc.GetTxOut(&op.Hash, op.Index, true)
		if err != nil {
			return c, false, fmt.Errorf("testnet: gettxout %v: %w", op, err)
		}
		if res == nil {
			return c, false, nil
		}
		c.height = unconfirmed
		if res.Confirmations > 0 {
			c.height = tip - int32(res.Confirmations) + 1
		}
		c.coinbase = res.Coinbase
		return c, true, nil
	}
	for op, c := range f.coins {
		if c.height != unconfirmed && c.height <= forkHeight {
			continue
		}
		nc, ok, err := check(op, c)
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
				c, ok := f.spent[in.PreviousOutPoint]
				if !ok {
					continue
				}
				nc, ok, err := check(in.PreviousOutPoint, c)
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
	// btcd's gettxout reports an output as unspent even when a mempool
	// transaction spends it (it checks the mempool only for the
	// output's own transaction), and btcd puts the orphaned blocks'
	// transactions back into its mempool: replay the mempool so those
	// spends count and their change is known.
	return h.applyMempool()
}

// applyMempool records every transaction of the main node's mempool in
// the funder as unconfirmed.
func (h *Harness) applyMempool() error {
	rpc := h.node.RPC()
	ids, err := rpc.GetRawMempool()
	if err != nil {
		return fmt.Errorf("testnet: getrawmempool: %w", err)
	}
	txs := make([]*wire.MsgTx, 0, len(ids))
	for _, id := range ids {
		tx, err := rpc.GetRawTransaction(id)
		if err != nil {
			continue // mined or evicted meanwhile
		}
		txs = append(txs, tx.MsgTx())
		h.f.applyTx(tx.MsgTx(), unconfirmed, false)
	}
	// The mempool comes in no particular order: a parent applied after
	// its child brought back the coin the child spends. Spend again.
	for _, tx := range txs {
		for _, in := range tx.TxIn {
			if c, ok := h.f.coins[in.PreviousOutPoint]; ok {
				h.f.spent[in.PreviousOutPoint] = c
				delete(h.f.coins, in.PreviousOutPoint)
			}
		}
	}
	return nil
}
