// Package spv is bloomwatch's light node: it connects to full nodes that
// serve BIP37 (NODE_BLOOM, BIP111), syncs headers first into a validated
// header store (spv/headers), loads a bloom filter built from a Watcher's
// elements into every peer, downloads filtered blocks (merkleblock plus the
// matched transactions) in a pipeline, verifies every partial merkle tree
// and delivers the blocks to the Watcher in height order. After the
// initial sync it asks the peers' mempools (BIP35) and follows
// announcements, and on a reorg it rolls the Watcher back to the fork
// point and applies the new branch.
//
// The vocabulary the node shares with others lives beside it: the Watcher
// contract and its values in package watch (and an in-memory Watcher for
// tests in watch/watchtest), the networks in netparams, the filter's
// sizing and defaults in filterpolicy (shared with the simulators and the
// bench), the transcript's reason words in transcript. This package keeps
// the node, its manager and its peers.
//
// # Goroutines
//
// The node runs ONE manager goroutine (manager.go) that owns all sync
// state and selects on a message channel, a housekeeping tick and quit
// (btcd's netsync habit). btcd's peer package runs its own goroutines per
// connection, whose message listeners only forward messages to the
// manager (peer.go); one goroutine per outbound connection slot dials and
// reconnects with exponential backoff; each event subscription has one
// goroutine draining its unbounded queue (queue.go). Every channel send
// selects on quit. The exported methods read snapshots under a mutex.
//
// # Broadcast
//
// Node.Broadcast (broadcast.go) sends a signed transaction over a fresh,
// short-lived connection that never loads a filter (its own SOCKS
// username through the proxy), to a peer that is not the download peer,
// answers that peer's getdata for it alone, and waits until a filter peer
// other than that one relays it back (then it is in another mempool, and
// the watcher gets it as any relayed match) or a block confirms it.
// Everything the target sends is budgeted: DefaultBroadcastTimeout,
// MaxBroadcastBytes, three getdata answered; the rest is ignored. The
// broadcast runs on the caller's goroutine; btcd's peer package runs the
// connection's own.
//
// # Peers
//
// Explicit peers (Config.Connect) or DNS seeds (seeds.go), asked for the
// service-bit subdomain x5.<seed> (NODE_NETWORK|NODE_BLOOM, which
// bitcoin-seeder serves by default; it answers nothing for x4) and, when
// that gives nothing, for the plain name, through Config.Resolver; a few
// seeds per round, answers without a usable address logged and the
// seeds asked again with backoff once every learned address failed. A
// peer must advertise NODE_BLOOM and protocol 70011 (BIP111) or it is
// refused at the handshake.
//
// With Config.Proxy every connection goes through a SOCKS5 proxy and
// nothing is resolved locally (dial.go, socks.go): names go to the proxy,
// and each DNS seed is reached by connecting to its name and asking the
// node there for addresses (getaddr, addrfetch.go), as Bitcoin Core does
// with a name proxy. Each proxied connection authenticates with its own
// username and password (stream isolation: Tor gives it a circuit of its
// own) unless Config.NoProxyIsolation; the path each filter took is the
// transcript record's Via. The download peer is
// the one with the best announced chain (the first listed among equals),
// picked once Config.MinPeers are ready (or MinPeersWait passed); it is
// replaced when it disconnects, is banned, has nothing more we need or
// turns out to be lagging (below). A peer's height comes from its
// headers, not from its version message.
// With more explicit addresses than slots, a slot whose peer fails moves
// on to a spare address.
//
// # Transport
//
// Each connection speaks BIP324's encrypted v2 transport or the plaintext
// v1 one (transport.go), through btcd's peer package (UsingV2Conn, which
// needs NODE_P2P_V2 in our own services) over a wire wrapper
// (wireconn.go). Config.Transport auto (the default) tries v2 first with
// explicit peers and peers that advertised NODE_P2P_V2 (addr messages;
// DNS answers carry only the bits asked for), and reaches the others over
// v1; a v1 peer whose version advertises NODE_P2P_V2 is left at the
// verack, before any filter, and reached again over v2. A v2 attempt that
// got nothing back (the peer hung up, or the handshake bound passed) or a
// v1 answer (the network magic: bcoin 1.0.2 answers bytes it cannot parse
// with reject messages) is followed at once by a v1 one, and the address
// is reached over v1 from then on; a handshake that failed after other
// bytes (garbage, a key deriving other secrets, a broken packet) is a
// failed attempt, never a v1 fallback (Core's ShouldReconnectV1).
// TransportV2 refuses plaintext peers (ErrPeerPlaintext). The wrapper
// sends the 64-byte key alone and holds the garbage btcd writes with it
// until the peer's first bytes (a v1 peer then sees 64 bytes, not up to
// 4,159), never sends a key that would stall a btcd v1 peer (btcd's wire
// package, its magic wrong, first discards the payload length that bytes
// 16-19 claim: 1 key in 128 left it waiting for the handshake bound; the
// connection is closed empty and made again with a new key, v1Stalls),
// bounds the whole handshake (Config.HandshakeTimeout), and
// writes each message in one write, so a filterload and the decoy packet
// that pads it to a size class (Config.FilterPadding, filterpolicy) leave
// as one burst. The transcript records each message's transport and a
// filterload's burst; Config.WireTap reports every write and received
// packet as an on-path observer sees them. The address fetch from a DNS
// seed's node through a proxy (getaddr, no filter) stays on v1.
//
// # Header sync and "synced"
//
// Every getheaders is followed by a ping, the fence (headersync.go). Peers
// answer a peer's messages in order, so the pong comes after the headers
// if there are any; a pong with no headers before it, like an empty
// headers reply, means the peer gave nothing after our locator. The node
// does not depend on the empty reply: Core and btcd send one when they
// have nothing new, bcoin sends nothing. "Nothing" means "at our tip" only
// when the peer claims no more than our tip: its version's start height
// (until a short headers reply showed where its chain ends) is not above
// it and it announced no block we lack. An explicit empty headers reply
// from a peer that claims no more than our tip forgets a block it
// announced that we lack: the block is off its best chain (it reorganized
// away from it; Core does not announce blocks in initial block download).
// A peer that claims more and gives
// nothing is lagging (in initial block download, or lying): it serves no
// filtered block, hands the download role to another peer when there is
// one, is asked again every 30 s (at once when it announces a block), is
// disconnected without a score after 5 minutes, and its word never makes
// the node synced; an omission check may still wait for it to catch up
// (spotcheck.go). Synced means: the download peer answered our last
// getheaders and is not lagging, the watcher is at the header tip, no
// omission check is in flight, and the chain has the network's minimum
// work. The stall timeout (Config.StallTimeout) is the last resort, for a
// peer that answers not even the ping. It measures progress, not traffic:
// the time since the peer last answered the data it owes (a merkleblock,
// tx, block or notfound for a request, a batch's pong) and the age of an
// unanswered getheaders; a download peer that stops answering its batch
// and sends empty headers messages instead is dropped all the same and
// another peer takes over. The fence's nonce is unique within
// the node, so it is never mistaken for a batch's ping (ps.pings).
//
// # Servers: assumptions reviewed
//
// The tests sync against btcd v0.25.0, with and without --v2transport,
// and bcoin 1.0.2 (the scenario table in impl_scenarios_test.go; the
// transport cases in transport_integration_test.go); Bitcoin Core cannot run here and is read
// from its source (docs/CORE.md). What each server does where they
// differ, and what the node does about it:
//
//   - getheaders with nothing new: Core and btcd answer an empty headers
//     message, bcoin nothing; bcoin and btcd (tip older than 24 h) ignore
//     getheaders while not synced, old Core during initial block
//     download, and current Core answers empty below its minimum chain
//     work. Handled by the fence and the peer's claims (above).
//   - A peer's announced height: the version's start height is a claim;
//     the download peer is first picked by it, then judged by its
//     headers. A lagging peer is passed over.
//   - notfound: bcoin and btcd send it for a filtered block they lack (and
//     bcoin for any filtered block before a filterload, and for a
//     confirmed tx asked with MSG_TX); Core sends it only for txs and
//     stays silent for blocks. A filtered block's notfound lowers the
//     peer's height without penalty; silence is caught by the batch's
//     pong and costs a tenth of the ban score. A filterload always
//     precedes the first getdata (onPeerReady), so bcoin's notfound
//     before a filterload never arises.
//   - tx after merkleblock: Core (since it stopped skipping known txs),
//     btcd and bcoin send every matched tx, one already fetched from the
//     mempool included; the node takes it again as the block's, and asks
//     a missing match with MSG_TX before fetching the block again, so the
//     old Core habit (matched txs the peer believed known left out) costs
//     a retry, not a miss.
//   - Block announcements: every server announces by inv unless the peer
//     sent sendheaders, which the node never does; an unknown block's inv
//     asks for headers (and marks the peer as claiming more until they
//     come), unsolicited headers are connected or, when they do not
//     connect, answered with a getheaders (at most 10 in a row). bcoin
//     announces nothing after an invalidateblock until the next block.
//   - sendheaders, feefilter, sendcmpct, cmpctblock, wtxidrelay,
//     sendaddrv2, addr and the servers' pings: btcd's peer package skips
//     the messages its wire does not know (sendcmpct, cmpctblock,
//     wtxidrelay) before and after verack, records sendheaders, honours
//     sendaddrv2, answers pings, and drops the rest for want of a
//     listener. The node sends none of them, so servers relay every
//     matching tx by txid and announce blocks by inv.
//   - mempool (BIP35): Core and btcd announce the matching txs, nothing
//     when none match (Core at its next trickle); bcoin announces its
//     whole mempool. The node waits for no answer; an announced tx the
//     filter does not match is dropped unscored, and a peer's relays are
//     no longer fetched after 100 of them. A relayed tx is only the
//     peer's word: one no valid block can hold (btcd's
//     CheckTransactionSanity; in a block too) bans the peer
//     (MisbehaviorInvalidTx), and one the Watcher refuses over its
//     budgets (a watch.TxRefusal: the wallet's per-transaction and
//     pending-set bounds) is logged, and scored (MisbehaviorRefusedTx)
//     when the tx alone is over a budget; the sync goes on.
//   - btcd's peer package has a stall handler of its own, made for a full
//     node: after a mempool request it expects an inv within 30 s, after
//     a getheaders a headers message within 90 s, after a getdata a
//     block, merkleblock, tx or notfound within 30 s, and disconnects the
//     peer otherwise (checked every 15 s). A synced node with nothing
//     matching in the server's mempool was thus disconnected every 45 s
//     by btcd and bcoin alike, sending a filterload again at each
//     reconnect (measured: every 45 s against both, with and without the
//     fence). The node's own stall detection (onTick, busy) covers every
//     request it makes, so the package's handler is to be turned off in
//     peerConfig (peer.Config.DisableStallHandler, which stopped those
//     disconnects in a probe); until then they still happen.
//   - bcoin's tx invs are flushed every 5 s, block invs at once;
//     sendrawtransaction returns before bcoin validated the tx (the
//     testnet harness waits for its mempool).
//
// # Filter choices
//
// The filter (filterpolicy.BuildFilter) uses BLOOM_UPDATE_ALL: a P2WPKH spend can only be
// matched through the outpoint it spends (servers never read witnesses),
// and with UPDATE_ALL the server inserts the outpoints of every output
// that matched, so spends of coins received since the load match without
// a reload. Because the server also inserts the outpoints of false
// positives, the filter is sized with headroom (filterpolicy.FilterCapacity: twice the
// elements, a power of two, at least 64). The node keeps a local mirror
// of every server's filter (MatchTxAndUpdate replayed on the transactions
// the peer delivered, in the order it filtered them; the mirror is always
// a subset of the server's filter; it tests transactions with the
// server's own relevance rules, bip37.RulesFor its user agent: btcd tests
// empty pushes, Core and bcoin do not) so it knows the fill and predicted
// false-positive rate, and reloads every peer when a prediction passes
// Config.ReloadFPRatio times Config.FPRate (at once during a catch-up, at
// the next reload point on the live chain: see Reloads). Transactions a peer
// sends that do not match the mirror are dropped and scored (bitcoinj
// issue 876): they never count as false positives and never cause a
// reload. The tweak is persistent (filter.json in the data dir) and the
// capacity quantized to powers of two, so successive filters set the same
// bits for the same elements: a fresh tweak per reload would hand the
// adversary independent filters to intersect. Every filterload is
// recorded, per peer with time, height and reason, in the privacy
// transcript (transcript.jsonl), and so is every getdata of filtered
// blocks, as runs of consecutive heights with their reason (sync, live,
// refetch, check): the request pattern shows a peer the wallet's birthday
// and the blocks asked again after a reload. A filter record is synced to
// disk before its filterload goes out; a getdata record is written before
// its message and made durable by the next filter record or the close.
// filteradd is never sent: it reveals the
// added element in clear. A filter that would match everything (no bits
// or no hash functions, as a loose Config.FPRate gives) is refused
// (filterpolicy.ErrFilterMatchesAll); a wallet of more than
// filterpolicy.MaxFilterElements elements gets the capped filter with one
// hash function, and a warning.
//
// # Decoys
//
// With Config.Decoys N (bloomwatch sync --decoys N; 0, the default, turns
// them off) every filter holds up to N graph-near decoys beside the
// Watcher's elements (decoys.go, package decoy): the scripts of the
// Watcher's counterparties (the keys that paid it, revealed by their
// scriptSigs; the payer's change; the payees; never a witness, which the
// txid does not cover and the sending peer could rewrite to choose a
// decoy it knows), chosen from the Watcher's own
// transactions as they are delivered and persisted in decoys.json in the
// data dir, so every later filter, after restarts and resizes, holds the
// same ones and intersecting filters does not remove them. A corrupt
// decoys.json stops New (ErrCorruptDecoys) and is never reset. No peer is
// reloaded to add a decoy; it joins the next filter sent. Decoys are not
// Watcher elements: a transaction that matches only a decoy is a false
// positive to the Watcher (Status.DecoyMatches counts them, the cost),
// and the mirrors, the drift rules and the omission checks treat decoys as
// any other filter element, so an honest peer that sends decoy matches is
// never scored, and a decoy match the second peer reports is judged
// against the first peer's filter as it was, not as a wallet transaction.
// A busy decoy (DecoyBusyLimit false positives in a run, such as a
// counterparty's reused address) is retired: every peer is reloaded
// without it at the next reload point (reason "decoy-busy"; the blocks
// asked before then still bring its traffic) and decoys.json keeps it as retired,
// never chosen again; an adversary sees it leave the filters and learns
// it was a decoy, which bounds what it costs.
// `bloomwatch privacy experiment noise` measured (40 transactions a block,
// after filter intersection and transaction-graph pruning) an adversary's
// precision of 0.88 / 0.74 / 0.56 with 3 / 10 / 30 decoys, for 1.1 / 2.3 /
// 4.9 false-positive transactions per 1,000 blocks, where a looser
// false-positive target of the same bandwidth leaves it at 1. Decoys hide
// which side of a transaction is the wallet, not which transactions
// involve it; one-sided noise gives no differential-privacy guarantee.
//
// # Reloads
//
// No match makes the node send a filter (reload.go; issue 24: a reload
// right after a payment told the peer that relayed or served it that it
// was the wallet's). The Watcher keeps a lookahead reserve of keys beyond
// its gap limit that every filter holds (watch.ElementDelta.Reserve and
// Due; the wallet's DefaultReserve and CatchUpReserve), so a payment
// never needs a new filter to stay safe. Filters change only at reload
// points, every Config.ReloadEvery delivered blocks or
// Config.ReloadInterval, each interval drawn from half to one and a half
// times its mean, and only when something is pending: elements the last
// filter lacks (the reserve was topped up: "new-key"), a drifted filter
// ("fp-drift"), a decoy to retire ("decoy-busy"), outpoints a peer's
// filter lacks ("outpoints"). Every peer then gets the same filter, after
// answering what it was asked (the drain: nothing in flight is thrown
// away or filtered twice), and on the live chain only after the quiet
// window: Config.QuietBlocks delivered blocks and Config.QuietTime since
// the last wallet transaction (block or mempool), at most three
// QuietTimes past the point. A new peer gets the filter the others got
// at the last reload. After a reload on the live chain each peer's
// mempool is asked again (within btcd's ban score for mempool requests:
// peer.go). During a catch-up a drifted filter is reloaded at once, to
// every peer: the filterload comes while the peer still serves the
// window asked before it, and the fill it reacts to is the server's own.
// Every reload carries the outpoints the servers inserted for the
// outputs they matched, false positives' included, until spent (carry):
// a filter of the wallet's elements alone held its unspent outputs and
// none of the false positives' the server had inserted, so every peer
// could tell which matched outputs were the wallet's by testing them
// against the new filter. A reload for a drifted filter drops them (the
// fill they cause is what it resets) and still shows that split, for the
// outputs matched since the previous one; so does the first filter after
// a restart (the carried set is not persisted). What a reload still shows
// a peer otherwise: that something changed since the previous one (new
// keys, after payments somewhere in the interval).
//
// # Re-requests (the gap-limit race)
//
// When the Watcher's elements change while it applies block h (an address
// derived past the reserve, a received output) the node checks what the
// delta needs now (Data, Due, and for a block or a rollback its
// outpoints) against the download peer's mirror. Elements the server
// already inserted itself (UPDATE_ALL outpoints) cost nothing. When the
// mirror lacks one (the reserve ran out between two reload points: a deep
// first sync of a busy wallet, an import; a reorg that makes a payment
// pending again, whose inputs the filter must then watch), delivery stops
// after h, every peer gets a new filter (at once during a catch-up and
// after a rollback, whose new elements name the payments it made pending
// whatever the timing; after the quiet window on the live chain, the
// blocks still fetched meanwhile) and the blocks from h on are fetched
// again, starting at the
// aligned boundary below h (a multiple of Config.RefetchWindow): the
// blocks between the boundary and h come in the same getdata, as cover,
// and are discarded, so the first block of a re-fetch is not the paying
// block. The Watcher re-applies h (same height and hash) and goes on.
// Outpoints a mempool transaction adds are not checked: the server
// inserts them when it filters the block that confirms it. The guards of
// a pending payment (the payer's inputs, which no server inserts) wait
// for the next reload point: a double spend of them confirmed before
// then is not matched, and the payment stays pending until it expires.
// Requests answered after a filterload are matched to it by order (btcd
// answers getdata in order): answers to requests sent before it are
// discarded.
//
// # Filtered blocks
//
// Blocks from the Watcher's birthday up to the header tip are requested in
// getdata batches of Config.BatchSize MSG_FILTERED_BLOCK entries, at most
// Config.Window ahead of the Watcher, each batch closed by a ping: the
// pong proves the peer answered (or skipped) every entry. A merkleblock
// must answer an outstanding request of that peer; its tree must pass
// bip37.VerifyMerkleBlock against its own header (whose hash is the one
// requested, so it is in the validated header chain); the txs that follow
// it must be among its matches. Matched txs that do not come are asked
// with MSG_TX, then the block is fetched again.
//
// # Omission detection
//
// A peer can hide a matched transaction behind a valid proof by clearing
// its match flag, or hide all of a block's matches by understating its
// transaction count (the merkle root does not commit to it). Each delivered
// block is asked again from Config.CheckPeers (2) second peers when
// connected, drawn afresh for each block with a cryptographic generator,
// peers in other network groups (IPv4 /16, IPv6 /32) than the download
// peer's first (checkers.go): every block by default, or with probability
// 1/Config.SpotCheckEvery drawn at random. Every answer is proven to be in
// the block; each peer that answered is judged by replaying all of them
// through its own filter as it was when it filtered the block: a
// transaction it matches and did not send bans it, and when it is the
// download peer the Watcher is rolled back to re-fetch the block
// (spotcheck.go). A second peer whose filter lacks one of the Watcher's
// outpoints (it filtered neither the block that created it nor a filter
// with it since) gets a new filter before it is asked.
//
// # Misbehaviour
//
// Invalid headers, invalid merkle trees, unrequested merkleblocks, txs
// that are not in the merkleblock they follow, 64-byte txs and omissions
// ban at once; headers that do not connect and unrequested txs cost half
// the threshold; unmatched txs and stalls a fifth; unanswered batch
// entries a tenth, and so do valid side branches that never become the
// best chain: trailing by more than the side-branch margin, evicted by
// the store's bound on side-branch headers (the least work goes first,
// the branch that becomes best always gets in), or held beyond a quarter
// of that bound by one peer (headersync.go). A branch that becomes best
// never costs its sender anything (misbehavior.go, banman.go). Bans
// persist in bans.json.
package spv
