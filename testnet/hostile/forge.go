package hostile

import (
	"fmt"
	"math/big"
	"sort"
	"time"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"

	"github.com/bloomwatch/bloomwatch/bip37"
)

// maxGrind bounds the nonce search of grind; at the difficulties of regtest
// and simnet a few tries suffice.
const maxGrind = 1 << 24

// medianTimeBlocks is the number of ancestors the median time past covers.
const medianTimeBlocks = 11

// futureLimit is how far ahead of the clock a header may be timestamped.
const futureLimit = 2 * time.Hour

// powValid reports whether h's hash meets the target its bits encode.
func powValid(h *wire.BlockHeader) bool {
	target := blockchain.CompactToBig(h.Bits)
	if target.Sign() <= 0 {
		return false
	}
	hash := h.BlockHash()
	return blockchain.HashToBig(&hash).Cmp(target) <= 0
}

// grind changes h's nonce until its proof of work is valid (wantValid) or
// invalid (!wantValid) against its own bits.
func grind(h *wire.BlockHeader, wantValid bool) error {
	for i := 0; i < maxGrind; i++ {
		if powValid(h) == wantValid {
			return nil
		}
		h.Nonce++
	}
	return fmt.Errorf("grind header (want valid=%v) after %d nonces: %w", wantValid, maxGrind, ErrCannotForge)
}

