// Package spv is bloomwatch's light node. It connects to full nodes that
// serve BIP37 (NODE_BLOOM), syncs headers first into a validated header
// store (spv/headers), loads a bloom filter built from a Watcher's elements
// into every peer, downloads filtered blocks, verifies every partial merkle
// tree, and hands the blocks to the Watcher in height order. Once synced it
// asks the peers' mempools (BIP35), follows their announcements, and on a
// reorg rolls the Watcher back to the fork point and applies the new branch.
//
// # Usage
//
// A node needs a network, a data dir and a Watcher: the thing it syncs.
// Package wallet provides the watch-only wallet; watch/watchtest provides
// an in-memory Watcher for tests.
//
//	network, _ := netparams.Lookup("regtest")
//	n, err := spv.New(spv.Config{
//		Network: network,
//		DataDir: dir,
//		Watcher: w,
//		Connect: []string{"127.0.0.1:18444"},
//	})
//	if err != nil {
//		return err // errors.Is(err, spv.ErrBadConfig) for a bad field
//	}
//	sub := n.Subscribe() // before Start, to miss no event
//	if err := n.Start(ctx); err != nil {
//		return err
//	}
//	defer n.Stop()
//	if err := n.WaitSynced(ctx); err != nil {
//		return err
//	}
//	fmt.Println(n.Status().WatcherHeight)
//
// Without Config.Connect the node asks the network's DNS seeds for NODE_BLOOM
// peers (mainnet and the testnets); Config.Resolver replaces the system
// resolver and Config.Proxy sends every connection through SOCKS5 with no
// local lookup. The other Config fields have working defaults: the filter's
// false-positive target, the number of peers, the transport (BIP324 v2 with a
// v1 fallback), how many other peers check each block. Config.Tuning holds
// the timeouts, batch sizes and reload timing that tests, harnesses and
// measurements set; its zero value is the defaults, and user code leaves it
// out.
//
// # Events and status
//
// Subscribe returns a Subscription whose channel carries the node's events:
// PeerConnected, PeerDisconnected, PeersUpdated, HeadersProgress,
// FilterLoaded (with the transcript record of the filter sent),
// BlocksRequested, MatchedTx, BlockProcessed, BlockUnchecked, Reorg,
// PeerBanned, SyncDone and SyncStopped. Each subscription has its own
// unbounded queue, so a slow reader never stalls the sync; Close it when
// done. Status returns a snapshot: heights, the download peer, whether the
// node is synced and the error that stopped it. Synced means the download
// peer answered the last getheaders, the Watcher is at the header tip, the
// chain has the network's minimum work, and no block still waits for its
// omission check. Peers and Bans list the connections and the banned
// addresses.
//
// # Filters and privacy
//
// The node keeps one persistent filter tweak per data dir and reloads the
// filter only at jittered reload points, to every peer together, never
// right after a match; ReloadFilter asks for one now. Every filter is
// written to the privacy transcript (DataDir/spv/transcript.jsonl) before
// it is sent, with every run of blocks asked; package privacy replays that
// file as the peer would.
//
// # Broadcast
//
// Broadcast sends a signed transaction over a fresh, short-lived connection
// that never loads a filter, to a peer that is not the download peer, and
// waits until another peer relays it back or a block confirms it.
// BroadcastOptions choose the target and the bound; BroadcastResult says
// where it went and what confirmed it.
//
// # Hostile peers
//
// Everything a peer sends is checked: headers in context with proof of
// work and minimum chain work, every partial merkle tree with the checks of
// Bitcoin Core's ExtractMatches, every delivered transaction against a
// mirror of the filter that peer holds. Every block is asked again of other
// peers, so one peer cannot hide a payment. A peer that misbehaves is
// scored and banned (bans persist in DataDir/spv/bans.json); what it sends
// and what it makes the node hold, write or log is bounded per connection.
//
// # Concurrency
//
// The node runs one manager goroutine that owns all sync state and selects
// on its message channel and quit. btcd's peer package runs each
// connection's goroutines, which only forward messages to the manager. The
// exported methods are safe for concurrent use. Start runs once
// (ErrAlreadyStarted after that, ErrStopped after Stop); Stop is idempotent
// and waits for every goroutine the node started.
//
// The design behind each part, and what the node assumes of the servers
// it has been tested against (btcd, bcoin) and read from (Bitcoin Core), is
// in docs/ARCHITECTURE.md.
package spv
