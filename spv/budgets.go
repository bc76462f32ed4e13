package spv

import (
	"math"
	"time"

	"github.com/btcsuite/btcd/wire"
)

// This file names every bound the node holds a peer to: what a peer can
// make the node hold in memory, write to the network, or write to the log.
// The account that enforces them is peerAccount (account.go); the log's
// limits are enforced by logLimiter (peerlog.go). Bitcoin Core's
// net_processing.cpp and net.h constants and btcd's peer package are the
// models; each bound says what it protects.

const (
	// maxWriteQueueBytes bounds the bytes queued for a peer and not yet
	// written to its socket: the node's own requests and the pongs
	// btcd's peer queues for each ping, in a list of its own without a
	// bound. A peer that stops reading and keeps pinging grows it by 32
	// bytes (and btcd's list element) a ping; past the bound it is
	// disconnected and scored (misbehaviorWriteQueue). The node's own
	// largest burst is a filterload (36,000 bytes) and a window of
	// getdata requests, a few tens of kB. Core's DEFAULT_MAXSENDBUFFER is
	// 1,000 kB.
	maxWriteQueueBytes = 1 << 20

	// writeTimeout bounds each write to a peer's socket (wireConn): a
	// peer that leaves it unread with its receive window full is
	// disconnected when a write waits this long. btcd's peer sets no
	// write deadline; lnd's peer gives a message 5 s. A 36 kB filterload
	// over a slow Tor circuit fits well inside.
	writeTimeout = 30 * time.Second

	// maxInboxBytes bounds the wire bytes of a peer's messages read and
	// handed to the manager but not yet handled by it: past it, the
	// peer's reader waits (its TCP window closes) until the manager
	// catches up, as Core stops reading a peer whose receive queue holds
	// more than its flood size (DEFAULT_MAXRECEIVEBUFFER, 5,000 kB). It
	// holds a full block (4 MB, a spot check's) at once; a larger message
	// counts as the whole bound.
	maxInboxBytes = 5 << 20

	// maxRejectPayload caps a reject message's payload: the command (at
	// most 12 bytes), the code, the reason and a hash. wire accepts 32
	// MiB (MaxMessagePayload) and Core caps the reason it sends at 111
	// bytes (MAX_REJECT_MESSAGE_LENGTH); a longer one is a peer spending
	// the node's memory and log, not explaining a refusal.
	maxRejectPayload = 1024

	// maxPeerStateBytes bounds what the manager holds for one peer
	// (peerState.stateBytes): its requests in flight (a download window
	// of a few thousand blocks), the merkle block whose transactions are
	// arriving (at most a block's 4 MB of them), the txids it may have
	// matched unseen (maxUnknown) and its side tips (maxSideTips). The
	// message-sequence fuzz target (FuzzMessageSequences) checks it after
	// every message.
	maxPeerStateBytes = 8 << 20

	// excessScore is the ban score each message over its type's rate
	// budget adds (misbehaviorExcessMessages): ten over the burst ban
	// the peer.
	excessScore = banThreshold / 10
)

// What the manager keeps for one peer, each bounded where a peer chooses
// how much.
const (
	// maxUnknown bounds the remembered txids per peer and filter
	// (drift.go). An honest server relays only the mempool transactions
	// its filter matches, a handful per block at the rates bloomwatch
	// uses; a peer that announces more (an inv flood) gains nothing by
	// it: txids past the bound are not remembered, so they explain
	// nothing.
	maxUnknown = 10_000

	// maxTxReqs bounds the transactions asked from one peer at a time.
	maxTxReqs = 1_000

	// maxUnmatchedRelays is how many announced transactions that do not
	// match its filter a peer may send (per filterload) before the node
	// stops fetching its announcements.
	maxUnmatchedRelays = 100

	// maxRecentRelays and maxRecentRelayBytes bound relayCache: the
	// relays kept for replay into a later announcer's mirror, in count
	// and in serialized bytes (a peer chooses what it relays).
	maxRecentRelays     = 1_000
	maxRecentRelayBytes = 4 << 20

	// maxUnconnectingHeaders is how many unsolicited headers
	// announcements in a row that do not connect a peer may send before
	// it is scored and dropped (Bitcoin Core's
	// MAX_NUM_UNCONNECTING_HEADERS_MSGS is 10).
	maxUnconnectingHeaders = 10

	// maxSeedAddrs bounds the addresses taken from one seed's answer
	// (Bitcoin Core's limit per DNS seed).
	maxSeedAddrs = 256
)

// payloadCap returns the payload cap of cmd that is smaller than wire's
// own (msg.MaxPayloadLength), if it has one: a v1 frame announcing more is
// refused before its payload is read (wireConn.follow), a v2 message after
// (peerAccount.onRead, which v2's encrypted framing leaves the only
// place).
func payloadCap(cmd string) (uint32, bool) {
	if cmd == wire.CmdReject {
		return maxRejectPayload, true
	}
	return 0, false
}

// msgBudget is the rate budget of one message type: a token bucket that
// refills at Rate messages a second up to Burst. A message finding the
// bucket empty is dropped unhandled and scored (misbehaviorExcessMessages).
// Answers, whose count is bounded by the node's own requests, have an
// infinite rate: an unrequested one is scored by the manager
// (misbehaviorUnrequestedBlock, misbehaviorUnrequestedTx, ...).
type msgBudget struct {
	Rate  float64 // messages a second; math.Inf(1): no rate bound
	Burst int
	// Why says what the budget protects, for the docs' table.
	Why string
}

// answerBudget is the budget of a message that answers a request.
var answerBudget = msgBudget{Rate: math.Inf(1), Why: "an answer: bounded by the node's requests; an unrequested one is scored by the manager"}

