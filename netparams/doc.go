// Package netparams names the Bitcoin networks bloomwatch can sync and
// carries, for each, btcd's chain parameters (testnet4's and signet's
// included: btcd v0.25.0 defines testnet4 with BIP94) plus what btcd lacks:
// Bitcoin Core's minimum chain work, the difficulty rule family a header
// store must apply, and the DNS seeds with their service-bit filtering
// support.
//
// The package is pure data and lookups: no goroutines, no I/O.
package netparams
