package privacy

import (
	"github.com/bloomwatch/bloomwatch/decoy"
	"github.com/btcsuite/btcd/wire"
)

// Graph-near decoys: the noise policy `bloomwatch privacy experiment
// noise` found worth offering (docs/RESEARCH.md, "Noise"), and the one
// `bloomwatch sync --decoys N` uses (package spv). A light client
// inserts, beside its own scripts, the scripts of its counterparties read
// from its own transactions: the keys that paid it (revealed by their
// inputs) and the other outputs of its transactions (the payer's change,
// the payee). The transaction graph links them to the wallet's keys as
// closely as the wallet's keys are linked to each other, so graph pruning
// keeps them, and, persisted in every later filter, the intersection of
// filters keeps them too: the adversary's precision after every attack
// falls to about N / (N + decoys). They cost the bandwidth of the
// counterparties' later transactions, which a peer sends as matches.
//
// They hide which side of each transaction is the wallet, not which
// transactions involve it: every transaction linking a decoy to the
// wallet holds both. One-sided noise gives no differential-privacy
// guarantee; the experiment measures what it buys.

// GraphNearDecoys returns up to n decoy elements: have (the decoys chosen
// before, kept first and in order, so they persist), then the data pushes
// of txs' counterparties in transaction order: each input's revealed key
// as its hash160, then each output's push, skipping the wallet's own
// (own reports a push the wallet watches) and repeats. It never returns
// more than n, nor drops a decoy of have. It is decoy.GraphNear, which
// the light client (package spv) uses without importing the analyzer.
func GraphNearDecoys(txs []*wire.MsgTx, own func(push []byte) bool, have [][]byte, n int) [][]byte {
	return decoy.GraphNear(txs, own, have, n)
}
