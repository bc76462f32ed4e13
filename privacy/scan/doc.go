// Package scan streams a universe of candidates through a set of BIP37
// filters, the step every analysis of a transcript rests on: which
// candidates each filter matches through any of their forms and through
// all of them, and how many of each kind of candidate were tested.
//
// Run takes an element.Universe and a Config (the filters, the wallet's
// own elements as Truth, the worker count and MaxHits) and returns a
// Result: per-filter counts, the histograms by number of forms and by
// first height, and the Hits, the candidates a filter matched or the
// wallet owns, each with Bitset masks over the filters. Merge adds the
// result of another universe. A stream made by element.Stream or
// element.StreamRange is split across the workers by index range; a
// Synthetic universe (pseudorandom candidates from a seed, alone or as a
// part of an element.Concat) takes a fast path that generates and tests
// eight candidates per vector; any other universe is read in batches.
//
// RunSynthetic measures the scan rate on a synthetic universe against
// one-core baselines (a plain per-candidate test and btcutil's bloom
// filter) and puts each filter's matches beside the count its rate
// predicts; SyntheticReport.WriteText prints it. TranscriptFilters returns
// the filters an adversary holds at the end of a transcript.
//
// Run uses every core: it is a bounded fork-join whose workers all
// return before it does, the one place outside spv/ where the project
// starts goroutines, for the CPU-bound work of testing a mainnet-sized
// universe.
package scan
