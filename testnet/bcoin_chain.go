package testnet

import (
	"context"
	"errors"
	"fmt"
	"math/rand"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// BuildChain mines spec.Blocks blocks on bcoin with the structure
// Harness.BuildChain gives btcd (the same plan for the same spec):
// TxsPerBlock noise transactions per block, payments to the keyring's
// first WatchAddrs receive addresses, later spends of SpendFraction of
// them to a foreign script and the next change address (a third also
// sweeping the oldest change output). Every block is checked to hold
// exactly the transactions sent for it.
//
// The truth it returns is bcoin's view: ScanTruth over the new blocks
// (with Seed, Xpub and NoiseTxs filled in), checked against the plan's
// payment count.
func (h *BcoinHarness) BuildChain(ctx context.Context, spec ChainSpec) (*Truth, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.usable(); err != nil {
		return nil, err
	}
	if spec.Keyring == nil {
		return nil, fmt.Errorf("%w: a bcoin chain needs a keyring", ErrBadSpec)
	}
	if err := spec.check(h.Params()); err != nil {
		return nil, err
	}
	_, start, err := h.node.BestBlock()
	if err != nil {
		return nil, err
	}
	b := &bcoinBuilder{
		h:       h,
		spec:    spec,
		r:       rand.New(rand.NewSource(spec.Seed)),
		values:  make(map[wire.OutPoint]int64),
		changes: make(map[wire.OutPoint]uint32),
	}
	pays := plan(&spec, b.r)
	if err := b.run(ctx, start, pays); err != nil {
		return nil, err
	}
	truth, err := h.scanTruthLocked(ctx, spec.Keyring, spec.Purpose, start+1)
	if err != nil {
		return nil, err
	}
	truth.Seed, truth.NoiseTxs = spec.Seed, b.noise
	if err := truth.setKeys(spec); err != nil {
		return nil, err
	}
	received := 0
	for _, a := range truth.Addresses {
		if a.Branch == BranchExternal {
			received += a.Payments
		}
	}
	if received != len(pays) {
		return nil, fmt.Errorf("testnet: bcoin chain: %d payments to receive addresses on chain, planned %d", received, len(pays))
	}
	return truth, nil
}

// bcoinBuilder carries BcoinHarness.BuildChain's state.
type bcoinBuilder struct {
	h    *BcoinHarness
	spec ChainSpec
	r    *rand.Rand
	// values are the wallet's unspent outputs sent so far; changes maps
	// its change outputs to their index, oldestChange lists them oldest
	// first (some spends sweep one as a second input).
	values       map[wire.OutPoint]int64
	changes      map[wire.OutPoint]uint32
	oldestChange []wire.OutPoint
	change       uint32 // next change index
	noise        int
}

// run mines the blocks of the plan.
func (b *bcoinBuilder) run(ctx context.Context, start int32, pays []*plannedPay) error {
	spec := &b.spec
	payAt := make(map[int][]*plannedPay)
	spendAt := make(map[int][]*plannedPay)
	for _, p := range pays {
		payAt[p.block] = append(payAt[p.block], p)
		if p.spend >= 0 {
			spendAt[p.spend] = append(spendAt[p.spend], p)
		}
	}
	for i := 0; i < spec.Blocks; {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("testnet: build bcoin chain: %w", err)
		}
		if spec.TxsPerBlock == 0 && len(payAt[i]) == 0 && len(spendAt[i]) == 0 {
			j := i + 1
			for j < spec.Blocks && len(payAt[j]) == 0 && len(spendAt[j]) == 0 {
				j++
			}
			if _, err := b.h.mineLocked(ctx, j-i); err != nil {
				return err
			}
			i = j
		} else {
			if err := b.block(ctx, start+int32(i)+1, payAt[i], spendAt[i]); err != nil {
				return fmt.Errorf("testnet: build bcoin chain block %d: %w", i, err)
			}
			i++
		}
		if spec.Progress != nil {
			spec.Progress(i, spec.Blocks)
		}
	}
	return nil
}