// medianTimePast returns the median of the last (up to) 11 timestamps of
// chain, which ends with the parent of the header being checked.
func medianTimePast(chain []wire.BlockHeader) time.Time {
	start := len(chain) - medianTimeBlocks
	if start < 0 {
		start = 0
	}
	ts := make([]int64, 0, medianTimeBlocks)
	for _, h := range chain[start:] {
		ts = append(ts, h.Timestamp.Unix())
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	return time.Unix(ts[len(ts)/2], 0)
}

// childOf returns a fresh header extending parent with a valid proof of
// work under the parent's bits, timestamped one second after it.
func childOf(parent *wire.BlockHeader, salt uint32) (wire.BlockHeader, error) {
	return childWithBits(parent, parent.Bits, salt)
}

// childWithBits is childOf with the given difficulty bits.
func childWithBits(parent *wire.BlockHeader, bits, salt uint32) (wire.BlockHeader, error) {
	h := wire.BlockHeader{
		Version:   parent.Version,
		PrevBlock: parent.BlockHash(),
		Timestamp: parent.Timestamp.Add(time.Second),
		Bits:      bits,
	}
	// A distinct merkle root per salt keeps forged siblings apart.
	h.MerkleRoot = chainhash.DoubleHashH([]byte(fmt.Sprintf("bloomwatch hostile %d %v", salt, h.PrevBlock)))
	if err := grind(&h, true); err != nil {
		return h, err
	}
	return h, nil
}

// forgeHeader returns a child of chain's last header broken the way s
// says: bad proof of work, bad bits, a timestamp at the median time past,
// a timestamp 2h10m after now, or an unknown parent.
func forgeHeader(s Scenario, chain []wire.BlockHeader, now time.Time) (wire.BlockHeader, error) {
	if len(chain) == 0 {
		return wire.BlockHeader{}, fmt.Errorf("forge %s: empty chain: %w", s, ErrCannotForge)
	}
	parent := chain[len(chain)-1]
	h, err := childOf(&parent, uint32(len(chain)))
	if err != nil {
		return h, err
	}
	switch s {
	case HeaderBadPoW:
		return h, grind(&h, false)
	case HeaderBadBits:
		target := blockchain.CompactToBig(parent.Bits)
		h.Bits = blockchain.BigToCompact(new(big.Int).Rsh(target, 1))
		return h, grind(&h, true)
	case HeaderTimeTooOld:
		h.Timestamp = medianTimePast(chain)
		return h, grind(&h, true)
	case HeaderTimeTooNew:
		h.Timestamp = now.Add(futureLimit + 10*time.Minute).Truncate(time.Second)
		return h, grind(&h, true)
	case HeadersNotConnecting:
		h.PrevBlock = chainhash.DoubleHashH([]byte(fmt.Sprintf("bloomwatch hostile orphan %v", h.PrevBlock)))
		return h, grind(&h, true)
	default:
		return h, fmt.Errorf("forge header for %s: %w", s, ErrCannotForge)
	}
}

// forgeFork returns n headers forking off chain[:forkHeight+1]. With
// lieBits the headers claim a target 2^16 times harder than their
// parent's and do not meet it; otherwise they are valid under the parent's
// bits.
func forgeFork(chain []wire.BlockHeader, forkHeight int32, n int, lieBits bool) ([]wire.BlockHeader, error) {
	if forkHeight < 0 || int(forkHeight) >= len(chain) {
		return nil, fmt.Errorf("fork at %d of a %d-header chain: %w", forkHeight, len(chain), ErrCannotForge)
	}
	out := make([]wire.BlockHeader, 0, n)
	parent := chain[forkHeight]
	bits := parent.Bits
	for i := 0; i < n; i++ {
		h, err := childWithBits(&parent, bits, uint32(i)^0x5eed0000)
		if err != nil {
			return nil, err
		}
		if lieBits {
			target := blockchain.CompactToBig(bits)
			h.Bits = blockchain.BigToCompact(new(big.Int).Rsh(target, 16))
			if err := grind(&h, false); err != nil {
				return nil, err
			}
		}
		out = append(out, h)
		parent = h
	}
	return out, nil
}

// rewriteWitness returns a copy of tx whose every input carries the
// witness of a P2WPKH spend by WitnessPubKey (a dummy DER-shaped
// signature and the key); the txid is unchanged.
func rewriteWitness(tx *wire.MsgTx) *wire.MsgTx {
	out := tx.Copy()
	sig := append([]byte{0x30, 0x44}, make([]byte, 0x44)...)
	sig = append(sig, 0x01) // SIGHASH_ALL
	for _, in := range out.TxIn {
		in.Witness = wire.TxWitness{sig, WitnessPubKey}
	}
	return out
}

// flipFirstHash corrupts one bit of the first hash of mb's tree, so the
// root it computes no longer matches the header.
func flipFirstHash(mb *wire.MsgMerkleBlock) error {
	if len(mb.Hashes) == 0 {
		return fmt.Errorf("flip hash of an empty tree: %w", ErrCannotForge)
	}
	h := *mb.Hashes[0]
	h[0] ^= 1
	mb.Hashes[0] = &h
	return nil
}

// appendUnusedHash adds a hash the traversal will not consume, when the
// tree can take one more hash without failing an earlier check.
func appendUnusedHash(mb *wire.MsgMerkleBlock) error {
	n := len(mb.Hashes) + 1
	if uint64(n) > uint64(mb.Transactions) || n > len(mb.Flags)*8 {
		return fmt.Errorf("unused hash in a tree of %d txs, %d hashes, %d flag bytes: %w",
			mb.Transactions, len(mb.Hashes), len(mb.Flags), ErrCannotForge)
	}
	extra := chainhash.DoubleHashH([]byte("bloomwatch hostile unused hash"))
	mb.Hashes = append(mb.Hashes, &extra)
	return nil
}

// appendUnusedBits adds a whole flag byte the traversal will not consume.
func appendUnusedBits(mb *wire.MsgMerkleBlock) {
	mb.Flags = append(mb.Flags, 0)
}

// duplicateTree returns a CVE-2012-2459 merkleblock for block: the last
// 2^h transactions are appended again, where h is the lowest tree level of
// odd width above one, so every merkle node above keeps its hash while the
// duplicated subtree equals its sibling. The copies are marked matched so
// the verifier must descend into them. matched[i] says whether transaction
// i matches; it is kept for the original transactions.
func duplicateTree(block *wire.MsgBlock, matched []bool) (*wire.MsgMerkleBlock, error) {
	n := len(block.Transactions)
	group := 1
	for width := n; width > 1; width = (width + 1) / 2 {
		if width%2 == 1 {
			if n+group > bip37.MaxMerkleTxs {
				break
			}
			txs := make([]*wire.MsgTx, 0, n+group)
			txs = append(txs, block.Transactions...)
			txs = append(txs, block.Transactions[n-group:]...)
			fake := &wire.MsgBlock{Header: block.Header, Transactions: txs}
			return bip37.BuildMerkleBlock(fake, func(i int, _ *wire.MsgTx) bool {
				return i >= n || matched[i]
			}), nil
		}
		group *= 2
	}
	return nil, fmt.Errorf("CVE-2012-2459 tree for a %d-tx block: %w", n, ErrCannotForge)
}
