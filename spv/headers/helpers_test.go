package headers

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// testNow is the fixed clock of the tests: far enough after every genesis
// that chains of thousands of 10-minute blocks stay in the past.
var testNow = time.Unix(1_900_000_000, 0)

func fixedClock() time.Time { return testNow }

// mustNet looks a network up.
func mustNet(t testing.TB, name string) *netparams.Network {
	t.Helper()
	n, err := netparams.Lookup(name)
	require.NoError(t, err)
	return n
}

// mustNetNoT looks a network up outside a test.
func mustNetNoT(name string) *netparams.Network {
	n, err := netparams.Lookup(name)
	if err != nil {
		panic(err)
	}
	return n
}

// lookupForFuzz is the fuzz target's network.
func lookupForFuzz() (*netparams.Network, error) { return netparams.Lookup("regtest") }

// solve increments the nonce until the header meets its own bits.
func solve(h *wire.BlockHeader) {
	target := blockchain.CompactToBig(h.Bits)
	for {
		hash := h.BlockHash()
		if blockchain.HashToBig(&hash).Cmp(target) <= 0 {
			return
		}
		h.Nonce++
	}
}

// unsolve increments the nonce until the header FAILS its own bits.
func unsolve(h *wire.BlockHeader) {
	target := blockchain.CompactToBig(h.Bits)
	for {
		hash := h.BlockHash()
		if blockchain.HashToBig(&hash).Cmp(target) > 0 {
			return
		}
		h.Nonce++
	}
}

// tag makes a merkle root unique to a branch and height, so that branches
// built on the same parent differ.
func tag(branch uint32, height int32) chainhash.Hash {
	var m chainhash.Hash
	binary.LittleEndian.PutUint32(m[:], branch)
	binary.LittleEndian.PutUint32(m[4:], uint32(height))
	m[31] = 0x42
	return m
}

// child returns a solved child of parent at the given time and bits.
func child(parent *wire.BlockHeader, ts int64, bits uint32, branch uint32, height int32) wire.BlockHeader {
	h := wire.BlockHeader{
		Version:    4,
		PrevBlock:  parent.BlockHash(),
		MerkleRoot: tag(branch, height),
		Timestamp:  time.Unix(ts, 0),
		Bits:       bits,
	}
	solve(&h)
	return h
}

// extend mines n headers on top of parent (at parentHeight) with the given
// spacing in seconds, asking rules for the required bits.
func extend(r *rules, v chainView, parentIdx int32, parent wire.BlockHeader, n int, spacing int64, branch uint32) []wire.BlockHeader {
	out := make([]wire.BlockHeader, 0, n)
	// A scratch view that sees the stored chain plus the new headers.
	sv := &scratchView{base: v, baseLen: -1}
	prev := parentIdx
	ph := parent
	for i := 0; i < n; i++ {
		pn := sv.node(prev)
		ts := int64(pn.time) + spacing
		bits := r.requiredBits(sv, prev, ts)
		h := child(&ph, ts, bits, branch, pn.height+1)
		out = append(out, h)
		prev = sv.add(node{hash: h.BlockHash(), parent: prev, height: pn.height + 1,
			bits: bits, time: uint32(ts)})
		ph = h
	}
	return out
}

// scratchView layers new nodes over a chainView (indexes >= 1<<30).
type scratchView struct {
	base    chainView
	baseLen int32
	extra   []node
}

const scratchBase = 1 << 30

func (v *scratchView) node(i int32) *node {
	if i >= scratchBase {
		return &v.extra[i-scratchBase]
	}
	return v.base.node(i)
}

func (v *scratchView) ancestor(i int32, height int32) int32 {
	for i >= scratchBase && v.node(i).height > height {
		i = v.node(i).parent
	}
	if i >= scratchBase {
		return i
	}
	return v.base.ancestor(i, height)
}

func (v *scratchView) walkMemo() *walkMemo { return nil }

func (v *scratchView) add(n node) int32 {
	v.extra = append(v.extra, n)
	return scratchBase + int32(len(v.extra)-1)
}

// openTest opens a store in a fresh temp dir with the fixed clock.
func openTest(t testing.TB, net *netparams.Network, opts ...Option) (*Store, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := Open(dir, net, append([]Option{WithClock(fixedClock)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s, dir
}

// mineOnTip mines n headers on the store's tip.
func mineOnTip(t testing.TB, s *Store, n int, spacing int64, branch uint32) []wire.BlockHeader {
	t.Helper()
	s.mu.RLock()
	defer s.mu.RUnlock()
	tip := s.tipIndex()
	return extend(s.rules, s, tip, s.tipHdr, n, spacing, branch)
}

// mineOn mines n headers on the stored header with the given hash.
func mineOn(t testing.TB, s *Store, hash chainhash.Hash, n int, spacing int64, branch uint32) []wire.BlockHeader {
	t.Helper()
	s.mu.RLock()
	defer s.mu.RUnlock()
	i, ok := s.index.lookup(&s.nodes, &hash)
	require.True(t, ok, "no header %v", hash)
	ph, err := s.readHeader(i)
	require.NoError(t, err)
	return extend(s.rules, s, i, ph, n, spacing, branch)
}