// block sends one block's transactions, mines it and checks that it
// holds exactly them.
func (b *bcoinBuilder) block(ctx context.Context, height int32, pays, spends []*plannedPay) error {
	h, spec := b.h, &b.spec
	sent := make(map[chainhash.Hash]bool)
	send := func(tx *wire.MsgTx) error {
		if err := h.node.SendTx(tx); err != nil {
			h.f.unapply(tx)
			return err
		}
		sent[tx.TxHash()] = true
		return nil
	}
	for _, p := range pays {
		tx, err := payTx(h.f, spec, b.r, p)
		if err != nil {
			return err
		}
		if err := send(tx); err != nil {
			return err
		}
		b.values[p.op] = p.amount
	}
	for range spec.TxsPerBlock {
		tx, err := h.f.build(noiseOutputs(b.r))
		if err != nil {
			return err
		}
		if err := send(tx); err != nil {
			return err
		}
		b.noise++
	}
	for _, p := range spends {
		tx, err := b.spend(p)
		if err != nil {
			return err
		}
		if err := h.node.SendTx(tx); err != nil {
			return err
		}
		sent[tx.TxHash()] = true
		b.record(tx)
	}
	hashes, blocks, err := h.mineBlocksLocked(ctx, 1)
	if err != nil {
		return err
	}
	blk := blocks[0]
	if got := len(blk.Transactions) - 1; got != len(sent) {
		return fmt.Errorf("testnet: bcoin block %s at height %d has %d transactions, sent %d", hashes[0], height, got, len(sent))
	}
	for _, tx := range blk.Transactions[1:] {
		if !sent[tx.TxHash()] {
			return fmt.Errorf("testnet: bcoin block %s at height %d has unsent transaction %s", hashes[0], height, tx.TxHash())
		}
	}
	return nil
}

// spend signs the keyring's spend of p's output: half to a foreign
// script, the rest minus the fee to the next change address; a third of
// the spends also sweep the oldest unspent change output.
func (b *bcoinBuilder) spend(p *plannedPay) (*wire.MsgTx, error) {
	spec := &b.spec
	value, ok := b.values[p.op]
	if !ok {
		return nil, fmt.Errorf("testnet: planned spend of unknown output %v", p.op)
	}
	first, err := spec.Keyring.prevOutFor(p.op, value, KeyPath{spec.Purpose, BranchExternal, p.addr})
	if err != nil {
		return nil, err
	}
	ins := []prevOut{first}
	total := value
	if len(b.oldestChange) > 0 && b.r.Intn(3) == 0 {
		op := b.oldestChange[0]
		b.oldestChange = b.oldestChange[1:]
		in, err := spec.Keyring.prevOutFor(op, b.values[op], KeyPath{spec.Purpose, BranchInternal, b.changes[op]})
		if err != nil {
			return nil, err
		}
		ins = append(ins, in)
		total += b.values[op]
	}
	change, err := spec.Keyring.PkScript(spec.Purpose, BranchInternal, b.change)
	if err != nil {
		return nil, err
	}
	b.change++
	foreign := noiseOutputs(b.r)[0]
	foreign.Value = value / 2
	outs := []*wire.TxOut{foreign, wire.NewTxOut(0, change)}
	scripts := make([][]byte, len(ins))
	for i, in := range ins {
		scripts[i] = in.script
	}
	outs[1].Value = total - foreign.Value - FeeRate*estimateVsize(scripts, outs)
	if b.r.Intn(2) == 0 {
		outs[0], outs[1] = outs[1], outs[0]
	}
	tx := wire.NewMsgTx(wire.TxVersion)
	for _, in := range ins {
		tx.AddTxIn(wire.NewTxIn(&in.op, nil, nil))
	}
	for _, o := range outs {
		tx.AddTxOut(o)
	}
	if err := signTx(tx, ins); err != nil {
		return nil, err
	}
	return tx, nil
}

// record applies a sent spend to the builder's view of the wallet.
func (b *bcoinBuilder) record(tx *wire.MsgTx) {
	for _, in := range tx.TxIn {
		delete(b.values, in.PreviousOutPoint)
	}
	txid := tx.TxHash()
	for i, o := range tx.TxOut {
		path, ok := b.spec.Keyring.Lookup(o.PkScript)
		if !ok || path.Branch != BranchInternal {
			continue
		}
		op := wire.OutPoint{Hash: txid, Index: uint32(i)}
		b.values[op] = o.Value
		b.changes[op] = path.Index
		b.oldestChange = append(b.oldestChange, op)
	}
}

