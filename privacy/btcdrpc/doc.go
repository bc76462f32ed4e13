// Package btcdrpc reads a block chain from a btcd JSON-RPC server (HTTP
// POST, no TLS) as a element.Chain, for the analyzer's chain-based attacks
// (transaction graph, saturation) and for building a universe from what is
// on chain (element.ChainUniverse).
//
// ExportUniverse writes a chain's candidates to an element file in
// bounded memory (spill files by partition), for element.FileUniverse to
// stream back: a mainnet-sized universe is exported once and never held.
//
// It talks to the loopback interface only: Dial refuses any host but
// localhost or a loopback IP literal before it opens a connection, with an
// *AddressError, so RPC credentials never leave the machine and no name
// is resolved through DNS. Blocks are cached as they are read, because the
// analyzer walks the chain more than once; that suits the regtest and
// simnet chains the project analyzes, not a mainnet-sized chain.
package btcdrpc
