package onpath

import (
	"math"
	"time"

	"github.com/bloomwatch/bloomwatch/filterpolicy"
	"github.com/bloomwatch/bloomwatch/privacy/joint"
	"github.com/bloomwatch/bloomwatch/privacy/replay"
	"github.com/bloomwatch/bloomwatch/privacy/stats"
	"github.com/bloomwatch/bloomwatch/transcript"
)

// Reading is what the on-path observer learned from the records and
// blocks seen so far: the filters it read in clear (sent over v1), the
// anonymity set they leave it, the element range the latest encrypted
// filterload's size gives, and the blocks it saw carry matches.
type Reading struct {
	// Loads counts the filterloads it saw; Clear those it read (v1, or
	// records written before the transport was recorded, which all left
	// on v1), Encrypted those it saw only the size of (v2).
	Loads     int `json:"loads"`
	Clear     int `json:"clear"`
	Encrypted int `json:"encrypted"`
	// Rate is the joint model's probability that a random non-member
	// matches every filter it read (1 when it read none);
	// ExpectedFP the false-positive anonymity set it leaves (the
	// decoys, found for certain, and Rate times the other candidates);
	// Precision and Entropy are the expected ones, as the meter's for
	// the peers (nil when the wallet's counts are unknown).
	Rate       float64  `json:"rate"`
	ExpectedFP float64  `json:"expected_fp"`
	Precision  *float64 `json:"precision,omitempty"`
	Entropy    *float64 `json:"entropy_bits,omitempty"`
	// MinElements and MaxElements are the element range the latest
	// encrypted filterload's burst gives an observer who knows the
	// client's sizing, rate and padding (filterpolicy.ElementsForWire);
	// -1 when it saw no encrypted filterload or the burst fits no filter
	// of the policy. Wire is that burst in bytes (0: none).
	MinElements int `json:"min_elements"`
	MaxElements int `json:"max_elements"`
	Wire        int `json:"wire"`
	// Blocks counts the filtered blocks it saw carry matches (a
	// merkleblock longer than an empty one, transactions after it),
	// false positives included; WalletBlocks those that held a wallet
	// transaction (ground truth: the client's verdict). Their ratio is
	// BlockPrecision, the observer's chance of being right when it calls
	// a block the wallet's (1 when no block matched).
	Blocks         int     `json:"blocks"`
	WalletBlocks   int     `json:"wallet_blocks"`
	BlockPrecision float64 `json:"block_precision"`
}

// Observer follows the on-path observer of one client over its transcript
// records and delivered blocks. It is pure and synchronous, not safe for
// concurrent use.
type Observer struct {
	fpRate       float64
	joint        *joint.Joint
	seen         map[string]bool
	rd           Reading
	blocks       int
	walletBlocks int
}

// NewObserver returns an observer that assumes the client sizes its filters
// at fpRate (filterpolicy.DefaultFPRate when not in (0, 1)).
func NewObserver(fpRate float64) *Observer {
	if !(fpRate > 0 && fpRate < 1) {
		fpRate = filterpolicy.DefaultFPRate
	}
	return &Observer{fpRate: fpRate, joint: joint.NewJoint(), seen: map[string]bool{},
		rd: Reading{MinElements: -1, MaxElements: -1, Rate: 1}}
}

// clearRecord reports whether r left in plaintext.
func clearRecord(r transcript.Record) bool { return r.Transport != transcript.TransportV2 }

// Observe feeds one transcript record. A v1 filterload joins the filters
// the observer read (identical ones count once); a v2 one gives it the
// element range of its burst. Records it cannot use change nothing.
func (o *Observer) Observe(r transcript.Record) {
	if r.Kind != transcript.KindFilterLoad {
		return
	}
	f, err := r.Bloom() // shared with the record's other readers: read only
	if err != nil {
		return
	}
	o.rd.Loads++
	if clearRecord(r) {
		o.rd.Clear++
		if key := string(r.Filter); !o.seen[key] && !replay.MatchesAll(f) {
			o.seen[key] = true
			o.joint.Add(f)
			o.rd.Rate = o.joint.Rate()
		}
		return
	}
	o.rd.Encrypted++
	o.rd.Wire = r.Wire
	o.rd.MinElements, o.rd.MaxElements = -1, -1
	if r.Wire == 0 {
		return
	}
	pad, ok := filterpolicy.PaddingOf(filterpolicy.FilterLoadPacket(len(r.Filter)), r.Wire)
	if !ok {
		return
	}
	if c, ok := filterpolicy.ElementsForWire(r.Wire, o.fpRate, pad); ok {
		o.rd.MinElements, o.rd.MaxElements = c.MinElements, c.MaxElements
	}
}

