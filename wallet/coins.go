package wallet

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/btcsuite/btcwallet/walletdb"
	"github.com/btcsuite/btcwallet/wtxmgr"
)

// pendingTx is one unconfirmed wallet transaction and what it conflicts
// with.
type pendingTx struct {
	details *wtxmgr.TxDetails
	// conflicts are the other unconfirmed wallet transactions that spend
	// an outpoint this one spends, by txid.
	conflicts []chainhash.Hash
	// conflicted is set when conflicts is not empty or an unconfirmed
	// ancestor is conflicted: whether the transaction can confirm
	// depends on which of the conflicting ones a block picks.
	conflicted bool
}

// pendingSet is the wallet's unconfirmed set, read from wtxmgr.
type pendingSet struct {
	txs map[chainhash.Hash]*pendingTx
	// spenders lists, for each outpoint an unconfirmed wallet
	// transaction spends, every such transaction, sorted.
	spenders map[wire.OutPoint][]chainhash.Hash
}

// readPending reads the unconfirmed wallet transactions and finds their
// conflicts. wtxmgr stores any number of unconfirmed spends of one
// outpoint (its unmined-inputs record is a list of txids), so two
// transactions relayed by different peers both stay until a block
// confirms one (insertMinedTx then removes the others) or they expire.
func (w *Wallet) readPending(tm walletdb.ReadBucket) (*pendingSet, error) {
	ps := &pendingSet{
		txs:      make(map[chainhash.Hash]*pendingTx),
		spenders: make(map[wire.OutPoint][]chainhash.Hash),
	}
	err := w.txStore.RangeTransactions(tm, noHeight, noHeight, func(details []wtxmgr.TxDetails) (bool, error) {
		for i := range details {
			d := details[i]
			ps.txs[d.Hash] = &pendingTx{details: &d}
			for _, in := range d.MsgTx.TxIn {
				ps.spenders[in.PreviousOutPoint] = append(ps.spenders[in.PreviousOutPoint], d.Hash)
			}
		}
		return false, nil
	})
	if err != nil {
		return nil, fmt.Errorf("unconfirmed transactions: %w", err)
	}
	for op, s := range ps.spenders {
		sortHashes(s)
		ps.spenders[op] = s
	}
	for h, p := range ps.txs {
		seen := make(map[chainhash.Hash]struct{})
		for _, in := range p.details.MsgTx.TxIn {
			for _, other := range ps.spenders[in.PreviousOutPoint] {
				if other == h {
					continue
				}
				if _, dup := seen[other]; !dup {
					seen[other] = struct{}{}
					p.conflicts = append(p.conflicts, other)
				}
			}
		}
		sortHashes(p.conflicts)
		p.conflicted = len(p.conflicts) > 0
	}
	// A descendant of a conflicted transaction is conflicted too.
	for changed := true; changed; {
		changed = false
		for _, p := range ps.txs {
			if p.conflicted {
				continue
			}
			for _, in := range p.details.MsgTx.TxIn {
				if parent, ok := ps.txs[in.PreviousOutPoint.Hash]; ok && parent.conflicted {
					p.conflicted, changed = true, true
					break
				}
			}
		}
	}
	return ps, nil
}

// sortHashes sorts txids by their bytes.
func sortHashes(s []chainhash.Hash) {
	sort.Slice(s, func(i, j int) bool { return bytes.Compare(s[i][:], s[j][:]) < 0 })
}

// coin is one wallet output no confirmed transaction spends.
type coin struct {
	op       wire.OutPoint
	amount   btcutil.Amount
	height   int32 // -1 when unconfirmed
	pkScript []byte
	coinbase bool
	// spentBy are the unconfirmed wallet transactions spending it.
	spentBy []chainhash.Hash
	// conflicted marks an output of a conflicted unconfirmed
	// transaction.
	conflicted bool
}

// readCoins returns every wallet output no confirmed transaction spends:
// wtxmgr's unspent outputs plus those it leaves out because an unconfirmed
// transaction spends them (that spend is only a peer's word until it
// confirms). The order is undefined.
func (w *Wallet) readCoins(tm walletdb.ReadBucket, ps *pendingSet) ([]coin, error) {
	credits, err := w.txStore.UnspentOutputs(tm)
	if err != nil {
		return nil, fmt.Errorf("unspent outputs: %w", err)
	}
	out := make([]coin, 0, len(credits))
	have := make(map[wire.OutPoint]struct{}, len(credits))
	for _, c := range credits {
		out = append(out, coin{
			op: c.OutPoint, amount: c.Amount, height: c.Height,
			pkScript: c.PkScript, coinbase: c.FromCoinBase,
		})
		have[c.OutPoint] = struct{}{}
	}
	for _, p := range ps.txs {
		d := p.details
		for _, deb := range d.Debits {
			if int(deb.Index) >= len(d.MsgTx.TxIn) {
				return nil, fmt.Errorf("%w: debit of input %d of %v", ErrCorrupt, deb.Index, d.Hash)
			}
			prev := d.MsgTx.TxIn[deb.Index].PreviousOutPoint
			if _, ok := have[prev]; ok {
				continue
			}
			c := coin{op: prev, amount: deb.Amount, height: noHeight}
			if parent, ok := ps.txs[prev.Hash]; ok {
				if int(prev.Index) >= len(parent.details.MsgTx.TxOut) {
					return nil, fmt.Errorf("%w: %v spends a missing output", ErrCorrupt, d.Hash)
				}
				c.pkScript = parent.details.MsgTx.TxOut[prev.Index].PkScript
			} else {
				md, err := w.txStore.TxDetails(tm, &prev.Hash)
				if err != nil || md == nil || int(prev.Index) >= len(md.MsgTx.TxOut) {
					return nil, fmt.Errorf("%w: credit %v spent by %v: %v", ErrCorrupt, prev, d.Hash, errOrMissing(err))
				}
				c.height = md.Block.Height
				c.pkScript = md.MsgTx.TxOut[prev.Index].PkScript
				c.coinbase = blockchain.IsCoinBaseTx(&md.MsgTx)
			}
			have[prev] = struct{}{}
			out = append(out, c)
		}
	}
	for i := range out {
		c := &out[i]
		c.spentBy = ps.spenders[c.op]
		if c.height < 0 {
			if p, ok := ps.txs[c.op.Hash]; ok {
				c.conflicted = p.conflicted
			}
		}
	}
	return out, nil
}