// ScanTruth computes the wallet truth of key's purpose addresses (within
// the first 1,000 indexes of each branch) from bcoin's current chain,
// blocks from height from to the tip: bcoin's own view, independent of
// the builder's bookkeeping, in ScanTruth's (btcd's) terms.
func (h *BcoinHarness) ScanTruth(ctx context.Context, key *Keyring, purpose uint32, from int32) (*Truth, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.usable(); err != nil {
		return nil, err
	}
	return h.scanTruthLocked(ctx, key, purpose, from)
}

func (h *BcoinHarness) scanTruthLocked(ctx context.Context, key *Keyring, purpose uint32, from int32) (*Truth, error) {
	tipHash, tip, err := h.node.BestBlock()
	if err != nil {
		return nil, err
	}
	return scanBlocks(ctx, h.Params().Name, key, purpose, from, tip, *tipHash, h.node.BlockAt)
}

// BcoinReorg is what BcoinHarness.Reorg did.
type BcoinReorg struct {
	// ForkHeight is the height of the last block both branches share.
	ForkHeight int32
	// Disconnected are the old branch's blocks, Connected the new
	// (longer by one), both from ForkHeight+1 up.
	Disconnected []chainhash.Hash
	Connected    []chainhash.Hash
	// Resent are the old branch's transactions sent again (they confirm
	// in the new branch's first block); Dropped are those bcoin refused
	// the second time (e.g. spending a disconnected coinbase).
	Resent  []chainhash.Hash
	Dropped []chainhash.Hash
}

// Reorg replaces the top depth blocks with a longer branch of depth+1:
// it invalidates the block at tip-depth+1 (bcoin resets its chain to the
// parent and empties its mempool, so the mempool must be empty first),
// sends the old branch's transactions again when resend is set, and
// mines depth+1 blocks. Peers see the new branch when its blocks are
// announced; an SPV client then reorganises from the fork.
func (h *BcoinHarness) Reorg(ctx context.Context, depth int, resend bool) (*BcoinReorg, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.usable(); err != nil {
		return nil, err
	}
	_, tip, err := h.node.BestBlock()
	if err != nil {
		return nil, err
	}
	if depth < 1 || int32(depth) >= tip {
		return nil, fmt.Errorf("%w: reorg depth %d at height %d", ErrBadSpec, depth, tip)
	}
	pool, err := h.node.Mempool()
	if err != nil {
		return nil, err
	}
	if len(pool) > 0 {
		return nil, fmt.Errorf("%w: reorg with %d txs in bcoin's mempool (invalidateblock would drop them): mine them first", ErrBadSpec, len(pool))
	}
	r := &BcoinReorg{ForkHeight: tip - int32(depth)}
	var old []*wire.MsgBlock
	for height := r.ForkHeight + 1; height <= tip; height++ {
		hash, blk, err := h.node.BlockAt(height)
		if err != nil {
			return nil, err
		}
		r.Disconnected = append(r.Disconnected, *hash)
		old = append(old, blk)
	}
	if err := h.node.InvalidateBlock(&r.Disconnected[0]); err != nil {
		return nil, err
	}
	err = poll(ctx, fmt.Sprintf("bcoin reset to height %d", r.ForkHeight), func() (bool, error) {
		_, height, err := h.node.BestBlock()
		return height == r.ForkHeight, err
	})
	if err != nil {
		return nil, err
	}
	// Undo the old branch in the funder, newest transaction first.
	for i := len(old) - 1; i >= 0; i-- {
		txs := old[i].Transactions
		for j := len(txs) - 1; j >= 0; j-- {
			h.f.unapply(txs[j])
		}
	}
	h.f.tip = r.ForkHeight
	if resend {
		for _, blk := range old {
			for _, tx := range blk.Transactions[1:] {
				if err := h.node.SendTx(tx); err != nil {
					if !errors.Is(err, ErrBcoinTxRejected) {
						return nil, err
					}
					r.Dropped = append(r.Dropped, tx.TxHash())
					continue
				}
				h.f.applyTx(tx, unconfirmed, false)
				r.Resent = append(r.Resent, tx.TxHash())
			}
		}
	}
	hashes, err := h.mineLocked(ctx, depth+1)
	if err != nil {
		return nil, err
	}
	for _, hash := range hashes {
		r.Connected = append(r.Connected, *hash)
	}
	return r, nil
}
