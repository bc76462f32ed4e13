// Package reliability holds the end-to-end crash and recovery tests of
// bloomwatch: they build the real binary, run `bloomwatch sync` against a
// regtest btcd started by testnet, kill it with SIGKILL at seeded random
// moments, damage its files, and compare what it reports afterwards with
// an uninterrupted run; and one relays a fabricated payment of 70,000
// outputs from a hostile peer to a running sync and measures the memory
// `wallet balance` takes afterwards. The package has only tests.
package reliability
