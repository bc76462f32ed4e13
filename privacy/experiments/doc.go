// Package experiments reproduces published results on BIP37 filter
// privacy side by side with the formulas of package privacy and with
// measurements on real filters (package bip37) over synthetic universes
// and synthetic chains.
//
// Run executes one experiment of List by name and returns a Result: its
// parameters, one Comparison row per quantity (measured, formula,
// published figure, relative difference, 95 % interval) and the charts
// (privacy.Chart, drawn by package privacy/plot). Each experiment is a
// pure function of its Config: the same seed gives the same numbers.
//
// The building blocks are exported for experiments of one's own:
// NewSynthChain generates a chain of P2PKH payments among background
// users and one wallet, with its ground truth; Simulate plays a light
// client's filter Policy over a Scenario (new keys, restarts, new peers)
// and returns the transcript its peers would record, ready for
// privacy.Analyze; WilsonInterval and PoissonInterval bound Monte Carlo
// measurements.
//
// Like package privacy, it is pure: no I/O, and no goroutines beyond the
// bounded fork-join of privacy.Scan.
package experiments
