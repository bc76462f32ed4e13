package headers

import (
	"fmt"
	"math/big"
	"time"

	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

const (
	// medianTimeBlocks is the number of blocks whose median timestamp a
	// new header must exceed (btcd's and Core's 11).
	medianTimeBlocks = 11

	// MaxFutureSeconds is how far past the clock a header's timestamp may
	// be (btcd's MaxTimeOffsetSeconds, Core's MAX_FUTURE_BLOCK_TIME).
	MaxFutureSeconds = 2 * 60 * 60

	// maxBitsCache bounds the per-bits cache of targets and work, so that
	// hostile headers with ever-new bits cannot grow it.
	maxBitsCache = 4096
)

// bitsInfo caches what a difficulty value implies.
type bitsInfo struct {
	target  [32]byte // little-endian, like a hash
	work    work     // blockchain.CalcWork(bits)
	inLimit bool     // 0 < target <= pow limit
}

// rules is the validation context of one network.
type rules struct {
	net            *netparams.Network
	powLimit       *big.Int
	powLimitBits   uint32
	interval       int32 // blocks per retarget
	targetTimespan int64 // seconds
	minTimespan    int64
	maxTimespan    int64
	noRetarget     bool
	minDiff        bool  // 20-minute rule
	minDiffTime    int64 // seconds
	bip94          bool
	checkpoints    map[int32]chainhash.Hash
	cpHeights      []int32 // ascending
	bip34, bip65   int32
	bip66          int32

	cache map[uint32]*bitsInfo
	// lastBits and lastInfo repeat the latest cache answer: the bits
	// change once per retarget period, so most headers find it here.
	lastBits uint32
	lastInfo *bitsInfo
}

func newRules(net *netparams.Network) (*rules, error) {
	p := net.Params
	if p == nil || p.GenesisBlock == nil || p.GenesisHash == nil || p.PowLimit == nil {
		return nil, fmt.Errorf("headers: network %q has incomplete params", net.Name)
	}
	perBlock := int64(p.TargetTimePerBlock / time.Second)
	span := int64(p.TargetTimespan / time.Second)
	if perBlock <= 0 || span < perBlock || p.RetargetAdjustmentFactor <= 0 {
		return nil, fmt.Errorf("headers: network %q has invalid retarget params", net.Name)
	}
	r := &rules{
		net:            net,
		powLimit:       p.PowLimit,
		powLimitBits:   p.PowLimitBits,
		interval:       int32(span / perBlock),
		targetTimespan: span,
		minTimespan:    span / p.RetargetAdjustmentFactor,
		maxTimespan:    span * p.RetargetAdjustmentFactor,
		noRetarget:     p.PoWNoRetargeting,
		minDiff:        p.ReduceMinDifficulty,
		minDiffTime:    int64(p.MinDiffReductionTime / time.Second),
		bip94:          net.Rules.BIP94(),
		checkpoints:    make(map[int32]chainhash.Hash, len(net.Checkpoints)),
		bip34:          p.BIP0034Height,
		bip65:          p.BIP0065Height,
		bip66:          p.BIP0066Height,
		cache:          make(map[uint32]*bitsInfo),
	}
	for _, cp := range net.Checkpoints {
		if cp.Hash == nil {
			continue
		}
		r.checkpoints[cp.Height] = *cp.Hash
		r.cpHeights = append(r.cpHeights, cp.Height)
	}
	return r, nil
}

// info returns the cached facts about bits.
func (r *rules) info(bits uint32) *bitsInfo {
	if r.lastInfo != nil && r.lastBits == bits {
		return r.lastInfo
	}
	if bi, ok := r.cache[bits]; ok {
		r.lastBits, r.lastInfo = bits, bi
		return bi
	}
	bi := &bitsInfo{}
	target := blockchain.CompactToBig(bits)
	if target.Sign() > 0 && target.Cmp(r.powLimit) <= 0 {
		bi.inLimit = true
		var be [32]byte
		target.FillBytes(be[:])
		for i := range be {
			bi.target[i] = be[31-i]
		}
		bi.work = workFromBig(blockchain.CalcWork(bits))
	}
	if len(r.cache) >= maxBitsCache {
		clear(r.cache)
	}
	r.cache[bits] = bi
	r.lastBits, r.lastInfo = bits, bi
	return bi
}

// hashAbove reports whether hash, read as a little-endian number, is above
// the little-endian target.
func hashAbove(hash *chainhash.Hash, target *[32]byte) bool {
	for i := 31; i >= 0; i-- {
		if hash[i] != target[i] {
			return hash[i] > target[i]
		}
	}
	return false
}

// headerTime is the timestamp as serialized (seconds, 32 bits).
func headerTime(h *wire.BlockHeader) int64 {
	return int64(uint32(h.Timestamp.Unix()))
}

// checkSanity runs the context-free checks of btcd's
// CheckBlockHeaderSanity: the target is within the limit, the hash meets it
// and the time is at most two hours past now.
func (r *rules) checkSanity(h *wire.BlockHeader, hash *chainhash.Hash, now int64) (string, error) {
	bi := r.info(h.Bits)
	if !bi.inLimit {
		return fmt.Sprintf("bits %08x give target %064x, limit %064x",
			h.Bits, blockchain.CompactToBig(h.Bits), r.powLimit), ErrBelowPowLimit
	}
	if hashAbove(hash, &bi.target) {
		return fmt.Sprintf("hash above target of bits %08x", h.Bits), ErrBadPoW
	}
	if t := headerTime(h); t > now+MaxFutureSeconds {
		return fmt.Sprintf("timestamp %d is more than %d s after now (%d)",
			t, MaxFutureSeconds, now), ErrTimeTooNew
	}
	return "", nil
}

// chainView gives validation access to ancestors.
type chainView interface {
	node(i int32) *node
	ancestor(i int32, height int32) int32
	// walkMemo returns the memo of the walks back through ancestors, or
	// nil.
	walkMemo() *walkMemo
}

// walkMemo remembers the results of two backward walks for one node each,
// so that headers validated in chain order cost one step each instead of a
// walk: the 20-minute rule's (the bits of the last block that did not use
// the exception, up to the period start) and the median time past's (the
// timestamps of a node and its 10 parents). Nodes never change, so an entry
// stays true as long as the node index is not reused (see Store.flush).
type walkMemo struct {
	idx  int32
	bits uint32
	ok   bool

	// mtp[medianTimeBlocks-mtpN:] are the timestamps of node mtpIdx and
	// its parents, oldest first, and mtpDesc is how many of them are
	// greater than the next (none: the window is sorted).
	mtpIdx  int32
	mtpN    int
	mtpDesc int
	mtpOK   bool
	mtp     [medianTimeBlocks]uint32
}

// requiredBits is the difficulty a child of nodes[parent] with timestamp t
// must carry (btcd's calcNextRequiredDifficulty, plus BIP94).
func (r *rules) requiredBits(v chainView, parent int32, t int64) uint32 {
	if r.noRetarget {
		return r.powLimitBits
	}
	p := v.node(parent)
	if (p.height+1)%r.interval != 0 {
		if !r.minDiff {
			return p.bits
		}
		if t > int64(p.time)+r.minDiffTime {
			return r.powLimitBits
		}
		return r.lastRealBits(v, parent)
	}
	first := v.node(v.ancestor(parent, p.height-(r.interval-1)))
	actual := int64(p.time) - int64(first.time)
	adjusted := min(max(actual, r.minTimespan), r.maxTimespan)
	base := p.bits
	if r.bip94 {
		base = first.bits
	}
	target := blockchain.CompactToBig(base)
	target.Mul(target, big.NewInt(adjusted))
	target.Div(target, big.NewInt(r.targetTimespan))
	if target.Cmp(r.powLimit) > 0 {
		target.Set(r.powLimit)
	}
	return blockchain.BigToCompact(target)
}

// lastRealBits returns the bits of the last block at or before node i that
// did not use the 20-minute exception: the first one walking back that is a
// period start, genesis, or not at the limit (btcd's
// findPrevTestNetDifficulty).
func (r *rules) lastRealBits(v chainView, i int32) uint32 {
	memo := v.walkMemo()
	start := i
	bits := uint32(0)
	for {
		if memo != nil && memo.ok && memo.idx == i {
			bits = memo.bits
			break
		}
		n := v.node(i)
		if n.height%r.interval == 0 || n.bits != r.powLimitBits || n.parent == noParent {
			bits = n.bits
			break
		}
		i = n.parent
	}
	if memo != nil {
		*memo = walkMemo{idx: start, bits: bits, ok: true}
	}
	return bits
}

// medianTimePast is the median timestamp of nodes[i] and its 10 parents
// (fewer near genesis; for an even count the upper middle, as in btcd and
// Core).
func medianTimePast(v chainView, i int32) int64 {
	memo := v.walkMemo()
	if memo == nil {
		memo = &walkMemo{}
	}
	win := &memo.mtp
	nd := v.node(i)
	if memo.mtpOK && nd.parent != noParent && memo.mtpIdx == nd.parent {
		// The parent's window, moved on by one block.
		if memo.mtpN == medianTimeBlocks && win[0] > win[1] {
			memo.mtpDesc--
		}
		copy(win[:medianTimeBlocks-1], win[1:])
		win[medianTimeBlocks-1] = nd.time
		if win[medianTimeBlocks-2] > nd.time {
			memo.mtpDesc++
		}
		memo.mtpN = min(memo.mtpN+1, medianTimeBlocks)
	} else {
		n := 0
		memo.mtpDesc = 0
		for {
			n++
			win[medianTimeBlocks-n] = nd.time
			if n > 1 && nd.time > win[medianTimeBlocks-n+1] {
				memo.mtpDesc++
			}
			if n == medianTimeBlocks || nd.parent == noParent {
				break
			}
			nd = v.node(nd.parent)
		}
		memo.mtpN = n
	}
	memo.mtpIdx, memo.mtpOK = i, true

	n := memo.mtpN
	if memo.mtpDesc == 0 { // sorted already, as timestamps mostly are
		return int64(win[medianTimeBlocks-n+n/2])
	}
	var ts [medianTimeBlocks]uint32
	s := ts[medianTimeBlocks-n:]
	copy(s, win[medianTimeBlocks-n:])
	for a := 1; a < len(s); a++ { // insertion sort: at most 11 values
		for b := a; b > 0 && s[b] < s[b-1]; b-- {
			s[b], s[b-1] = s[b-1], s[b]
		}
	}
	return int64(s[n/2])
}

// checkContext runs the checks of btcd's CheckBlockHeaderContext (bits,
// median time, version floors, checkpoints) and BIP94's timewarp rule for a
// child of nodes[parent]. lastCheckpoint is the height of the highest
// checkpoint at or below the best tip, or -1.
func (r *rules) checkContext(v chainView, h *wire.BlockHeader, hash *chainhash.Hash,
	parent int32, lastCheckpoint int32) (string, error) {

	p := v.node(parent)
	height := p.height + 1
	t := headerTime(h)

	if want := r.requiredBits(v, parent, t); h.Bits != want {
		return fmt.Sprintf("bits %08x, rules require %08x", h.Bits, want), ErrBadBits
	}
	if mtp := medianTimePast(v, parent); t <= mtp {
		return fmt.Sprintf("timestamp %d not after median time past %d", t, mtp), ErrTimeTooOld
	}
	if r.bip94 && height%r.interval == 0 && t < int64(p.time)-netparams.MaxTimewarp {
		return fmt.Sprintf("timestamp %d, parent's %d", t, p.time), ErrTimewarp
	}
	if h.Version < 2 && height >= r.bip34 || h.Version < 3 && height >= r.bip66 ||
		h.Version < 4 && height >= r.bip65 {
		return fmt.Sprintf("version %d at height %d", h.Version, height), ErrBadVersion
	}
	if cp, ok := r.checkpoints[height]; ok && cp != *hash {
		return fmt.Sprintf("height %d must be %v", height, cp), ErrCheckpoint
	}
	if height < lastCheckpoint {
		return fmt.Sprintf("fork at height %d below the checkpoint at %d",
			height, lastCheckpoint), ErrCheckpoint
	}
	return "", nil
}

// lastCheckpointAtOrBelow returns the highest checkpoint height <= height,
// or -1.
func (r *rules) lastCheckpointAtOrBelow(height int32) int32 {
	last := int32(-1)
	for _, h := range r.cpHeights {
		if h <= height && h > last {
			last = h
		}
	}
	return last
}
