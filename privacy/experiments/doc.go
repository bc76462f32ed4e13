// Package experiments reproduces published results on BIP37 filter
// privacy side by side with the formulas of package privacy and with
// measurements on real filters (package bip37) over synthetic universes
// and synthetic chains.
//
// Run executes one experiment of List by name and returns a Result: its
// seed and parameters, one Comparison row per quantity (measured, a 95 %
// interval of the kind the measurement calls for and that kind's name,
// the formula's and the published figure with its source, and a verdict
// where a test with power against the row's alternative could fail,
// Holm-corrected over the run: verdict.go) and the charts (privacy.Chart,
// drawn by package privacy/plot). Each experiment is a pure function of
// its Config: the same seed gives the same numbers.
//
// The building blocks are exported for experiments of one's own:
// NewSynthChain generates a chain of P2PKH payments among background
// users and one wallet, with its ground truth; Simulate plays a light
// client's filter Policy over a Scenario (new keys, restarts, new peers)
// and returns the transcript its peers would record, ready for
// privacy.Analyze; ClopperPearson, PoissonInterval and WilsonInterval
// bound Monte Carlo measurements, BinomialCDF and PoissonCDF are the exact
// distributions their tests use.
//
// Like package privacy, it is pure: no I/O, and no goroutines beyond the
// bounded fork-join of scan.Run.
package experiments