// ObserveBlock feeds one delivered filtered block: matched transactions
// (false positives included) and relevant ones, the wallet's among them.
// Whatever the transport, the observer sees whether a block held matches.
func (o *Observer) ObserveBlock(matched, relevant int) {
	if matched > 0 {
		o.blocks++
		if relevant > 0 {
			o.walletBlocks++
		}
	}
}

// Reading returns the reading for a universe of candidates scripts. When
// the wallet's counts are known (known: onChain of its scripts on chain,
// decoys the decoys every filter holds) the expected false positives
// leave them out and count the decoys as found, and precision and entropy
// are given, as the meter does for the peers; otherwise they are not.
func (o *Observer) Reading(candidates uint64, known bool, onChain, decoys int) Reading {
	rd := o.rd
	others, found := float64(candidates), 0.0
	if known {
		found = float64(min(uint64(max(decoys, 0)), candidates))
		others = math.Max(others-float64(onChain)-found, 0)
	}
	rd.ExpectedFP = found + rd.Rate*others
	rd.Precision, rd.Entropy = nil, nil
	if known {
		n := float64(onChain)
		p, e := stats.ExpectedPrecision(n, found, rd.Rate*others), stats.ExpectedEntropy(n, found, rd.Rate*others)
		rd.Precision, rd.Entropy = &p, &e
	}
	rd.Blocks, rd.WalletBlocks = o.blocks, o.walletBlocks
	rd.BlockPrecision = 1
	if o.blocks > 0 {
		rd.BlockPrecision = float64(o.walletBlocks) / float64(o.blocks)
	}
	return rd
}

// Sizes of BIP324 packets an observer tells apart in a filtered-block
// stream (contents plus filterpolicy.V2PacketOverhead).
const (
	// EmptyMerkleBlockWire is a v2 merkleblock without matches: the
	// header, the transaction count, one hash (the root) and one flag
	// byte.
	EmptyMerkleBlockWire = filterpolicy.V2PacketOverhead + 1 + 80 + 4 + 1 + 32 + 1 + 1
	// txWireOverhead is what a v2 tx packet adds to the transaction.
	txWireOverhead = filterpolicy.V2PacketOverhead + 1
)

// Packet is one burst an on-path observer sees: one side's write,
// its length and time.
type Packet struct {
	Time  time.Time
	Out   bool // client to peer
	Bytes int
}

// Block is what the observer knows of a block from the public chain:
// its height and the sizes of its transactions as a BIP37 server sends
// them to a client that did not ask for witnesses, in block order.
type Block struct {
	Height  int32
	TxSizes []int
}

// Tx is a transaction packet the observer placed in a block, with the
// block's transactions of that size: Candidates holds one index when the
// length names the transaction.
type Tx struct {
	Height     int32
	Candidates []int
}

// Stream is the observer's reading of a v2 filtered-block stream.
type Stream struct {
	// Requested is the number of blocks the getdata bursts asked for
	// (from their lengths), refetches included.
	Requested int
	// Refetched counts the blocks asked again after a filterload.
	Refetched int
	// Matched lists the heights it saw carry matches, in the order it
	// first saw them.
	Matched []int32
	// Txs are the transaction packets it placed.
	Txs []Tx
	// Parsed counts the merkleblocks it placed.
	Parsed int
	// Roles says, for each packet, what the observer took it for:
	// RoleMerkleBlock, RoleTx, or "" (the client's, a control message,
	// anything before the first getdata).
	Roles []string
}

// The roles ObserveFilteredBlocks gives the peer's packets.
const (
	RoleMerkleBlock = "merkleblock"
	RoleTx          = "tx"
)

// getDataCount returns the number of inventory entries a v2 getdata
// packet of n bytes holds, or -1 when no getdata has that length.
func getDataCount(n int) int {
	body := n - filterpolicy.V2PacketOverhead - 1
	for _, vl := range []int{1, 3, 5} {
		if k := (body - vl) / 36; k > 0 && vl+36*k == body && varIntLen(k) == vl {
			return k
		}
	}
	return -1
}

