package hostile

import (
	"fmt"
	"sort"
)

// Scenario names one misbehaviour of the hostile peer.
type Scenario string

// The scenarios. Each changes exactly one thing relative to Honest.
const (
	// Honest serves the upstream chain faithfully (the control case).
	Honest Scenario = "honest"

	// BadMerkleRoot flips a bit of the first hash of every merkleblock's
	// partial merkle tree, so the computed root differs from the header's.
	BadMerkleRoot Scenario = "bad-merkle-root"
	// DuplicateHash serves CVE-2012-2459 trees: the last subtree of the
	// lowest odd-width level is duplicated (and matched), which keeps the
	// merkle root but makes two sibling hashes identical. Blocks whose
	// transaction count is a power of two cannot be forged this way and are
	// served honestly.
	DuplicateHash Scenario = "duplicate-hash"
	// UnusedHashes appends one hash the traversal never consumes (only
	// where the tree still has no more hashes than transactions).
	UnusedHashes Scenario = "unused-hashes"
	// UnusedBits appends a whole unused flag byte.
	UnusedBits Scenario = "unused-bits"
	// TxCountZero claims the block has zero transactions.
	TxCountZero Scenario = "tx-count-zero"
	// TxCountTooBig claims more transactions than the block-weight bound
	// allows (bip37.MaxMerkleTxs + 1).
	TxCountTooBig Scenario = "tx-count-too-big"
	// TxNotInBlock sends, after a merkleblock and its matched transactions,
	// one more tx that is not in that block (the parent block's coinbase).
	TxNotInBlock Scenario = "tx-not-in-block"
	// UnrequestedBlock sends, before answering a getdata batch, a valid
	// merkleblock for a block the node never asked this peer for.
	UnrequestedBlock Scenario = "unrequested-block"

	// HeaderBadPoW answers getheaders with the honest headers followed by
	// a child of the last one whose hash is above its target.
	HeaderBadPoW Scenario = "header-bad-pow"
	// HeaderBadBits appends a child whose difficulty bits differ from what
	// the rules require (half the parent's target), mined to meet them.
	HeaderBadBits Scenario = "header-bad-bits"
	// HeaderTimeTooOld appends a child timestamped at the median time past
	// of its parent (the rule requires strictly after).
	HeaderTimeTooOld Scenario = "header-time-too-old"
	// HeaderTimeTooNew appends a child timestamped 2h10m in the future.
	HeaderTimeTooNew Scenario = "header-time-too-new"
	// HeadersNotConnecting answers getheaders with one mined header whose
	// parent is a random hash.
	HeadersNotConnecting Scenario = "headers-not-connecting"
	// LowWorkFork serves, as its best chain, a long valid fork from
	// Config.ForkHeight that ends one block below the upstream tip: less
	// cumulative work than the honest chain, while announcing the honest
	// tip's height in its version message (a node picks its download peer
	// by announced height). The peer has no blocks for the fork and
	// answers notfound for them.
	LowWorkFork Scenario = "low-work-fork"
	// FakeWorkFork serves a fork from Config.ForkHeight, longer than the
	// honest chain, whose headers claim a much harder target than the
	// rules allow and do not meet it (the bits lie, so the proof of work
	// is bad).
	FakeWorkFork Scenario = "fake-work-fork"

	// SideBranchFlood answers getheaders honestly, then sends
	// Config.FloodMessages headers messages, each a valid side branch
	// forking at height 1, 2, ... and ending below the honest tip (less
	// work): headers that cost nothing on regtest or on a testnet with
	// minimum-difficulty blocks.
	SideBranchFlood Scenario = "side-branch-flood"
	// Oversized answers the first getheaders with a message header that
	// announces a payload above the 32 MiB protocol limit.
	Oversized Scenario = "oversized-message"
	// Garbage answers the first getheaders with a correctly framed headers
	// message (magic, length and checksum right) whose payload is random
	// bytes behind an impossible header count.
	Garbage Scenario = "garbage"
	// InvFlood sends Config.FloodMessages inv messages of
	// Config.FloodSize random transaction hashes right after the
	// handshake, then behaves honestly (unknown txs get notfound).
	InvFlood Scenario = "inv-flood"
	// StallMidBatch answers the first half of the first filtered-block
	// getdata batch and then stops answering anything (no pong), keeping
	// the connection open.
	StallMidBatch Scenario = "stall-mid-batch"
	// StallKeepAlive is StallMidBatch with a keep-alive: after it stops
	// answering, it sends an empty headers message every
	// Config.KeepAliveInterval, which makes no progress.
	StallKeepAlive Scenario = "stall-keep-alive"
	// DisconnectMidBatch answers the first half of the first
	// filtered-block getdata batch and then closes the connection.
	DisconnectMidBatch Scenario = "disconnect-mid-batch"
	// OmitMatchedTx clears the match flag of the last matched transaction
	// of every merkleblock that has one and does not send it: a valid
	// proof that hides a wallet transaction.
	OmitMatchedTx Scenario = "omit-matched-tx"
	// OmitRandomMatch hides, in a merkleblock with matches chosen at
	// random (probability Config.OmitRate, from Config.Seed), one of its
	// matched transactions, chosen at random too, behind a valid proof,
	// and records it (Stats.Omitted). With Times 1 it lies once: a
	// seeded omission of a payment or a spend, for detection loops.
	OmitRandomMatch Scenario = "omit-random-match"
	// InflateFP marks up to Config.ExtraTxs unmatched transactions of each
	// block as matched (a valid proof) and sends them: false positives the
	// node's filter never asked for (bitcoinj issue 876).
	InflateFP Scenario = "inflate-fp"
	// NoBloom advertises NODE_NETWORK without NODE_BLOOM and, as BIP111
	// says, disconnects a peer that sends filterload anyway.
	NoBloom Scenario = "no-bloom"
	// IgnoreFilter ignores filterload/filteradd and matches every
	// transaction of every block, sending them all.
	IgnoreFilter Scenario = "ignore-filter"
	// RewriteWitness sends every matched transaction with a witness of
	// its own on every input: a dummy signature and WitnessPubKey, as a
	// P2WPKH spend by that key would carry. The txid does not cover the
	// witness, so the proof and the txid stay valid; a client that reads
	// the payer's key from the witness takes the peer's key instead.
	RewriteWitness Scenario = "rewrite-witness"
)

