// Package filterpolicy is how bloomwatch sizes and builds its BIP37 filter:
// the capacity with headroom for a server's BLOOM_UPDATE_ALL insertions
// (FilterCapacity), sizes that nest from one capacity step to the next
// (FilterSize), the filter itself (BuildFilter) and the policy defaults
// (DefaultFPRate, DefaultReloadFPRatio, DefaultWindow). Whether a filter is
// cut to BIP37's 36,000 bytes is bip37.Capped.
//
// The light node (spv), the client simulators (privacy/experiments) and the
// bench all import it, so what they model is what the node does. The
// package is pure: no goroutines, no I/O.
package filterpolicy
