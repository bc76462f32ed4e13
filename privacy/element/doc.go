// Package element is the vocabulary of what an adversary tests against a
// wallet's BIP37 filters: candidates (the addresses, keys and scripts on
// chain, each with the byte forms a filter may hold), universes of them,
// and the chains they come from.
//
// A Candidate carries its forms and the height it first appears at. A
// Universe streams candidates; an IndexedUniverse (SliceUniverse, Concat)
// fills any of them by index, and Stream and StreamRange turn one into a
// Universe that a reader may split by index range (Indexed). Universes
// come from an element file (ReadCandidates reads one whole,
// NewFileUniverse streams one far larger than memory; WriteCandidates and
// WriteTruthFile write them), from a Chain (ChainUniverse: every output
// script's candidates, with the public keys spends reveal;
// ChainOutpointUniverse: a script's push and its unspent outpoints as
// forms), or from the caller. ChainTxData and UniverseFromTxs size a
// universe from a chain's transaction count when none is read.
//
// A Set holds a wallet's elements (the truth) for exact membership tests,
// and WalletTxs marks the transactions of a block that pay them or spend
// what paid them.
//
// The package is pure: it reads files only through io.Reader and writes
// through io.Writer.
package element