// WitnessPubKey is the compressed public key RewriteWitness puts in every
// witness it rewrites (the key of the private key 1, the generator point).
var WitnessPubKey = []byte{
	0x02, 0x79, 0xbe, 0x66, 0x7e, 0xf9, 0xdc, 0xbb, 0xac, 0x55, 0xa0, 0x62, 0x95, 0xce, 0x87, 0x0b, 0x07,
	0x02, 0x9b, 0xfc, 0xdb, 0x2d, 0xce, 0x28, 0xd9, 0x59, 0xf2, 0x81, 0x5b, 0x16, 0xf8, 0x17, 0x98,
}

// Reaction is what a correct SPV node does when it meets a scenario.
type Reaction string

// The reactions.
const (
	// ReactNone: nothing to react to; the peer is honest.
	ReactNone Reaction = "none"
	// ReactBan: disconnect and ban (a violation worth the full ban score).
	ReactBan Reaction = "ban"
	// ReactDisconnect: drop the peer (protocol error or unusable peer)
	// and carry on with others.
	ReactDisconnect Reaction = "disconnect"
	// ReactRetry: re-request the missing data from another peer; the
	// offender may be disconnected or scored.
	ReactRetry Reaction = "retry elsewhere"
	// ReactIgnore: keep the honest chain, ignore the extra data (a side
	// branch or unknown invs), never reorganize or reload because of it.
	ReactIgnore Reaction = "ignore"
)

// info describes a scenario: its expected reaction and a one-line summary.
type info struct {
	expect  Reaction
	summary string
}

