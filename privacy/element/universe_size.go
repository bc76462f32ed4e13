package element

import (
	"fmt"
	"time"
)

// The size of the universe |A| the formulas assume when nobody scanned a
// chain: the live meter's estimates.
//
// A light client never sees the chain's scripts, only the transaction
// counts of the merkleblocks it receives (uncommitted: a peer could lie
// about them). Two figures are available without a full node:
//
//   - the transactions of the blocks this wallet filtered, times a
//     scripts-per-transaction factor (UniverseFromTxs): the part of the
//     chain the wallet's peers have shown it;
//   - for mainnet, Bitcoin Core's chainTxData (MainnetChainTxData): the
//     transaction count of the whole chain at a recent block, times the
//     same factor: the universe an adversary holding the chain tests.

// ScriptsPerTx is the number of distinct candidate scripts the estimates
// assume per transaction. It is an assumption, not a measurement: about
// two outputs per transaction, each paying a script the adversary can
// test. Address reuse makes the distinct scripts fewer (the figure errs
// on the side of more cover); scripts revealed by inputs (public keys)
// are not counted.
const ScriptsPerTx = 2

// ChainTxData is a published transaction count of a chain: Bitcoin Core's
// chainparams carry one per network for its sync progress estimate.
type ChainTxData struct {
	// Network names the chain.
	Network string
	// Time is the timestamp of the block the count was taken at.
	Time time.Time
	// TxCount is the number of transactions up to and including it.
	TxCount uint64
	// TxRate is the mean transactions per second over the window before
	// it (for extrapolating).
	TxRate float64
	// Source says where the figure was read.
	Source string
}

// MainnetChainTxData is Bitcoin Core's chainTxData for mainnet as of its
// September 2025 chainparams (src/kernel/chainparams.cpp: "getchaintxstats
// 4096" at block 912,683, nTime 1756722903 = 2025-09-01 10:35:03 UTC,
// tx_count 1,235,299,397, dTxRate 5.456290459519495).
var MainnetChainTxData = ChainTxData{
	Network: "mainnet",
	Time:    time.Unix(1756722903, 0).UTC(),
	TxCount: 1_235_299_397,
	TxRate:  5.456290459519495,
	Source:  "Bitcoin Core chainparams chainTxData (block 912,683, 2025-09-01)",
}

// Candidates returns the universe size the figure implies: TxCount times
// ScriptsPerTx.
func (d ChainTxData) Candidates() uint64 { return d.TxCount * ScriptsPerTx }

// Describe says, for UniverseSource, which universe this is and how it
// was obtained.
func (d ChainTxData) Describe() string {
	return fmt.Sprintf("%s scale: %s, %d transactions x %d scripts per transaction (assumption) = %d candidates",
		d.Network, d.Source, d.TxCount, ScriptsPerTx, d.Candidates())
}

// UniverseFromTxs returns the universe estimate from txs transactions seen
// in merkleblocks: txs times ScriptsPerTx.
func UniverseFromTxs(txs uint64) uint64 { return txs * ScriptsPerTx }

// DescribeTxUniverse says, for UniverseSource, that the universe is
// estimated from txs transactions counted in the merkleblocks of the
// heights from..to (where says where the count is kept; empty for none).
func DescribeTxUniverse(txs uint64, from, to int32, where string) string {
	s := fmt.Sprintf("estimated: %d transactions in the merkleblocks of heights %d..%d x %d scripts per transaction (assumption) = %d candidates",
		txs, from, to, ScriptsPerTx, UniverseFromTxs(txs))
	if where != "" {
		s += "; count kept in " + where
	}
	return s
}
