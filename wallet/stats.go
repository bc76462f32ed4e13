package wallet

import (
	"fmt"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

// Stats are the wallet's match statistics over the blocks of its current
// chain (a Rollback removes those of the removed blocks) and the mempool.
type Stats struct {
	// BlocksApplied counts the blocks applied on the current chain.
	BlocksApplied int64 `json:"blocks_applied"`
	// Matched counts the distinct transactions peers sent inside
	// blocks; Relevant were the wallet's, FalsePositives were not.
	Matched        uint64 `json:"matched"`
	Relevant       uint64 `json:"relevant"`
	FalsePositives uint64 `json:"false_positives"`
	// The same for unconfirmed transactions, each txid once.
	MempoolMatched        uint64 `json:"mempool_matched"`
	MempoolRelevant       uint64 `json:"mempool_relevant"`
	MempoolFalsePositives uint64 `json:"mempool_false_positives"`
	// Elements and OutPoints size the current filter element set;
	// Scripts counts the watched scripts.
	Elements  int `json:"elements"`
	OutPoints int `json:"outpoints"`
	Scripts   int `json:"scripts"`
}

// Stats returns the match statistics at the applied point.
func (w *Wallet) Stats() (Stats, error) {
	unlock, err := w.enter()
	if err != nil {
		return Stats{}, err
	}
	defer unlock()
	return w.statsLocked(), nil
}

// statsLocked is Stats with w.mu held and the wallet usable.
func (w *Wallet) statsLocked() Stats {
	c := w.meta.counters
	s := Stats{
		Matched:               c.Relevant + c.FalsePositives,
		Relevant:              c.Relevant,
		FalsePositives:        c.FalsePositives,
		MempoolMatched:        c.MempoolRelevant + c.MempoolFalsePositives,
		MempoolRelevant:       c.MempoolRelevant,
		MempoolFalsePositives: c.MempoolFalsePositives,
		Elements:              len(w.watch.data),
		OutPoints:             len(w.watch.outpoints),
		Scripts:               len(w.watch.scripts),
	}
	if w.meta.firstApplied != noHeight {
		s.BlocksApplied = int64(w.synced.Height) - int64(w.meta.firstApplied) + 1
	}
	return s
}

// FalsePositive is one transaction a peer sent that was not the wallet's.
type FalsePositive struct {
	Txid chainhash.Hash `json:"txid"`
	// Height is the block the peer sent it in, or -1 for the mempool.
	Height int32 `json:"height"`
}

// FalsePositives returns up to limit false positives (limit <= 0: up to
// an internal cap): the unconfirmed ones this process was sent first
// (they are not stored), then by block, newest first.
func (w *Wallet) FalsePositives(limit int) ([]FalsePositive, error) {
	unlock, err := w.enter()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if limit <= 0 || limit > maxFalsePositiveList {
		limit = maxFalsePositiveList
	}
	var out []FalsePositive
	err = w.view(func(b readBuckets) error {
		mempool := make([]chainhash.Hash, 0, len(w.mempoolFP))
		for h := range w.mempoolFP {
			mempool = append(mempool, h)
		}
		sortHashes(mempool)
		for _, h := range mempool {
			if len(out) < limit {
				out = append(out, FalsePositive{Txid: h, Height: noHeight})
			}
		}
		bc := b.own.NestedReadBucket(bktBlocks).ReadCursor()
		for k, v := bc.Last(); k != nil && len(out) < limit; k, v = bc.Prev() {
			r, err := decodeBlockRecord(v)
			if err != nil {
				return err
			}
			height := int32(heightFromKey(k))
			for _, e := range r.entries {
				if e.verdict == verdictFalsePositive && len(out) < limit {
					out = append(out, FalsePositive{Txid: e.txid, Height: height})
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("false positives: %w", err)
	}
	return out, nil
}

// Match is one transaction a peer sent inside a block.
type Match struct {
	Txid chainhash.Hash `json:"txid"`
	// Position is the transaction's index in the block.
	Position      uint32 `json:"position"`
	FalsePositive bool   `json:"false_positive"`
}

// BlockMatches returns every transaction peers sent for the applied block
// at height, in block order (none for a block without matches).
func (w *Wallet) BlockMatches(height int32) ([]Match, error) {
	unlock, err := w.enter()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if height < 0 {
		return nil, nil
	}
	var out []Match
	err = w.view(func(b readBuckets) error {
		v := b.own.NestedReadBucket(bktBlocks).Get(heightKey(height))
		if v == nil {
			return nil
		}
		r, err := decodeBlockRecord(v)
		if err != nil {
			return err
		}
		for _, e := range r.entries {
			out = append(out, Match{Txid: e.txid, Position: e.pos, FalsePositive: e.verdict == verdictFalsePositive})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("block matches at %d: %w", height, err)
	}
	return out, nil
}