// varIntLen is the compact-size length of n.
func varIntLen(n int) int {
	switch {
	case n < 0xfd:
		return 1
	case n <= 0xffff:
		return 3
	}
	return 5
}

// isFilterLoadBurst reports whether a client burst of n bytes is a
// filterload of the client's policy at fpRate, under some padding.
func isFilterLoadBurst(n int, fpRate float64) bool {
	for _, p := range []filterpolicy.FilterPadding{filterpolicy.PadNone, filterpolicy.PadSteps, filterpolicy.PadMax} {
		if _, ok := filterpolicy.ElementsForWire(n, fpRate, p); ok {
			return true
		}
	}
	return false
}

// ObserveFilteredBlocks reads a v2 filtered-block download from its
// packet lengths alone, as an on-path observer who knows the chain and
// the client's filter policy at fpRate does. blocks are the chain from
// the wallet's birthday on (the observer infers the birthday from the
// first getdata lengths and the tip); packets are both sides' bursts in
// time order.
//
// Each getdata-shaped burst of the client (its length is 22 + 36k, or
// with a longer count) after its first filterload (the handshake's
// random-length bursts come before it) asks for k consecutive blocks: the next k after
// the highest asked so far, or, right after a filterload (a burst of a
// filterload's length under the policy), the last k asked again (the
// client refetches what the old filter served). The
// peer answers in order: each of its packets is a transaction of the
// block whose merkleblock came last (its length is one of that block's
// transactions' plus the packet overhead), a control message (shorter
// than an empty merkleblock: pong, inv, notfound; skipped), or the next
// asked block's merkleblock (exactly EmptyMerkleBlockWire when nothing
// matched). The caller scores the reading against the truth.
func ObserveFilteredBlocks(packets []Packet, blocks []Block, fpRate float64) Stream {
	out := Stream{Roles: make([]string, len(packets))}
	if len(blocks) == 0 {
		return out
	}
	first := blocks[0].Height
	byHeight := func(h int32) (Block, bool) {
		i := int(h - first)
		if i < 0 || i >= len(blocks) {
			return Block{}, false
		}
		return blocks[i], true
	}
	var (
		queue     []int32 // heights asked, not yet answered
		frontier  = first - 1
		afterLoad bool
		cur       Block // the block whose merkleblock came last
		haveCur   bool
		seen      = map[int32]bool{}
	)
	loaded := false // a BIP37 client loads a filter before any getdata
	for i, p := range packets {
		if p.Out {
			if k := getDataCount(p.Bytes); k > 0 && loaded {
				out.Requested += k
				from := frontier + 1
				if afterLoad && frontier >= first {
					from = max(frontier-int32(k)+1, first)
					out.Refetched += int(frontier - from + 1)
				}
				for h := from; h < from+int32(k); h++ {
					queue = append(queue, h)
				}
				frontier = max(frontier, from+int32(k)-1)
				afterLoad = false
			} else if isFilterLoadBurst(p.Bytes, fpRate) {
				afterLoad, loaded = true, true
			}
			continue
		}
		if haveCur && p.Bytes != EmptyMerkleBlockWire {
			if c := txsOfSize(cur, p.Bytes-txWireOverhead); len(c) > 0 {
				out.Txs = append(out.Txs, Tx{Height: cur.Height, Candidates: c})
				out.Roles[i] = RoleTx
				if !seen[cur.Height] {
					seen[cur.Height] = true
					out.Matched = append(out.Matched, cur.Height)
				}
				continue
			}
		}
		if p.Bytes < EmptyMerkleBlockWire {
			continue
		}
		if len(queue) == 0 {
			continue // not an answer to a block request
		}
		h := queue[0]
		queue = queue[1:]
		b, ok := byHeight(h)
		if !ok {
			haveCur = false
			continue
		}
		cur, haveCur = b, true
		out.Parsed++
		out.Roles[i] = RoleMerkleBlock
		if p.Bytes != EmptyMerkleBlockWire && !seen[h] {
			seen[h] = true
			out.Matched = append(out.Matched, h)
		}
	}
	return out
}

// txsOfSize returns the indexes of b's transactions of size bytes.
func txsOfSize(b Block, size int) []int {
	var out []int
	for i, s := range b.TxSizes {
		if s == size {
			out = append(out, i)
		}
	}
	return out
}
