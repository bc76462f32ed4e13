package spv

import (
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// Mirror drift. The node's mirror of a peer's filter replays the
// BLOOM_UPDATE_ALL insertions the server makes for the transactions the
// peer sends. The server also inserts for transactions the node never
// replays: mempool transactions it relays (it updates the filter when it
// decides to relay, then announces them), matched transactions of a
// filtered block it did not send again, or that the node discarded (an
// answer that turned stale after a reorg, a retry or a timeout). The mirror
// is then a subset of the server's filter, and the server may honestly send
// a transaction the mirror does not match: one spending an outpoint of such
// a transaction.
//
// So every txid a peer announced or matched under its current filter whose
// insertions the node did not replay is remembered, and a transaction that
// does not match the mirror is blamed on the peer (scored as unmatched,
// bitcoinj issue 876) only when none of its inputs spends one of them. It
// is dropped either way: a transaction the wallet needs always matches the
// mirror (the mirror holds every wallet element), so dropping it loses
// nothing.

// noteUnknown remembers txids ps's server may have matched under its
// current filter without the node replaying their insertions.
func (ps *peerState) noteUnknown(ids ...chainhash.Hash) {
	if ps.unknown == nil {
		ps.unknown = make(map[chainhash.Hash]struct{})
	}
	for _, id := range ids {
		if len(ps.unknown) >= maxUnknown {
			return
		}
		ps.unknown[id] = struct{}{}
	}
}

// replayed forgets a txid whose insertions the mirror now holds.
func (ps *peerState) replayed(id chainhash.Hash) { delete(ps.unknown, id) }

// resetDrift forgets the remembered txids and the unmatched relays: a
// filterload replaced the server's filter.
func (ps *peerState) resetDrift() { ps.unknown, ps.unmatchedRelays = nil, 0 }

// driftExplains reports whether an honest server could have matched tx
// through an insertion the mirror lacks: tx spends an output of a
// transaction remembered by noteUnknown.
func (ps *peerState) driftExplains(tx *wire.MsgTx) bool {
	for _, in := range tx.TxIn {
		if _, ok := ps.unknown[in.PreviousOutPoint.Hash]; ok {
			return true
		}
	}
	return false
}

// relayCache holds the bodies of the latest matched mempool relays, the
// oldest evicted first. Every peer whose filter matches a transaction
// announces it, and its server inserts the outpoints of the outputs it
// matched; the node fetches it from the first announcer only. Without the
// body the later announcers' mirrors lacked those outpoints, and a
// download-peer switch to one of them right after a payment reloaded
// every peer at once (switchNeedsReload): a reload only the payment
// explained.
type relayCache struct {
	txs   map[chainhash.Hash]*wire.MsgTx
	order []chainhash.Hash
	bytes int
}

// add keeps tx, evicting the oldest past the bounds.
func (c *relayCache) add(txid chainhash.Hash, tx *wire.MsgTx) {
	if c.txs == nil {
		c.txs = make(map[chainhash.Hash]*wire.MsgTx)
	}
	if _, ok := c.txs[txid]; ok {
		return
	}
	size := tx.SerializeSize()
	if size > maxRecentRelayBytes {
		return
	}
	c.txs[txid] = tx
	c.order = append(c.order, txid)
	c.bytes += size
	for len(c.order) > maxRecentRelays || c.bytes > maxRecentRelayBytes {
		old := c.order[0]
		c.order = c.order[1:]
		if t, ok := c.txs[old]; ok {
			c.bytes -= t.SerializeSize()
			delete(c.txs, old)
		}
	}
}

// get returns the body of a kept relay.
func (c *relayCache) get(txid chainhash.Hash) (*wire.MsgTx, bool) {
	tx, ok := c.txs[txid]
	return tx, ok
}
