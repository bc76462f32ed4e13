// Package privacy models what a full node learns from the BIP37 filters a
// light client sends it: the transcript of every filterload, filteradd and
// filterclear, the candidate universe, the attacks of the literature
// (single filter, both-forms test, intersection, saturation replay,
// transaction-graph pruning), and the collapse curve of the false-positive
// anonymity set. The package is pure: no goroutines, no network, file I/O
// only through io.Reader and io.Writer.
package privacy
