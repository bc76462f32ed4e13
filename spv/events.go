package spv

import (
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// Event is anything the node reports to subscribers. Concrete types below;
// consumers switch on them.
type Event interface {
	// When returns the time the event happened.
	When() time.Time
}

// At carries an event's time; every event embeds it.
type At struct{ Time time.Time }

// When implements Event.
func (a At) When() time.Time { return a.Time }

// PeerInfo describes one connected peer.
type PeerInfo struct {
	Addr      string
	UserAgent string
	Services  wire.ServiceFlag
	Version   int32
	// StartHeight is the height the peer announced; LastBlock the best it
	// has shown since (announced, or served as headers, or our tip when
	// it said nothing follows it).
	StartHeight int32
	LastBlock   int32
	PingTime    time.Duration
	BanScore    uint32
	// Download reports whether this peer is the current download peer.
	Download bool
	// Lagging reports a peer that claims more than our tip and gives no
	// headers (behind, or in its initial block download): it serves
	// nothing until it catches up.
	Lagging bool
	// BytesReceived counts every byte read from the peer (btcd's count:
	// v1 frames, or v2 packets' decrypted contents).
	BytesReceived uint64
	// Transport is the connection's P2P transport: "v2" (BIP324,
	// encrypted: an on-path observer sees lengths and times) or "v1"
	// (plaintext: it reads every message, the filter included).
	Transport string
	// WireSent and WireReceived count the bytes on the network each
	// way, handshake and v2 framing included: what an on-path observer
	// counts.
	WireSent, WireReceived uint64
}

// PeerConnected reports a completed handshake with a BIP37-capable peer.
type PeerConnected struct {
	At
	Peer PeerInfo
}

// PeerDisconnected reports a lost peer.
type PeerDisconnected struct {
	At
	Addr   string
	Reason string
}

// PeerBanned reports a peer banned for misbehaviour.
type PeerBanned struct {
	At
	Addr   string
	Reason string
	Score  uint32
	Until  time.Time
}

// PeersUpdated carries a periodic snapshot of every connected peer, and
// the bytes read from every peer so far, those gone included
// (Status.BytesReceived).
type PeersUpdated struct {
	At
	Peers         []PeerInfo
	BytesReceived uint64
}

// HeadersProgress reports header sync progress.
type HeadersProgress struct {
	At
	Height     int32
	Hash       chainhash.Hash
	PeerHeight int32
}

// FilterLoaded reports a filterload sent to a peer: the filter (the
// figures Status.Filter keeps for the last one; PredictedFPRate is the
// rate of the peer's copy as loaded, before any server insertion) and the
// transcript record written for it (the filter as sent, with its sequence
// number, FilterInfo.Seq): what the peer now holds, for the privacy meter.
type FilterLoaded struct {
	At
	Peer   string
	Reason string
	FilterInfo
	Record transcript.Record
}

// BlocksRequested reports a getdata of filtered blocks sent to a peer:
// the transcript record written for it (a run of heights, with the
// reason), which shows the peer the wallet's birthday and, when it asks
// again, the blocks that made it reload. The privacy meter's behaviour
// attack reads it.
type BlocksRequested struct {
	At
	Record transcript.Record
}

// BlockMatches reports the transactions a peer's merkleblock matched
// (its verified proof), as soon as it arrives and before the node judges
// them: what the peer knows it sent, for the privacy meter's behaviour
// attack. Every served merkleblock with a match is reported, the answers
// to omission checks and those the node drops (filtered with a filter
// the peer no longer holds) included; MatchedTx reports the ones the
// watcher judged.
type BlockMatches struct {
	At
	Peer   string
	Height int32
	Hash   chainhash.Hash
	// Matched is shared with the node: do not modify.
	Matched []chainhash.Hash
}

// MatchedTx reports one transaction a peer sent because it matched the
// filter, with the watcher's verdict.
type MatchedTx struct {
	At
	Txid chainhash.Hash
	// Height is the block height, or -1 for a mempool transaction.
	Height        int32
	Relevant      bool
	FalsePositive bool
	// Amount is the net satoshi change to the watcher (0 for a false
	// positive).
	Amount int64
	// Tx is the transaction itself (shared: do not modify).
	Tx *wire.MsgTx
	// Peer sent it, through the filter its filterload recorded as
	// transcript record FilterSeq; Why is what in the transaction
	// matched that filter as the peer held it then (nil when unknown),
	// and FilterFPRate that filter's false-positive rate at the time,
	// (bits set / bits)^k: the chance a transaction element that is not
	// the wallet's matches it.
	Peer         string
	FilterSeq    uint64
	Why          *bip37.Match
	FilterFPRate float64
}

// TxRelayed reports a filter peer announcing an unconfirmed transaction
// the node already fetched from another peer: it is in that peer's
// mempool too. The node does not fetch it again (the MatchedTx of its
// first announcer carried it), so this is how a broadcast learns that a
// peer other than its target holds the transaction.
type TxRelayed struct {
	At
	Txid chainhash.Hash
	Peer string
}

// matchedTx builds a MatchedTx event.
func matchedTx(at At, tx *wire.MsgTx, id chainhash.Hash, height int32, relevant, fp bool, amount int64, why txWhy) MatchedTx {
	ev := MatchedTx{At: at, Txid: id, Height: height, Relevant: relevant, FalsePositive: fp, Amount: amount, Tx: tx,
		Peer: why.peer, FilterSeq: why.seq, FilterFPRate: why.fpRate}
	if why.peer != "" {
		m := why.match
		ev.Why = &m
	}
	return ev
}

// BlockProcessed reports one filtered block applied to the watcher.
type BlockProcessed struct {
	At
	Height         int32
	Hash           chainhash.Hash
	Matched        int
	Relevant       int
	FalsePositives int
	// ObservedFPRate is false positives per transaction tested so far;
	// TheoreticalFPRate is the filter's rate at its element count.
	ObservedFPRate    float64
	TheoreticalFPRate float64
	PeerHeight        int32
	// Again marks a block delivered a second time after a filter reload
	// (the gap-limit race): Matched, Relevant and FalsePositives then
	// count only the transactions the first delivery did not have.
	Again bool
	// Checks are the omission checks sent for the block at delivery (0:
	// none was drawn; CheckWaiting: the second-peer check waits for a
	// peer to have the block; CheckNoSecondPeer: no peer can answer it).
	Checks BlockChecks
	// Tested counts the transactions of the blocks applied so far, this
	// one included (Status.Tested: the denominator of ObservedFPRate).
	Tested uint64
	// CF is what the compact-filter sync knew of the block (nil over
	// BIP37).
	CF *CFBlock
}

// CFBlock is what a sync over BIP158 knew of a block it delivered
// (BlockProcessed.CF): its basic filter's item count, the scripts the
// filter was matched against, and whether it matched, so that the block
// was fetched whole.
type CFBlock struct {
	FilterItems uint32
	Queries     int
	Fetched     bool
}

// BlockChecks are the omission checks of a delivered block.
type BlockChecks uint8

// The omission checks. CheckSecondPeer and CheckFullBlock combine;
// CheckNoSecondPeer stands alone.
const (
	// CheckSecondPeer: the block was asked again from a second peer
	// (Config.SpotCheckEvery).
	CheckSecondPeer BlockChecks = 1 << iota
	// CheckFullBlock: the block was asked whole from the peer that
	// filtered it (Config.FullBlockEvery).
	CheckFullBlock
	// CheckNoSecondPeer: a second-peer check was due, no other peer can
	// answer it and no full-block check was drawn: the block is
	// unchecked (a BlockUnchecked event follows).
	CheckNoSecondPeer
	// CheckWaiting: the second-peer check waits for another peer to
	// have the block (a block the download peer announced first); it is
	// sent when one does, or given up after a while (BlockUnchecked).
	CheckWaiting
)

// BlockUnchecked reports a block that no omission check covers: a check
// was due, but no second peer had the block (or got it in time, or
// answered), and no full-block check was drawn. With one peer, nothing
// shows whether that peer hid one of the wallet's transactions in it.
//
// Abandoned marks a check that was begun and could not finish: it waited
// for a second peer to get the block for Tuning.CheckWait, or its second
// peers went away or did not answer, or it was an earlier run's
// unfinished check and no second peer was connected. A block that was
// never awaited (no other peer with a filter when it came) is not
// abandoned.
type BlockUnchecked struct {
	At
	Height    int32
	Hash      chainhash.Hash
	Reason    string
	Abandoned bool
}

// ChecksAwaited reports that the watcher is at the tip (Height, Hash)
// while Blocks blocks still await an omission check: the node is not
// synced until they are checked (SyncDone) or abandoned
// (BlockUnchecked). It comes when the node reaches the tip with checks
// awaited and when their number changes there.
type ChecksAwaited struct {
	At
	Height int32
	Hash   chainhash.Hash
	Blocks int
}

// Reorg reports a switch to a chain with more work.
type Reorg struct {
	At
	ForkHeight int32
	OldTip     chainhash.Hash
	NewTip     chainhash.Hash
	OldHeight  int32
	NewHeight  int32
}

// SyncStopped reports that syncing stopped on an error that is no peer's
// fault (Status.Err: the watcher, the transcript or the header store
// failed). The node applies nothing more; it stays up until Stop.
type SyncStopped struct {
	At
	Err error
}

// SyncDone reports that the watcher is applied up to the best peer's tip
// and no block awaits an omission check (ChecksAwaited). It comes once
// per tip: the node is briefly not synced while a getheaders or an
// omission check is out, and coming back to the same tip says nothing
// again.
type SyncDone struct {
	At
	Height int32
	Hash   chainhash.Hash
}

// RebroadcastSend is one rebroadcast of a RebroadcastPass.
type RebroadcastSend struct {
	Txid chainhash.Hash
	// Peer is the target ("" when no target took it); Attempt counts the
	// rebroadcasts of the transaction, this one included; Err is why it
	// was not sent ("" when it was).
	Peer    string
	Attempt int
	Err     string
}

// RebroadcastDrop is a transaction that left the pending set, and why.
type RebroadcastDrop struct {
	Txid   chainhash.Hash
	Reason string
}

// RebroadcastPass reports what the node did with its pending
// rebroadcasts at one block the watcher applied at the tip: the
// transactions it sent again, those that left the set since the last
// pass (confirmed or conflicted by this block, or held too long), and how
// many are left. It comes for every block applied at the tip, with
// nothing pending too, once that block is handled.
type RebroadcastPass struct {
	At
	Height  int32
	Hash    chainhash.Hash
	Sent    []RebroadcastSend
	Dropped []RebroadcastDrop
	Pending int
}