// scenarios is the catalogue.
var scenarios = map[Scenario]info{
	Honest:               {ReactNone, "serves the upstream chain faithfully"},
	BadMerkleRoot:        {ReactBan, "partial merkle tree does not commit to the header's merkle root"},
	DuplicateHash:        {ReactBan, "CVE-2012-2459: identical sibling hashes keep the root"},
	UnusedHashes:         {ReactBan, "partial merkle tree carries a hash the traversal never uses"},
	UnusedBits:           {ReactBan, "partial merkle tree carries a whole unused flag byte"},
	TxCountZero:          {ReactBan, "merkleblock claims zero transactions"},
	TxCountTooBig:        {ReactBan, "merkleblock claims more transactions than a block can hold"},
	TxNotInBlock:         {ReactBan, "a tx that is not in the merkleblock it follows"},
	UnrequestedBlock:     {ReactBan, "a merkleblock the node never asked for"},
	HeaderBadPoW:         {ReactBan, "a header whose hash is above its target"},
	HeaderBadBits:        {ReactBan, "a header with difficulty bits the rules do not allow"},
	HeaderTimeTooOld:     {ReactBan, "a header timestamped at or before the median time past"},
	HeaderTimeTooNew:     {ReactBan, "a header timestamped more than two hours in the future"},
	HeadersNotConnecting: {ReactDisconnect, "headers whose parent the node does not know"},
	LowWorkFork:          {ReactIgnore, "a long valid fork with less work than the honest chain"},
	FakeWorkFork:         {ReactBan, "a fork claiming more work than its proof of work shows"},
	SideBranchFlood:      {ReactIgnore, "floods valid low-work side branches: bounded, never stops the sync"},
	Oversized:            {ReactDisconnect, "a message announcing a payload above 32 MiB"},
	Garbage:              {ReactDisconnect, "a well-framed message whose payload is random bytes"},
	InvFlood:             {ReactIgnore, "a flood of invs for unknown transactions"},
	StallMidBatch:        {ReactRetry, "stops answering in the middle of a getdata batch"},
	StallKeepAlive:       {ReactRetry, "stops answering in the middle of a getdata batch, sends an empty headers message every few seconds"},
	DisconnectMidBatch:   {ReactRetry, "closes the connection in the middle of a getdata batch"},
	OmitMatchedTx:        {ReactBan, "hides a matched transaction behind a valid proof"},
	OmitRandomMatch:      {ReactBan, "hides one matched transaction of a random block behind a valid proof"},
	InflateFP:            {ReactIgnore, "sends unmatched transactions as matches: dropped, scored, no reload"},
	NoBloom:              {ReactDisconnect, "does not advertise NODE_BLOOM"},
	IgnoreFilter:         {ReactIgnore, "ignores the filter and sends every transaction: dropped, scored, no reload"},
	RewriteWitness:       {ReactIgnore, "rewrites the witness of every matched transaction (same txid): it chooses no decoy"},
}

// Scenarios returns every scenario, Honest first, the rest sorted by name.
func Scenarios() []Scenario {
	out := make([]Scenario, 0, len(scenarios))
	for s := range scenarios {
		if s != Honest {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return append([]Scenario{Honest}, out...)
}

// ParseScenario returns the scenario named s or an error wrapping
// ErrUnknownScenario.
func ParseScenario(s string) (Scenario, error) {
	if !Scenario(s).Valid() {
		return "", fmt.Errorf("hostile: scenario %q: %w", s, ErrUnknownScenario)
	}
	return Scenario(s), nil
}

// Valid reports whether s is a known scenario.
func (s Scenario) Valid() bool {
	_, ok := s.info()
	return ok
}

// info returns s's entry in the catalogues (scenarios, cfScenarios).
func (s Scenario) info() (info, bool) {
	if i, ok := scenarios[s]; ok {
		return i, true
	}
	i, ok := cfScenarios[s]
	return i, ok
}

// Expected returns the reaction a correct node has to s.
func (s Scenario) Expected() Reaction {
	i, _ := s.info()
	return i.expect
}

// Summary returns a one-line description of s.
func (s Scenario) Summary() string {
	i, _ := s.info()
	return i.summary
}

// String returns the scenario's name.
func (s Scenario) String() string { return string(s) }
