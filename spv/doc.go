// Package spv is bloomwatch's light node: it connects to full nodes that
// serve BIP37 (NODE_BLOOM, BIP111), syncs headers first into a validated
// header store, loads one bloom filter built from a Watcher's elements into
// every peer, downloads filtered blocks (merkleblock plus the matched
// transactions) in a pipeline, verifies every partial merkle tree and
// delivers the blocks to the Watcher in height order. After the initial sync
// it asks for the peers' mempools (BIP35) and follows announcements, and on a
// reorg it rolls the Watcher back to the fork point.
//
// # Goroutines
//
// The node runs ONE manager goroutine that owns all sync state and selects
// on a message channel and quit (btcd's netsync habit); btcd's peer package
// runs its own goroutines per connection, whose message listeners only
// forward messages to the manager; one goroutine per outbound connection
// slot dials and reconnects with backoff; each event subscription has one
// goroutine draining its unbounded queue. Every channel send selects on
// quit.
//
// # Filter choices
//
// The filter uses BLOOM_UPDATE_ALL: a P2WPKH spend can only be matched
// through the outpoint it spends (servers never read witnesses), and with
// UPDATE_ALL the server inserts the outpoints of every output that matched,
// so spends of freshly received coins are matched without a reload. Because
// the server also inserts the outpoints of false positives, the filter is
// sized with headroom (see FilterCapacity) and the node keeps a local mirror
// of every server's filter (MatchTxAndUpdate replayed on the transactions the
// peer delivered, in the order it filtered them) so it knows the fill and
// predicted false-positive rate, and reloads when the prediction drifts past
// Config.ReloadFPRatio times the target. The tweak is persistent (stored in
// the data dir) and the capacity is quantized to powers of two so that
// successive filters share bit positions: a fresh tweak per reload would
// hand the adversary independent filters to intersect. Every filterload is
// recorded in the privacy transcript. filteradd is never sent: it reveals the
// added element on the wire in clear.
//
// # Re-requests
//
// When the Watcher's elements grow (an address derived past the gap limit,
// a received output whose spends must be matched) blocks already filtered
// with an older filter may lack matches. The node tracks where every element
// came from and, for every block filtered or in flight, which filterload it
// was filtered with; a block that may have missed a match is fetched again
// with a filter that holds the element (see coverage.go).
package spv
