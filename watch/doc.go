// Package watch is the contract between the light node (spv) and what it
// syncs (the watch-only wallet, or watchtest.MemWatcher in tests): the
// Watcher interface the node calls from its sync goroutine, the values that
// cross it (Elements for the filter, FilteredBlock in, BlockResult and
// MempoolResult out, SyncPoint), and ElementDelta with its accumulator
// DeltaLog, through which a watcher tells the node how its filter elements
// changed without handing the whole set over again.
//
// The package is pure vocabulary: no goroutines, no I/O. It sits beside spv
// rather than inside it so that the wallet, the dashboard and the privacy
// tools can speak it without importing the node.
package watch