// otherBudget is the budget of every message type msgBudgets does not
// name, including commands wire does not know (they are read and
// discarded without being held): requests to a node that serves nothing,
// and announcements it ignores.
var otherBudget = msgBudget{Rate: 1, Burst: 20, Why: "ignored or unknown: Core's sendcmpct, feefilter, getheaders at connect"}

// msgBudgets is the rate budget of each message type a peer sends the
// node. The bursts are far above what an honest peer sends in a burst;
// the rates above its average.
var msgBudgets = map[string]msgBudget{
	wire.CmdMerkleBlock: answerBudget,
	wire.CmdBlock:       answerBudget,
	wire.CmdTx:          answerBudget,
	wire.CmdCFilter:     answerBudget,
	wire.CmdCFHeaders:   answerBudget,
	wire.CmdCFCheckpt:   answerBudget,
	// A getheaders reply carries 2,000 headers: mainnet's whole chain is
	// under 500 replies. An announcement (sendheaders) is one per block.
	wire.CmdHeaders: {Rate: 10, Burst: 1000, Why: "a getheaders reply or a block announcement: each runs a header-store connect"},
	// Core bundles its block announcements per send loop (100 ms) and
	// trickles transaction invs every 2-5 s (Poisson); an inv of an
	// unknown block makes the node ask for headers and log it.
	wire.CmdInv: {Rate: 10, Burst: 500, Why: "announcements: each unknown block costs a getheaders and a log line"},
	// One per getdata the node sent, for what the peer lacks.
	wire.CmdNotFound: {Rate: 50, Burst: 500, Why: "answers to getdata: a notfound of nothing asked is free for the peer"},
	// The node pings once per batch of block requests.
	wire.CmdPong: {Rate: 100, Burst: 1000, Why: "answers to the node's pings, one per batch"},
	// Core and btcd ping every 2 minutes; each ping queues a pong.
	wire.CmdPing: {Rate: 1, Burst: 10, Why: "each ping queues a pong: write queue and CPU"},
	// Core relays addresses at 0.1 a second per peer on average
	// (MAX_ADDR_RATE_PER_SECOND) in messages of up to 1,000.
	wire.CmdAddr:   {Rate: 1, Burst: 20, Why: "addresses the node does not use"},
	wire.CmdAddrV2: {Rate: 1, Burst: 20, Why: "addresses the node does not use"},
	// A reject answers a message of the node's: a filterload, a tx.
	wire.CmdReject: {Rate: 1, Burst: 20, Why: "each is logged: log bytes"},
}

// budgetFor returns the rate budget of the message type cmd.
func budgetFor(cmd string) msgBudget {
	if b, ok := msgBudgets[cmd]; ok {
		return b
	}
	return otherBudget
}

// The log's bounds (logLimiter, peerlog.go): what a peer can make the
// node write about it.
const (
	// logBurst and logRate are the token bucket of log lines of one kind
	// (one message text) about one peer: past it, lines are counted and
	// one "suppressed N" line reports them when the bucket refills.
	logBurst = 20
	logRate  = 1.0 // lines a second
	// maxLogKeys bounds the (peer, kind) buckets held: peers are few and
	// kinds are the program's own strings, so it is reached only by a
	// bug; the buckets are then forgotten, not grown.
	maxLogKeys = 4096
)

// LogFileMaxBytes and LogFileRolls bound the log file on disk: it is
// rotated (github.com/jrick/logrotate) when it passes LogFileMaxBytes, and
// LogFileRolls gzipped old files are kept. A peer that floods the log fills
// at most this much disk, whatever else goes wrong.
const (
	LogFileMaxBytes = 10 << 20
	LogFileRolls    = 3
)

// The pending-rebroadcast set's bounds (rebroadcast.go): what the node
// keeps and resends for the transactions it broadcast. A caller of the
// node's local API chooses how many transactions it broadcasts; each one
// held costs its bytes in memory and a fresh connection a block, and each
// connection tells one more peer that this IP sent it.
const (
	// maxRebroadcastTxs bounds the transactions held for rebroadcast. A
	// wallet has a handful of unconfirmed spends at a time; past the
	// bound a broadcast is sent once and not held (its result says so),
	// so a flood of broadcasts cannot grow the set or the connections
	// each block opens.
	maxRebroadcastTxs = 64

	// maxRebroadcastBytes bounds the serialized bytes of the held
	// transactions: 64 standard transactions of up to 100 kB each (the
	// standardness limit of 400,000 weight units) would be 6.4 MB; a
	// wallet's spends are a few hundred bytes each.
	maxRebroadcastBytes = 1 << 20

	// maxRebroadcastBlocks is how many blocks applied at the tip after
	// its broadcast a transaction is held without confirming: a day of
	// mainnet blocks. A transaction no block confirms by then was most
	// likely conflicted by a spend the filter does not show, or pays too
	// little fee to be mined; resending it longer tells more peers that
	// this IP sent it for nothing.
	maxRebroadcastBlocks = 144

	// minRebroadcastInterval is the least time between two sends of one
	// transaction. The node resends at most once per block it applies at
	// the tip: it sees blocks, so a block without the transaction is the
	// evidence that the miners lack it, where Bitcoin Core's wallet, which
	// resends on a timer, waits 12 to 36 hours. Mainnet's blocks come
	// every 10 minutes; the floor holds when they come in a burst (a
	// regtest generate, a run of blocks found in a minute) so that a
	// burst does not open a connection per block.
	minRebroadcastInterval = time.Minute

	// rebroadcastTimeout bounds one rebroadcast: the connection, the
	// handshake, the getdata and a relay back (btcd trickles 10 s a
	// hop). A target that asked for the transaction and relays nothing
	// back within it still counts as sent: the next block shows whether
	// the miners have it.
	rebroadcastTimeout = 30 * time.Second
)
