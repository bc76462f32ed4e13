// Package netparams names the Bitcoin networks bloomwatch can sync and
// carries, for each, btcd's chain parameters plus what btcd lacks: the
// testnet4 parameters (BIP94), the difficulty rule family a header store must
// apply, and the DNS seeds with their service-bit filtering support.
//
// The package is pure data and lookups: no goroutines, no I/O.
package netparams
