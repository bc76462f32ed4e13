package spv

import "fmt"

// Misbehavior is a protocol violation by a peer. Each kind adds its Score
// to the peer's ban score; a peer whose score reaches 100 (banThreshold) is
// disconnected and banned. A hostile peer is normal: every kind is handled,
// none crashes or corrupts anything.
type Misbehavior uint8

// The violations the node detects.
const (
	// MisbehaviorBadHeader: a header that fails validation (proof of
	// work, difficulty, time, version, checkpoint).
	MisbehaviorBadHeader Misbehavior = iota + 1
	// MisbehaviorOrphanHeaders: a getheaders response that does not
	// connect to the locator we sent.
	MisbehaviorOrphanHeaders
	// MisbehaviorInvalidMerkleTree: a merkleblock whose partial merkle
	// tree fails Bitcoin Core's checks (including CVE-2012-2459) or does
	// not commit to the header's merkle root.
	MisbehaviorInvalidMerkleTree
	// MisbehaviorUnrequestedBlock: a merkleblock or block we did not ask
	// this peer for.
	MisbehaviorUnrequestedBlock
	// MisbehaviorTxNotInBlock: a tx right after a merkleblock whose txid
	// is not among the tree's matches.
	MisbehaviorTxNotInBlock
	// MisbehaviorUnrequestedTx: a tx we did not ask for outside a
	// merkleblock stream.
	MisbehaviorUnrequestedTx
	// MisbehaviorUnmatchedTx: a matched tx that does not match the
	// filter the peer holds (it would inflate the false-positive count).
	MisbehaviorUnmatchedTx
	// MisbehaviorSixtyFourByteTx: a matched "transaction" whose
	// non-witness serialization is 64 bytes, which cannot be told apart
	// from an inner merkle node.
	MisbehaviorSixtyFourByteTx
	// MisbehaviorBadBlock: a full block whose transactions do not
	// commit to its header's merkle root, or lack a matched txid.
	MisbehaviorBadBlock
	// MisbehaviorNotServed: a requested block neither sent nor reported
	// notfound before the pong that closed its batch.
	MisbehaviorNotServed
	// MisbehaviorStall: no answer to a request within the stall timeout.
	MisbehaviorStall
	// MisbehaviorOmittedTx: a spot check showed that the peer left a
	// transaction matching its filter out of a merkle block.
	MisbehaviorOmittedTx
	// MisbehaviorLowWorkHeaders: valid headers of a side branch too far
	// below the best chain's work to be stored, or side branches that
	// never became the best chain: evicted by the bound on side-branch
	// headers (spv/headers), or more of them than a peer's share
	// (headersync.go): cheap to make on networks with minimum-difficulty
	// blocks, useless to the node.
	MisbehaviorLowWorkHeaders
	// MisbehaviorInvalidTx: a transaction no valid block can hold (btcd's
	// CheckTransactionSanity: no inputs or outputs, an output value
	// outside [0, 21e6 BTC] or outputs summing above it, a duplicated
	// input, more than 1,000,000 bytes without witness, a null previous
	// outpoint outside a coinbase), in a block or relayed unconfirmed.
	MisbehaviorInvalidTx
	// MisbehaviorRefusedTx: an unconfirmed transaction the watcher
	// refused as over one of its per-transaction budgets (a TxRefusal
	// with PeerAtFault), such as one larger than any standard
	// transaction or paying the wallet more outputs than it watches
	// from one unconfirmed transaction.
	MisbehaviorRefusedTx
	// MisbehaviorExcessMessages: a message over its type's rate budget
	// (budgets.go, msgBudgets), dropped unhandled.
	MisbehaviorExcessMessages
	// MisbehaviorOversizedMessage: a message larger than its type's
	// budget (budgets.go: a reject's maxRejectPayload).
	MisbehaviorOversizedMessage
	// MisbehaviorWriteQueue: more bytes queued for the peer than
	// maxWriteQueueBytes (budgets.go): it stopped reading while it made
	// the node queue replies (a pong for each ping); it is disconnected.
	MisbehaviorWriteQueue
	// MisbehaviorBadFilter: a compact block filter (BIP158) whose hash
	// does not match the filter-header chain, or a cfilter not asked.
	MisbehaviorBadFilter
	// MisbehaviorBadFilterHeader: filter headers (BIP157) that contradict
	// the peer's own checkpoints or earlier headers, or that the block
	// proved wrong in a conflict between peers (cfheaders.go).
	MisbehaviorBadFilterHeader
	// MisbehaviorWithheldBlock: a block the peer's filters cover,
	// answered notfound (BIP158: the peer knows the node wants it).
	MisbehaviorWithheldBlock
)

// banThreshold is the ban score at which a peer is disconnected and banned
// (btcd's and Bitcoin Core's value).
const banThreshold = 100

// Score returns the ban score one occurrence adds.
func (m Misbehavior) Score() uint32 {
	switch m {
	case MisbehaviorBadHeader, MisbehaviorInvalidMerkleTree, MisbehaviorUnrequestedBlock,
		MisbehaviorTxNotInBlock, MisbehaviorSixtyFourByteTx, MisbehaviorBadBlock, MisbehaviorOmittedTx,
		MisbehaviorInvalidTx, MisbehaviorOversizedMessage,
		MisbehaviorBadFilter, MisbehaviorBadFilterHeader, MisbehaviorWithheldBlock:
		return banThreshold
	case MisbehaviorOrphanHeaders, MisbehaviorUnrequestedTx:
		return banThreshold / 2
	case MisbehaviorUnmatchedTx, MisbehaviorStall, MisbehaviorWriteQueue:
		return banThreshold / 5
	case MisbehaviorNotServed, MisbehaviorLowWorkHeaders, MisbehaviorRefusedTx:
		return banThreshold / 10
	case MisbehaviorExcessMessages:
		return excessScore
	default:
		return 0
	}
}

// String names the violation.
func (m Misbehavior) String() string {
	switch m {
	case MisbehaviorBadHeader:
		return "invalid header"
	case MisbehaviorOrphanHeaders:
		return "headers do not connect"
	case MisbehaviorInvalidMerkleTree:
		return "invalid partial merkle tree"
	case MisbehaviorUnrequestedBlock:
		return "unrequested block"
	case MisbehaviorTxNotInBlock:
		return "tx not in the merkle block it follows"
	case MisbehaviorUnrequestedTx:
		return "unrequested tx"
	case MisbehaviorUnmatchedTx:
		return "tx does not match the filter"
	case MisbehaviorSixtyFourByteTx:
		return "64-byte transaction"
	case MisbehaviorBadBlock:
		return "block does not match its header"
	case MisbehaviorNotServed:
		return "requested block not served"
	case MisbehaviorStall:
		return "stalled"
	case MisbehaviorOmittedTx:
		return "omitted a matched tx"
	case MisbehaviorLowWorkHeaders:
		return "low-work side-branch headers"
	case MisbehaviorInvalidTx:
		return "invalid transaction"
	case MisbehaviorRefusedTx:
		return "unconfirmed transaction over budget"
	case MisbehaviorExcessMessages:
		return "messages over their rate budget"
	case MisbehaviorOversizedMessage:
		return "message over its size budget"
	case MisbehaviorWriteQueue:
		return "write queue over its budget"
	case MisbehaviorBadFilter:
		return "invalid compact filter"
	case MisbehaviorBadFilterHeader:
		return "invalid filter headers"
	case MisbehaviorWithheldBlock:
		return "withheld a filtered block"
	default:
		return fmt.Sprintf("misbehavior(%d)", uint8(m))
	}
}
