// Package privacy models what a full node learns from the BIP37 filters a
// light client sends it, and measures it: the analyzer (Analyze) and the
// live meter (Meter).
//
// The adversary is a full node, or several colluding ones, that stores
// every filterload, filteradd and filterclear it receives (the transcript:
// records of package transcript), with time and chain height, and knows
// the chain. Given a transcript, a universe of candidates (every address,
// key or script on chain: Universe, read from an element file, a chain, or
// generated synthetically) and optionally the wallet's real elements,
// Analyze replays the filters, streams the universe through them once, and
// computes the collapse curve of the false-positive anonymity set, the
// adversary's precision and recall, and the entropy, after every event,
// for each stacked attack: the single-filter test, the both-forms test
// (pubkey AND hash160, or a script push AND its unspent outpoints, must
// match: ChainOutpointUniverse), the intersection of every filter
// observed (reloads, restarts, resizes, colluding peers) and the
// transaction-graph pruning (common-input ownership and change), plus a
// replay of the server-side UPDATE_ALL / P2PUBKEY_ONLY updates block by
// block (saturation), and the estimator attack on reloads of one tweak
// (Report.Reloads, EstimateReload). Every measured figure sits beside the
// model's.
//
// The model of several filters is Joint, keyed on hash seeds: filters
// that share a tweak share seeds and are correlated at any sizes, so the
// probability that a candidate passes them all is a product over
// distinct seeds, not over filters (docs/PRIVACY-MODEL.md). The analyzer,
// the meter and the experiments all use it; IndependentRate, the product
// of the filters' rates, stays as the named reference.
//
// Meter is the cheap live estimate the node and the TUI feed record by
// record: the joint model over the filters sent, cached, no scan. Its
// universe comes from the caller with a description (SetUniverse,
// UniverseFromTxs, MainnetChainTxData).
//
// Around this package:
//
//   - privacy/experiments reproduces the published results on real
//     filters, synthetic universes and synthetic chains, with a light
//     client simulator whose transcripts go through Analyze;
//   - privacy/plot draws the charts (Chart, from Report.Charts and the
//     experiments) as PNG or SVG with gonum/plot;
//   - privacy/btcdrpc reads a Chain from a btcd node's JSON-RPC server on
//     the loopback interface.
//   - privacy/stats holds the pure statistics the figures rest on: the
//     model's formulas, the 95 % intervals, the count comparisons and the
//     Holm correction.
//
// The package is pure: no network, file I/O only through io.Reader and
// io.Writer, and no goroutine outlives a call. The one exception to the
// project's rule of goroutines only in spv/ is the scan's bounded
// fork-join (parallel.go), which uses every core for the CPU-bound work of
// testing a mainnet-sized universe and returns only when all of its
// workers have.
package privacy
