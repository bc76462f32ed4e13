package headers

import (
	"errors"
	"time"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// This file adapts the store's view to btcd's HeaderCtx and ChainCtx so
// that the tests can ask btcd's CheckBlockHeaderContext and
// CheckBlockHeaderSanity for their verdict on the same headers.

// btcdNode is a HeaderCtx over a chainView.
type btcdNode struct {
	v chainView
	i int32
}

func (n btcdNode) Height() int32    { return n.v.node(n.i).height }
func (n btcdNode) Bits() uint32     { return n.v.node(n.i).bits }
func (n btcdNode) Timestamp() int64 { return int64(n.v.node(n.i).time) }

func (n btcdNode) Parent() blockchain.HeaderCtx {
	p := n.v.node(n.i).parent
	if p == noParent {
		return nil
	}
	return btcdNode{n.v, p}
}

func (n btcdNode) RelativeAncestorCtx(distance int32) blockchain.HeaderCtx {
	h := n.Height() - distance
	if h < 0 {
		return nil
	}
	return btcdNode{n.v, n.v.ancestor(n.i, h)}
}

// btcdChain is a ChainCtx for a rules value.
type btcdChain struct {
	r *rules
}

func (c btcdChain) ChainParams() *chaincfg.Params { return c.r.net.Params }
func (c btcdChain) BlocksPerRetarget() int32      { return c.r.interval }
func (c btcdChain) MinRetargetTimespan() int64    { return c.r.minTimespan }
func (c btcdChain) MaxRetargetTimespan() int64    { return c.r.maxTimespan }

func (c btcdChain) VerifyCheckpoint(height int32, hash *chainhash.Hash) bool {
	cp, ok := c.r.checkpoints[height]
	return !ok || cp == *hash
}

func (c btcdChain) FindPreviousCheckpoint() (blockchain.HeaderCtx, error) {
	return nil, nil
}

// fixedTimeSource is a MedianTimeSource reading a fixed time.
type fixedTimeSource struct{ now time.Time }

func (f fixedTimeSource) AdjustedTime() time.Time         { return f.now }
func (f fixedTimeSource) AddTimeSample(string, time.Time) {}
func (f fixedTimeSource) Offset() time.Duration           { return 0 }

// btcdVerdict returns btcd's verdict on h as a child of node parent,
// translated to this package's sentinels (nil when btcd accepts).
func btcdVerdict(r *rules, v chainView, h *wire.BlockHeader, parent int32, now time.Time) error {
	err := blockchain.CheckBlockHeaderSanity(h, r.powLimit, fixedTimeSource{now}, blockchain.BFNone)
	if err == nil {
		err = blockchain.CheckBlockHeaderContext(h, btcdNode{v, parent}, blockchain.BFNone,
			btcdChain{r}, false)
	}
	if err == nil {
		return nil
	}
	var re blockchain.RuleError
	if !errors.As(err, &re) {
		return err
	}
	switch re.ErrorCode {
	case blockchain.ErrUnexpectedDifficulty:
		// btcd uses one code for a target outside the limit and for
		// bits that differ from the required value.
		target := blockchain.CompactToBig(h.Bits)
		if target.Sign() <= 0 || target.Cmp(r.powLimit) > 0 {
			return ErrBelowPowLimit
		}
		return ErrBadBits
	case blockchain.ErrHighHash:
		return ErrBadPoW
	case blockchain.ErrTimeTooOld:
		return ErrTimeTooOld
	case blockchain.ErrTimeTooNew:
		return ErrTimeTooNew
	case blockchain.ErrBlockVersionTooOld:
		return ErrBadVersion
	case blockchain.ErrBadCheckpoint, blockchain.ErrForkTooOld:
		return ErrCheckpoint
	case blockchain.ErrTimewarpAttack:
		return ErrTimewarp
	}
	return err
}

// ourVerdict is this package's verdict on the same question.
func ourVerdict(r *rules, v chainView, h *wire.BlockHeader, parent int32, now time.Time) error {
	hash := h.BlockHash()
	if _, err := r.checkSanity(h, &hash, now.Unix()); err != nil {
		return err
	}
	_, err := r.checkContext(v, h, &hash, parent, -1)
	return err
}
