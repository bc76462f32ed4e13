package spv

import "fmt"

// misbehavior is a protocol violation by a peer. Each kind adds its Score
// to the peer's ban score; a peer whose score reaches 100 (banThreshold) is
// disconnected and banned. A hostile peer is normal: every kind is handled,
// none crashes or corrupts anything.
type misbehavior uint8

// The violations the node detects.
const (
	// misbehaviorBadHeader: a header that fails validation (proof of
	// work, difficulty, time, version, checkpoint).
	misbehaviorBadHeader misbehavior = iota + 1
	// misbehaviorOrphanHeaders: a getheaders response that does not
	// connect to the locator we sent.
	misbehaviorOrphanHeaders
	// misbehaviorInvalidMerkleTree: a merkleblock whose partial merkle
	// tree fails Bitcoin Core's checks (including CVE-2012-2459) or does
	// not commit to the header's merkle root.
	misbehaviorInvalidMerkleTree
	// misbehaviorUnrequestedBlock: a merkleblock or block we did not ask
	// this peer for.
	misbehaviorUnrequestedBlock
	// misbehaviorTxNotInBlock: a tx right after a merkleblock whose txid
	// is not among the tree's matches.
	misbehaviorTxNotInBlock
	// misbehaviorUnrequestedTx: a tx we did not ask for outside a
	// merkleblock stream.
	misbehaviorUnrequestedTx
	// misbehaviorUnmatchedTx: a matched tx that does not match the
	// filter the peer holds (it would inflate the false-positive count).
	misbehaviorUnmatchedTx
	// misbehaviorSixtyFourByteTx: a matched "transaction" whose
	// non-witness serialization is 64 bytes, which cannot be told apart
	// from an inner merkle node.
	misbehaviorSixtyFourByteTx
	// misbehaviorBadBlock: a full block whose transactions do not
	// commit to its header's merkle root, or lack a matched txid.
	misbehaviorBadBlock
	// misbehaviorNotServed: a requested block neither sent nor reported
	// notfound before the pong that closed its batch.
	misbehaviorNotServed
	// misbehaviorStall: no answer to a request within the stall timeout.
	misbehaviorStall
	// misbehaviorOmittedTx: a spot check showed that the peer left a
	// transaction matching its filter out of a merkle block.
	misbehaviorOmittedTx
	// misbehaviorLowWorkHeaders: valid headers of a side branch too far
	// below the best chain's work to be stored, or side branches that
	// never became the best chain: evicted by the bound on side-branch
	// headers (spv/headers), or more of them than a peer's share
	// (headersync.go): cheap to make on networks with minimum-difficulty
	// blocks, useless to the node.
	misbehaviorLowWorkHeaders
	// misbehaviorInvalidTx: a transaction no valid block can hold (btcd's
	// CheckTransactionSanity: no inputs or outputs, an output value
	// outside [0, 21e6 BTC] or outputs summing above it, a duplicated
	// input, more than 1,000,000 bytes without witness, a null previous
	// outpoint outside a coinbase), in a block or relayed unconfirmed.
	misbehaviorInvalidTx
	// misbehaviorRefusedTx: an unconfirmed transaction the watcher
	// refused as over one of its per-transaction budgets (a TxRefusal
	// with PeerAtFault), such as one larger than any standard
	// transaction or paying the wallet more outputs than it watches
	// from one unconfirmed transaction.
	misbehaviorRefusedTx
	// misbehaviorExcessMessages: a message over its type's rate budget
	// (budgets.go, msgBudgets), dropped unhandled.
	misbehaviorExcessMessages
	// misbehaviorOversizedMessage: a message larger than its type's
	// budget (budgets.go: a reject's maxRejectPayload).
	misbehaviorOversizedMessage
	// misbehaviorWriteQueue: more bytes queued for the peer than
	// maxWriteQueueBytes (budgets.go): it stopped reading while it made
	// the node queue replies (a pong for each ping); it is disconnected.
	misbehaviorWriteQueue
	// misbehaviorBadFilter: a compact block filter (BIP158) whose hash
	// does not match the filter-header chain, or a cfilter not asked.
	misbehaviorBadFilter
	// misbehaviorBadFilterHeader: filter headers (BIP157) that contradict
	// the peer's own checkpoints or earlier headers, or that the block
	// proved wrong in a conflict between peers (cfheaders.go).
	misbehaviorBadFilterHeader
	// misbehaviorWithheldBlock: a block the peer's filters cover,
	// answered notfound (BIP158: the peer knows the node wants it).
	misbehaviorWithheldBlock
)

// banThreshold is the ban score at which a peer is disconnected and banned
// (btcd's and Bitcoin Core's value).
const banThreshold = 100

// Score returns the ban score one occurrence adds.
func (m misbehavior) Score() uint32 {
	switch m {
	case misbehaviorBadHeader, misbehaviorInvalidMerkleTree, misbehaviorUnrequestedBlock,
		misbehaviorTxNotInBlock, misbehaviorSixtyFourByteTx, misbehaviorBadBlock, misbehaviorOmittedTx,
		misbehaviorInvalidTx, misbehaviorOversizedMessage,
		misbehaviorBadFilter, misbehaviorBadFilterHeader, misbehaviorWithheldBlock:
		return banThreshold
	case misbehaviorOrphanHeaders, misbehaviorUnrequestedTx:
		return banThreshold / 2
	case misbehaviorUnmatchedTx, misbehaviorStall, misbehaviorWriteQueue:
		return banThreshold / 5
	case misbehaviorNotServed, misbehaviorLowWorkHeaders, misbehaviorRefusedTx:
		return banThreshold / 10
	case misbehaviorExcessMessages:
		return excessScore
	default:
		return 0
	}
}

// String names the violation.
func (m misbehavior) String() string {
	switch m {
	case misbehaviorBadHeader:
		return "invalid header"
	case misbehaviorOrphanHeaders:
		return "headers do not connect"
	case misbehaviorInvalidMerkleTree:
		return "invalid partial merkle tree"
	case misbehaviorUnrequestedBlock:
		return "unrequested block"
	case misbehaviorTxNotInBlock:
		return "tx not in the merkle block it follows"
	case misbehaviorUnrequestedTx:
		return "unrequested tx"
	case misbehaviorUnmatchedTx:
		return "tx does not match the filter"
	case misbehaviorSixtyFourByteTx:
		return "64-byte transaction"
	case misbehaviorBadBlock:
		return "block does not match its header"
	case misbehaviorNotServed:
		return "requested block not served"
	case misbehaviorStall:
		return "stalled"
	case misbehaviorOmittedTx:
		return "omitted a matched tx"
	case misbehaviorLowWorkHeaders:
		return "low-work side-branch headers"
	case misbehaviorInvalidTx:
		return "invalid transaction"
	case misbehaviorRefusedTx:
		return "unconfirmed transaction over budget"
	case misbehaviorExcessMessages:
		return "messages over their rate budget"
	case misbehaviorOversizedMessage:
		return "message over its size budget"
	case misbehaviorWriteQueue:
		return "write queue over its budget"
	case misbehaviorBadFilter:
		return "invalid compact filter"
	case misbehaviorBadFilterHeader:
		return "invalid filter headers"
	case misbehaviorWithheldBlock:
		return "withheld a filtered block"
	default:
		return fmt.Sprintf("misbehavior(%d)", uint8(m))
	}
}
