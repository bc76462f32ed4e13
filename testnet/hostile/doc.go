// Package hostile is a misbehaving Bitcoin peer for reliability tests: a
// real wire-protocol server on 127.0.0.1 that accepts an SPV node's
// connection, performs the version handshake itself and serves the node
// from an honest upstream btcd (read over RPC), changing exactly one thing
// per named Scenario.
//
// Honest behaviour is truly honest: the peer loads the node's real
// filterload with bip37, answers getheaders from the upstream chain, builds
// each merkleblock with bip37.FilterBlock (updating the filter as a full
// node does) and sends the matched transactions after it, and answers ping
// with pong so the node can tell where a batch ends. A scenario then
// corrupts one message kind (a merkle proof, a header, the handshake's
// service bits, the byte stream) or one behaviour (stalling, disconnecting,
// omitting or inflating matches, flooding invs).
//
// The package starts goroutines (an accept loop and one per connection)
// because a network server needs them; every one of them ends on Close or
// when the Start context is cancelled, and Close waits for them.
package hostile
