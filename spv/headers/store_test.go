package headers

import (
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

func mustConnect(t *testing.T, s *Store, hdrs []wire.BlockHeader) ConnectResult {
	t.Helper()
	res, err := s.Connect(hdrs)
	require.NoError(t, err)
	return res
}

func hashes(hdrs []wire.BlockHeader) []chainhash.Hash {
	out := make([]chainhash.Hash, len(hdrs))
	for i := range hdrs {
		out[i] = hdrs[i].BlockHash()
	}
	return out
}

// TestSentinels provokes every validation sentinel through Connect and
// checks the typed error and that the headers before the bad one stay.
func TestSentinels(t *testing.T) {
	cpNet := func() *netparams.Network { return easyNet("cp", netparams.RulesMainnet, 2016, false, 0x7e570003, nil) }
	tests := []struct {
		name string
		net  func() *netparams.Network
		// bad turns a valid next header (on top of 3 good ones) into an
		// invalid one; s is the store with the 3 good ones connected.
		bad  func(t *testing.T, s *Store, good wire.BlockHeader) wire.BlockHeader
		want error
	}{
		{"not connecting", func() *netparams.Network { return mustNet(t, "regtest") },
			func(t *testing.T, s *Store, h wire.BlockHeader) wire.BlockHeader {
				h.PrevBlock[5] ^= 0xff
				solve(&h)
				return h
			}, ErrNotConnecting},
		{"bad pow", func() *netparams.Network { return mustNet(t, "regtest") },
			func(t *testing.T, s *Store, h wire.BlockHeader) wire.BlockHeader {
				unsolve(&h)
				return h
			}, ErrBadPoW},
		{"bad bits", func() *netparams.Network { return mustNet(t, "regtest") },
			func(t *testing.T, s *Store, h wire.BlockHeader) wire.BlockHeader {
				h.Bits = 0x207ffffe // harder than required, and solved
				solve(&h)
				return h
			}, ErrBadBits},
		{"target above the limit", func() *netparams.Network { return mustNet(t, "regtest") },
			func(t *testing.T, s *Store, h wire.BlockHeader) wire.BlockHeader {
				h.Bits = 0x2100ffff
				return h
			}, ErrBelowPowLimit},
		{"zero target", func() *netparams.Network { return mustNet(t, "regtest") },
			func(t *testing.T, s *Store, h wire.BlockHeader) wire.BlockHeader {
				h.Bits = 0
				return h
			}, ErrBelowPowLimit},
		{"negative target", func() *netparams.Network { return mustNet(t, "regtest") },
			func(t *testing.T, s *Store, h wire.BlockHeader) wire.BlockHeader {
				h.Bits = 0x04923456
				return h
			}, ErrBelowPowLimit},
		{"time at median time past", func() *netparams.Network { return mustNet(t, "regtest") },
			func(t *testing.T, s *Store, h wire.BlockHeader) wire.BlockHeader {
				s.mu.RLock()
				mtp := medianTimePast(s, s.tipIndex())
				s.mu.RUnlock()
				h.Timestamp = time.Unix(mtp, 0)
				solve(&h)
				return h
			}, ErrTimeTooOld},
		{"time too new", func() *netparams.Network { return mustNet(t, "regtest") },
			func(t *testing.T, s *Store, h wire.BlockHeader) wire.BlockHeader {
				h.Timestamp = testNow.Add(2*time.Hour + time.Second)
				solve(&h)
				return h
			}, ErrTimeTooNew},
		{"old version on simnet", func() *netparams.Network { return mustNet(t, "simnet") },
			func(t *testing.T, s *Store, h wire.BlockHeader) wire.BlockHeader {
				h.Version = 3
				solve(&h)
				return h
			}, ErrBadVersion},
		{"checkpoint mismatch", cpNet,
			func(t *testing.T, s *Store, h wire.BlockHeader) wire.BlockHeader {
				// A checkpoint at height 4 names another hash.
				s.rules.checkpoints[4] = chainhash.Hash{1}
				s.rules.cpHeights = []int32{4}
				return h
			}, ErrCheckpoint},
		{"fork below the last checkpoint", cpNet,
			func(t *testing.T, s *Store, h wire.BlockHeader) wire.BlockHeader {
				// Checkpoint at height 2 = the tip; a fork at
				// height 1 is refused.
				tipHash, tipHeight := s.Tip()
				s.rules.checkpoints[tipHeight] = tipHash
				s.rules.cpHeights = []int32{tipHeight}
				g, _ := s.HashByHeight(0)
				return mineOn(t, s, g, 1, 900, 99)[0]
			}, ErrCheckpoint},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := openTest(t, tc.net())
			good := mineOnTip(t, s, 4, 600, 1)
			mustConnect(t, s, good[:2])
			batch := append([]wire.BlockHeader{good[2]}, tc.bad(t, s, good[3]))
			batch = append(batch, good[3])
			// The first header of the batch is connected by the
			// time bad() ran only for the checkpoint cases; use a
			// batch of [good, bad, good].
			res, err := s.Connect(batch)
			var verr *ValidationError
			require.ErrorAs(t, err, &verr, "error %v (%T), want *ValidationError", err, err)
			require.Equal(t, tc.want, verr.Err, "error %v, want %v", err, tc.want)
			require.ErrorIs(t, err, tc.want, "error %v, want %v", err, tc.want)
			require.Equal(t, 1, verr.Index, "index %d hash %v", verr.Index, verr.Hash)
			require.Equal(t, batch[1].BlockHash(), verr.Hash, "index %d hash %v", verr.Index, verr.Hash)
			require.Equal(t, 1, res.Accepted, "result %+v: the header before the bad one must stay", res)
			require.True(t, res.NewTip, "result %+v: the header before the bad one must stay", res)
			hash, h := s.Tip()
			require.Equal(t, int32(3), h, "tip %v at %d", hash, h)
			require.Equal(t, good[2].BlockHash(), hash, "tip %v at %d", hash, h)
			_, err = s.HeightByHash(batch[1].BlockHash())
			require.ErrorIs(t, err, ErrNotFound, "bad header stored: %v", err)
		})
	}
}

// TestTimewarpBIP94 connects a period-start header timestamped 601 s
// before its parent: testnet4 rules refuse it, testnet3 rules accept it,
// and 600 s is accepted by both.
func TestTimewarpBIP94(t *testing.T) {
	for _, tc := range []struct {
		family netparams.Rules
		before int // headers mined before the test header (7: it starts a period)
		back   int64
		want   error
	}{
		{netparams.RulesTestnet4, 7, 601, ErrTimewarp},
		{netparams.RulesTestnet4, 7, 600, nil},
		{netparams.RulesTestnet4, 6, 601, nil}, // mid-period: no bound
		{netparams.RulesTestnet3, 7, 601, nil},
	} {
		net := easyNet("tw", tc.family, 8, true, 0x7e570004, nil)
		s, _ := openTest(t, net)
		mustConnect(t, s, mineOnTip(t, s, tc.before, 600, 1))
		s.mu.RLock()
		tip := s.tipIndex()
		parent := s.tipHdr
		ts := int64(s.nodes.at(tip).time) - tc.back
		bits := s.rules.requiredBits(s, tip, ts)
		s.mu.RUnlock()
		h := child(&parent, ts, bits, 5, int32(tc.before+1))
		_, err := s.Connect([]wire.BlockHeader{h})
		require.False(t, !errors.Is(err, tc.want) && !(err == nil && tc.want == nil), "%v, height %d, %d s back: %v, want %v", tc.family, tc.before+1, tc.back, err, tc.want)
	}
}

// TestBIP94RetargetConnect mines, on easy networks with 8-block periods, a
// period that speeds up difficulty and ends with a minimum-difficulty block,
// then checks which retarget each rule family accepts.
func TestBIP94RetargetConnect(t *testing.T) {
	for _, family := range []netparams.Rules{netparams.RulesTestnet3, netparams.RulesTestnet4} {
		net := easyNet("bip94", family, 8, true, 0x7e570005, nil)
		s, _ := openTest(t, net)
		// Two fast periods: difficulty rises.
		mustConnect(t, s, mineOnTip(t, s, 15, 60, 1))
		// Height 16..22 fast, then 23 after 21 minutes (exception).
		mustConnect(t, s, mineOnTip(t, s, 7, 60, 2))
		last := mineOnTip(t, s, 1, 1260, 3)
		require.Equal(t, net.Params.PowLimitBits, last[0].Bits, "exception block has bits %08x", last[0].Bits)
		mustConnect(t, s, last)
		s.mu.RLock()
		tip := s.tipIndex()
		first := s.nodes.at(s.ancestor(tip, 16))
		ts := int64(s.nodes.at(tip).time) + 60
		want := s.rules.requiredBits(s, tip, ts)
		parent := s.tipHdr
		s.mu.RUnlock()
		// testnet3 starts from the exception's bits (the limit); BIP94
		// from the first block's (harder).
		expect := func(base uint32) uint32 {
			actual := int64(s.nodes.at(tip).time) - int64(first.time)
			target := blockchain.CompactToBig(base)
			target.Mul(target, big.NewInt(actual))
			target.Div(target, big.NewInt(8*600))
			return blockchain.BigToCompact(target)
		}
		fromLimit, fromFirst := expect(net.Params.PowLimitBits), expect(first.bits)
		require.NotEqual(t, fromFirst, fromLimit, "setup: both bases give %08x", fromLimit)
		require.False(t, family == netparams.RulesTestnet3 && want != fromLimit, "testnet3 retarget %08x, want %08x (from the limit)", want, fromLimit)
		require.False(t, family == netparams.RulesTestnet4 && want != fromFirst, "testnet4 retarget %08x, want %08x (from the first block)", want, fromFirst)
		mustConnect(t, s, []wire.BlockHeader{child(&parent, ts, want, 4, 24)})
		// The other family's value is refused.
		other := fromLimit
		if family == netparams.RulesTestnet3 {
			other = fromFirst
		}
		h := child(&parent, ts, other, 5, 24)
		_, err := s.Connect([]wire.BlockHeader{h})
		require.ErrorIs(t, err, ErrBadBits, "%v: other family's bits %08x: %v", family, other, err)
	}
}

// retargetNet is a simnet-like network that retargets every 10 blocks.
func retargetNet() *netparams.Network {
	return easyNet("fork", netparams.RulesMainnet, 10, false, 0x7e570006, nil)
}

// TestForkChoiceByWork builds a short branch of fast (harder) blocks and a
// longer branch of slow (minimum difficulty) blocks from genesis: the
// shorter branch has more work and wins whichever arrives first.
func TestForkChoiceByWork(t *testing.T) {
	for _, order := range []string{"heavy first", "long first"} {
		t.Run(order, func(t *testing.T) {
			s, _ := openTest(t, retargetNet())
			genesis := *retargetNet().Params.GenesisHash
			heavy := mineOn(t, s, genesis, 40, 60, 1)  // difficulty x4 per period
			long := mineOn(t, s, genesis, 80, 3000, 2) // stays at the limit
			wl := workOf(heavy, 1)                     // the genesis contributes to both alike
			ll := workOf(long, 1)
			require.Greater(t, wl.Cmp(ll), 0, "setup: heavy %d blocks work %v, long %d blocks work %v", len(heavy), wl, len(long), ll)
			require.Greater(t, len(long), len(heavy), "setup: heavy %d blocks work %v, long %d blocks work %v", len(heavy), wl, len(long), ll)
			first, second := heavy, long
			if order == "long first" {
				first, second = long, heavy
			}
			mustConnect(t, s, first)
			res := mustConnect(t, s, second)
			hash, h := s.Tip()
			require.Equal(t, heavy[39].BlockHash(), hash, "tip %v at %d, want the heavy branch's at 40", hash, h)
			require.Equal(t, int32(40), h, "tip %v at %d, want the heavy branch's at 40", hash, h)
			if order == "long first" {
				require.NotNil(t, res.Reorg, "reorg %+v", res.Reorg)
				require.Equal(t, int32(0), res.Reorg.ForkHeight, "reorg %+v", res.Reorg)
				require.Len(t, res.Reorg.Detached, 80, "reorg %+v", res.Reorg)
				require.Len(t, res.Reorg.Attached, 40, "reorg %+v", res.Reorg)
			} else {
				require.False(t, res.NewTip, "the long branch moved the tip: %+v", res)
				require.Nil(t, res.Reorg, "the long branch moved the tip: %+v", res)
			}
			require.Equal(t, 121, s.Count(), "count %d", s.Count())
			require.True(t, s.IsBest(heavy[10].BlockHash()), "IsBest")
			require.False(t, s.IsBest(long[10].BlockHash()), "IsBest")
			// HeaderByHash reaches the losing branch too.
			_, h, err := s.HeaderByHash(long[79].BlockHash())
			require.NoError(t, err, "side header: %d", h)
			require.Equal(t, int32(80), h, "side header: %d %v", h, err)
		})
	}
}

// workOf sums the work of headers plus genesis blocks of work per block.
func workOf(hdrs []wire.BlockHeader, genesis int) *big.Int {
	w := new(big.Int)
	for range genesis {
		w.Add(w, blockchain.CalcWork(0x207fffff))
	}
	for i := range hdrs {
		w.Add(w, blockchain.CalcWork(hdrs[i].Bits))
	}
	return w
}

// TestReorg checks the reorg report, the tie rule and that the new best
// chain survives a restart.
func TestReorg(t *testing.T) {
	net := mustNet(t, "regtest")
	s, dir := openTest(t, net)
	a := mineOnTip(t, s, 10, 600, 1)
	mustConnect(t, s, a)
	fork := a[4].BlockHash() // height 5

	// An equal-work branch (5 blocks above 5 = height 10) does not move
	// the tip: first seen wins.
	b := mineOn(t, s, fork, 7, 600, 2)
	res := mustConnect(t, s, b[:5])
	require.False(t, res.NewTip, "equal work: %+v", res)
	require.Nil(t, res.Reorg, "equal work: %+v", res)
	require.Equal(t, 5, res.Accepted, "equal work: %+v", res)
	// One more block: reorg.
	res = mustConnect(t, s, b[5:6])
	require.True(t, res.NewTip, "no reorg: %+v", res)
	require.NotNil(t, res.Reorg, "no reorg: %+v", res)
	r := res.Reorg
	require.Equal(t, int32(5), r.ForkHeight, "fork %d %v", r.ForkHeight, r.ForkHash)
	require.Equal(t, fork, r.ForkHash, "fork %d %v", r.ForkHeight, r.ForkHash)
	wantDetached := hashes(a[5:])
	for i, j := 0, len(wantDetached)-1; i < j; i, j = i+1, j-1 {
		wantDetached[i], wantDetached[j] = wantDetached[j], wantDetached[i]
	}
	require.True(t, equalHashes(r.Detached, wantDetached), "detached %v, want tip first %v", r.Detached, wantDetached)
	require.True(t, equalHashes(r.Attached, hashes(b[:6])), "attached %v", r.Attached)
	checkBest := func(s *Store, tip chainhash.Hash, tipHeight int32) {
		t.Helper()
		for h := int32(0); h <= 11; h++ {
			hash, err := s.HashByHeight(h)
			require.NoError(t, err)
			var want chainhash.Hash
			switch {
			case h == 0:
				want = *net.Params.GenesisHash
			case h <= 5:
				want = a[h-1].BlockHash()
			default:
				want = b[h-6].BlockHash()
			}
			require.Equal(t, want, hash, "height %d: %v, want %v", h, hash, want)
			hdr, err := s.HeaderByHeight(h)
			require.NoError(t, err, "HeaderByHeight(%d)", h)
			require.Equal(t, want, hdr.BlockHash(), "HeaderByHeight(%d): %v", h, err)
		}
		_, err := s.HashByHeight(tipHeight + 1)
		require.ErrorIs(t, err, ErrNotFound, "height %d: %v", tipHeight+1, err)
		require.False(t, s.IsBest(a[9].BlockHash()), "IsBest")
		require.True(t, s.IsBest(b[5].BlockHash()), "IsBest")
		th := s.TipHeader()
		require.Equal(t, tip, th.BlockHash(), "TipHeader")
	}
	checkBest(s, b[5].BlockHash(), 11)
	// ForkPoint: a detached header forks at 5, a best one is itself.
	h, hash, err := s.ForkPoint(a[9].BlockHash())
	require.NoError(t, err, "ForkPoint(old tip) = %d %v", h, hash)
	require.Equal(t, int32(5), h, "ForkPoint(old tip) = %d %v %v", h, hash, err)
	require.Equal(t, fork, hash, "ForkPoint(old tip) = %d %v %v", h, hash, err)
	h, hash, err = s.ForkPoint(b[2].BlockHash())
	require.NoError(t, err, "ForkPoint(best) = %d %v", h, hash)
	require.Equal(t, int32(8), h, "ForkPoint(best) = %d %v %v", h, hash, err)
	require.Equal(t, b[2].BlockHash(), hash, "ForkPoint(best) = %d %v %v", h, hash, err)
	_, _, err = s.ForkPoint(chainhash.Hash{3})
	require.ErrorIs(t, err, ErrNotFound, "ForkPoint(unknown): %v", err)

	// Back to the first branch: it needs two more blocks.
	a2 := mineOn(t, s, a[9].BlockHash(), 2, 600, 3)
	res = mustConnect(t, s, a2)
	require.NotNil(t, res.Reorg, "reorg back: %+v", res.Reorg)
	require.Equal(t, int32(5), res.Reorg.ForkHeight, "reorg back: %+v", res.Reorg)
	require.Len(t, res.Reorg.Detached, 6, "reorg back: %+v", res.Reorg)
	require.Len(t, res.Reorg.Attached, 7, "reorg back: %+v", res.Reorg)
	// And again to b, persisting across a restart.
	mustConnect(t, s, b[6:7])
	b2 := mineOn(t, s, b[6].BlockHash(), 1, 600, 4)
	mustConnect(t, s, b2)
	tipHash, tipHeight := s.Tip()
	work := s.TipWork()
	s.Close()
	s2, err := Open(dir, net, WithClock(fixedClock))
	require.NoError(t, err)
	defer s2.Close()
	h2, ht2 := s2.Tip()
	require.Equal(t, tipHash, h2, "after restart tip %v@%d work %v count %d", h2, ht2, s2.TipWork(), s2.Count())
	require.Equal(t, tipHeight, ht2, "after restart tip %v@%d work %v count %d", h2, ht2, s2.TipWork(), s2.Count())
	require.Equal(t, 0, s2.TipWork().Cmp(work), "after restart tip %v@%d work %v count %d", h2, ht2, s2.TipWork(), s2.Count())
	require.Equal(t, 1+10+7+2+1, s2.Count(), "after restart tip %v@%d work %v count %d", h2, ht2, s2.TipWork(), s2.Count())
	checkBest(s2, tipHash, tipHeight)
	require.NoError(t, s2.Verify())
}

func equalHashes(a, b []chainhash.Hash) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestIdempotent connects overlapping batches.
func TestIdempotent(t *testing.T) {
	s, _ := openTest(t, mustNet(t, "regtest"))
	hs := mineOnTip(t, s, 30, 600, 1)
	res := mustConnect(t, s, hs[:20])
	require.Equal(t, 20, res.Accepted, "%+v", res)
	res = mustConnect(t, s, hs[:20])
	require.Equal(t, 0, res.Accepted, "repeat: %+v", res)
	require.False(t, res.NewTip, "repeat: %+v", res)
	require.Nil(t, res.Reorg, "repeat: %+v", res)
	res = mustConnect(t, s, hs[10:])
	require.Equal(t, 10, res.Accepted, "overlap: %+v", res)
	require.True(t, res.NewTip, "overlap: %+v", res)
	res = mustConnect(t, s, nil)
	require.Equal(t, 0, res.Accepted, "empty: %+v", res)
	require.False(t, res.NewTip, "empty: %+v", res)
	require.Equal(t, 31, s.Count(), "count %d", s.Count())
}

// TestPersistence reopens a store and compares everything.
func TestPersistence(t *testing.T) {
	net := mustNet(t, "simnet")
	s, dir := openTest(t, net)
	hs := mineOnTip(t, s, 250, 600, 1)
	for i := 0; i < len(hs); i += 100 {
		mustConnect(t, s, hs[i:min(i+100, len(hs))])
	}
	side := mineOn(t, s, hs[100].BlockHash(), 3, 600, 2)
	mustConnect(t, s, side)
	loc := s.Locator()
	tip, height := s.Tip()
	require.NoError(t, s.Close())
	err := s.Close()
	require.ErrorIs(t, err, ErrClosed, "second close: %v", err)
	_, err = s.Connect(hs)
	require.ErrorIs(t, err, ErrClosed, "connect after close: %v", err)
	s2, err := Open(dir, net, WithClock(fixedClock))
	require.NoError(t, err)
	defer s2.Close()
	h, ht := s2.Tip()
	require.Equal(t, tip, h, "tip %v@%d count %d", h, ht, s2.Count())
	require.Equal(t, height, ht, "tip %v@%d count %d", h, ht, s2.Count())
	require.Equal(t, 254, s2.Count(), "tip %v@%d count %d", h, ht, s2.Count())
	require.True(t, equalLocators(s2.Locator(), loc), "locator differs")
	for i := range hs {
		got, err := s2.HeaderByHeight(int32(i + 1))
		require.NoError(t, err, "height %d", i+1)
		require.Equal(t, hs[i].BlockHash(), got.BlockHash(), "height %d: %v", i+1, err)
		require.True(t, got.Timestamp.Equal(hs[i].Timestamp), "height %d: %v", i+1, err)
	}
	_, sh, err := s2.HeaderByHash(side[2].BlockHash())
	require.NoError(t, err, "side branch: %d %v", sh, err)
	require.Equal(t, int32(104), sh, "side branch: %d %v", sh, err)
	// It keeps growing after the restart.
	mustConnect(t, s2, mineOnTip(t, s2, 5, 600, 3))
	_, ht = s2.Tip()
	require.Equal(t, int32(255), ht, "tip %d", ht)
}

func equalLocators(a, b blockchain.BlockLocator) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if *a[i] != *b[i] {
			return false
		}
	}
	return true
}

// TestLocator checks the heights a locator names, from the tip and from a
// side branch.
func TestLocator(t *testing.T) {
	s, _ := openTest(t, mustNet(t, "regtest"))
	hs := mineOnTip(t, s, 100, 600, 1)
	mustConnect(t, s, hs)
	want := []int32{100, 99, 98, 97, 96, 95, 94, 93, 92, 91, 90, 89, 87, 83, 75, 59, 27, 0}
	heightsOf := func(loc blockchain.BlockLocator) []int32 {
		var out []int32
		for _, h := range loc {
			ht, err := s.HeightByHash(*h)
			require.NoError(t, err)
			out = append(out, ht)
		}
		return out
	}
	got := heightsOf(s.Locator())
	require.True(t, equalInts(got, want), "locator heights %v, want %v", got, want)
	// A side branch from 50 to 60: its locator follows the branch, then
	// the shared chain.
	side := mineOn(t, s, hs[49].BlockHash(), 10, 600, 2)
	mustConnect(t, s, side)
	loc, err := s.LocatorFrom(side[9].BlockHash())
	require.NoError(t, err)
	require.Equal(t, side[9].BlockHash(), *loc[0], "side locator does not start on the branch")
	require.Equal(t, side[0].BlockHash(), *loc[9], "side locator does not start on the branch")
	got = heightsOf(loc)
	require.True(t, equalInts(got, []int32{60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 47, 43, 35, 19, 0}), "side locator heights %v", got)
	require.True(t, s.IsBest(*loc[10]), "side locator crosses to the best chain at the fork")
	require.False(t, s.IsBest(*loc[9]), "side locator crosses to the best chain at the fork")
	_, err = s.LocatorFrom(chainhash.Hash{9})
	require.ErrorIs(t, err, ErrNotFound, "unknown: %v", err)
}

func equalInts(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestNotFound covers the getters' misses.
func TestNotFound(t *testing.T) {
	s, _ := openTest(t, mustNet(t, "regtest"))
	_, err := s.HeaderByHeight(1)
	require.ErrorIs(t, err, ErrNotFound, err)
	_, err = s.HeaderByHeight(-1)
	require.ErrorIs(t, err, ErrNotFound, err)
	_, _, err = s.HeaderByHash(chainhash.Hash{1})
	require.ErrorIs(t, err, ErrNotFound, err)
	_, err = s.HeightByHash(chainhash.Hash{1})
	require.ErrorIs(t, err, ErrNotFound, err)
	require.False(t, s.IsBest(chainhash.Hash{1}), "IsBest of unknown")
	g := s.TipHeader()
	require.Equal(t, *chaincfg.RegressionNetParams.GenesisHash, g.BlockHash(), "fresh store's tip is not genesis")
	require.Equal(t, 0, s.TipWork().Cmp(blockchain.CalcWork(0x207fffff)), "genesis work %v", s.TipWork())
}

// TestTornTail simulates crashes during an append.
func TestTornTail(t *testing.T) {
	net := mustNet(t, "regtest")
	for _, tc := range []struct {
		name string
		tear func(t *testing.T, path string)
	}{
		{"partial record", func(t *testing.T, path string) {
			appendBytes(t, path, make([]byte, 50))
		}},
		{"one byte", func(t *testing.T, path string) {
			appendBytes(t, path, []byte{1})
		}},
		{"full-length zero record", func(t *testing.T, path string) {
			appendBytes(t, path, make([]byte, recordLen))
		}},
		{"last record's checksum", func(t *testing.T, path string) {
			flipByte(t, path, -2)
		}},
		{"three zero records and a partial one", func(t *testing.T, path string) {
			appendBytes(t, path, make([]byte, 3*recordLen+17))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := Open(dir, net, WithClock(fixedClock))
			require.NoError(t, err)
			hs := mineOnTip(t, s, 20, 600, 1)
			mustConnect(t, s, hs)
			s.Close()
			path := filepath.Join(dir, FileName)
			tc.tear(t, path)

			var hooked []Repair
			s2, err := Open(dir, net, WithClock(fixedClock), WithRepairHook(func(r Repair) { hooked = append(hooked, r) }))
			require.NoError(t, err)
			defer s2.Close()
			require.NotEqual(t, 0, len(hooked), "repairs %v", hooked)
			require.Len(t, s2.Repairs(), len(hooked), "repairs %v", hooked)
			want := 21
			if tc.name == "last record's checksum" {
				want = 20 // the damaged record itself is dropped
			}
			require.Equal(t, want, s2.Count(), "count %d, want %d", s2.Count(), want)
			st, _ := os.Stat(path)
			require.Equal(t, recordOffset(int32(want)), st.Size(), "size %d", st.Size())
			// The store works: reconnecting the chain restores it.
			mustConnect(t, s2, hs)
			_, h := s2.Tip()
			require.Equal(t, int32(20), h, "tip %d", h)
			t.Log(hooked[0])
		})
	}
}

func appendBytes(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.Write(b)
	require.NoError(t, err)
}

// flipByte flips a byte at off (negative: from the end).
func flipByte(t *testing.T, path string, off int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	if off < 0 {
		off += int64(len(b))
	}
	b[off] ^= 0x55
	require.NoError(t, os.WriteFile(path, b, 0o600))
}

// TestCorrupt checks that damaged or foreign files are refused with
// ErrCorrupt and left alone.
func TestCorrupt(t *testing.T) {
	net := mustNet(t, "regtest")
	build := func(t *testing.T) (string, []wire.BlockHeader) {
		dir := t.TempDir()
		s, err := Open(dir, net, WithClock(fixedClock))
		require.NoError(t, err)
		hs := mineOnTip(t, s, 10, 600, 1)
		mustConnect(t, s, hs)
		s.Close()
		return dir, hs
	}
	tests := []struct {
		name      string
		damage    func(t *testing.T, path string, hs []wire.BlockHeader)
		open      *netparams.Network
		wrongNet  bool
		wantRepOK bool
	}{
		{"garbage", func(t *testing.T, path string, _ []wire.BlockHeader) {
			os.WriteFile(path, []byte("this is not a header file, it is a text file of some length...................................................................................................."), 0o600)
		}, net, false, false},
		{"empty", func(t *testing.T, path string, _ []wire.BlockHeader) {
			os.WriteFile(path, nil, 0o600)
		}, net, false, false},
		{"bad version", func(t *testing.T, path string, _ []wire.BlockHeader) {
			flipByte(t, path, 8)
		}, net, false, false},
		{"middle record checksum", func(t *testing.T, path string, _ []wire.BlockHeader) {
			flipByte(t, path, recordOffset(5)+40)
		}, net, false, false},
		{"middle record rewritten with a valid checksum", func(t *testing.T, path string, hs []wire.BlockHeader) {
			// Swap records 3 and 4: each still has a good CRC
			// but record 3 now precedes its parent.
			b, _ := os.ReadFile(path)
			r3 := append([]byte(nil), b[recordOffset(3):recordOffset(4)]...)
			copy(b[recordOffset(3):], b[recordOffset(4):recordOffset(5)])
			copy(b[recordOffset(4):], r3)
			os.WriteFile(path, b, 0o600)
		}, net, false, false},
		{"record failing proof of work", func(t *testing.T, path string, hs []wire.BlockHeader) {
			b, _ := os.ReadFile(path)
			h := hs[9]
			unsolve(&h)
			rec := putRecord(nil, &h)
			copy(b[recordOffset(10):], rec)
			os.WriteFile(path, b, 0o600)
		}, net, false, false},
		{"duplicate record", func(t *testing.T, path string, hs []wire.BlockHeader) {
			appendBytes(t, path, putRecord(nil, &hs[3]))
		}, net, false, false},
		{"other network", func(t *testing.T, path string, _ []wire.BlockHeader) {}, mustNet(t, "simnet"), true, false},
		{"other genesis, same magic", func(t *testing.T, path string, _ []wire.BlockHeader) {},
			easyNet("regtest-like", netparams.RulesRegtest, 2016, false, chaincfg.RegressionNetParams.Net, nil), true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, hs := build(t)
			path := filepath.Join(dir, FileName)
			tc.damage(t, path, hs)
			if tc.name == "other genesis, same magic" {
				// Same magic, another genesis.
				tc.open.Params.GenesisHash = &chainhash.Hash{7}
			}
			before, _ := os.ReadFile(path)
			_, err := Open(dir, tc.open, WithClock(fixedClock))
			require.ErrorIs(t, err, ErrCorrupt, "error %v, want ErrCorrupt", err)
			var ce *CorruptError
			require.ErrorAs(t, err, &ce, "error %T %v", err, err)
			require.Equal(t, path, ce.Path, "error %T %v", err, err)
			require.Equal(t, tc.wrongNet, errors.Is(err, ErrWrongNetwork), "wrong network %v for %v", !tc.wrongNet, err)
			after, _ := os.ReadFile(path)
			require.Equal(t, string(before), string(after), "a corrupt file was modified")
			// The lock was released: Remove works, and a fresh
			// Open in the same dir starts over.
			require.NoError(t, Remove(dir))
			_, err = os.Stat(path)
			require.ErrorIs(t, err, os.ErrNotExist, "file still there: %v", err)
			s, err := Open(dir, mustNet(t, "regtest"), WithClock(fixedClock))
			require.NoError(t, err, "after delete")
			s.Close()
		})
	}
}

// TestLocked opens the same directory twice.
func TestLocked(t *testing.T) {
	s, dir := openTest(t, mustNet(t, "regtest"))
	_, err := Open(dir, mustNet(t, "regtest"))
	require.ErrorIs(t, err, ErrLocked, "second open: %v", err)
	err = Remove(dir)
	require.ErrorIs(t, err, ErrLocked, "Remove of an open store: %v", err)
	s.Close()
	s2, err := Open(dir, mustNet(t, "regtest"))
	require.NoError(t, err, "open after close")
	s2.Close()
}

// TestConcurrentReaders reads while a writer connects and reorganizes
// (run with -race).
func TestConcurrentReaders(t *testing.T) {
	s, _ := openTest(t, mustNet(t, "regtest"))
	main := mineOnTip(t, s, 300, 600, 1)
	done := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				hash, height := s.Tip()
				_ = s.TipHeader()
				_ = s.TipWork()
				_ = s.Locator()
				_ = s.Count()
				// The tip can move between calls, but a
				// height that existed stays readable.
				if _, err := s.HeaderByHeight(height); err != nil && !errors.Is(err, ErrNotFound) {
					errs <- err
					return
				}
				if _, _, err := s.HeaderByHash(hash); err != nil {
					errs <- err
					return
				}
				s.IsBest(hash)
			}
		}()
	}
	for i := 0; i < len(main); i += 25 {
		mustConnect(t, s, main[i:i+25])
		if i%100 == 0 && i > 0 {
			// A competing branch that wins briefly.
			side := mineOn(t, s, main[i-10].BlockHash(), 12, 600, uint32(i))
			mustConnect(t, s, side)
		}
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	_, h := s.Tip()
	require.Equal(t, int32(300), h, "tip %d", h)
}

// TestFull lowers the capacity and fills the store.
func TestFull(t *testing.T) {
	defer func(old int) { maxNodes = old }(maxNodes)
	maxNodes = 25
	s, dir := openTest(t, mustNet(t, "regtest"))
	hs := mineOnTip(t, s, 30, 600, 1)
	res, err := s.Connect(hs)
	require.ErrorIs(t, err, ErrFull, "%+v %v count %d", res, err, s.Count())
	require.Equal(t, 24, res.Accepted, "%+v %v count %d", res, err, s.Count())
	require.Equal(t, 25, s.Count(), "%+v %v count %d", res, err, s.Count())
	_, h := s.Tip()
	require.Equal(t, int32(24), h, "tip %d", h)
	s.Close()
	maxNodes = 20
	_, err = Open(dir, mustNet(t, "regtest"))
	require.ErrorIs(t, err, ErrCorrupt, "open of an over-full file: %v", err)
}

// TestWriteFailureRollsBack makes the append fail (the file is closed
// behind the store's back) and checks that the batch left no trace in
// memory.
func TestWriteFailureRollsBack(t *testing.T) {
	s, _ := openTest(t, mustNet(t, "regtest"))
	hs := mineOnTip(t, s, 40, 600, 1)
	mustConnect(t, s, hs[:20])
	tip, height := s.Tip()
	work := s.TipWork()
	loc := s.Locator()

	s.mu.Lock()
	s.f.Close()
	s.mu.Unlock()
	res, err := s.Connect(hs[20:])
	require.Error(t, err, "connect on a closed file: %v", err)
	require.NotErrorIs(t, err, ErrCorrupt, "connect on a closed file: %v", err)
	var verr *ValidationError
	require.False(t, errors.As(err, &verr), "%+v %v", res, err)
	require.Equal(t, 0, res.Accepted, "%+v %v", res, err)
	require.False(t, res.NewTip, "%+v %v", res, err)
	h, ht := s.Tip()
	require.Equal(t, tip, h, "tip %v@%d count %d after a failed write", h, ht, s.Count())
	require.Equal(t, height, ht, "tip %v@%d count %d after a failed write", h, ht, s.Count())
	require.Equal(t, 0, s.TipWork().Cmp(work), "tip %v@%d count %d after a failed write", h, ht, s.Count())
	require.Equal(t, 21, s.Count(), "tip %v@%d count %d after a failed write", h, ht, s.Count())
	require.True(t, equalLocators(s.Locator(), loc), "locator changed")
	for _, h := range hs[20:] {
		_, err := s.HeightByHash(h.BlockHash())
		require.ErrorIs(t, err, ErrNotFound, "header of the failed batch is indexed: %v", err)
	}
	for _, h := range hs[:20] {
		_, err := s.HeightByHash(h.BlockHash())
		require.NoError(t, err, "earlier header lost from the index")
	}
}

// TestVerify re-validates stores with side branches on several rule
// families, then a file whose tip record was replaced by a header with
// valid proof of work and checksum but bits the rules forbid: Open accepts
// it (it checks links, checksums and proof of work) and Verify does not.
func TestVerify(t *testing.T) {
	for _, net := range []*netparams.Network{
		mustNet(t, "regtest"), mustNet(t, "simnet"),
		easyNet("v-mindiff", netparams.RulesTestnet3, 8, true, 0x7e570008, nil),
		easyNet("v-bip94", netparams.RulesTestnet4, 8, true, 0x7e570009, nil),
	} {
		s, dir := openTest(t, net)
		mustConnect(t, s, mineOnTip(t, s, 30, 200, 1))
		mustConnect(t, s, mineOnTip(t, s, 10, 1500, 2))
		h10, _ := s.HashByHeight(10)
		mustConnect(t, s, mineOn(t, s, h10, 12, 100, 3))
		require.NoError(t, s.Verify(), "%s", net.Name)
		// Replace the last record with a sibling carrying other
		// (solved) bits.
		s.mu.RLock()
		last := int32(s.nodes.len() - 1)
		s.mu.RUnlock()
		hdr, _, err := s.HeaderByHash(s.nodes.at(last).hash)
		require.NoError(t, err)
		s.Close()
		hdr.Bits--
		solve(&hdr)
		b, _ := os.ReadFile(filepath.Join(dir, FileName))
		copy(b[recordOffset(last):], putRecord(nil, &hdr))
		os.WriteFile(filepath.Join(dir, FileName), b, 0o600)
		s2, err := Open(dir, net, WithClock(fixedClock))
		require.NoError(t, err, "%s: open", net.Name)
		err = s2.Verify()
		require.ErrorIs(t, err, ErrCorrupt, "%s: Verify: %v", net.Name, err)
		require.ErrorIs(t, err, ErrBadBits, "%s: Verify: %v", net.Name, err)
		s2.Close()
	}
}

// TestReadersDuringFsync holds a batch's fsync and checks that readers are
// not blocked meanwhile, see the batch's headers by hash but not on the best
// chain, and that a failed fsync takes the batch back out.
func TestReadersDuringFsync(t *testing.T) {
	for _, fail := range []bool{false, true} {
		s, _ := openTest(t, mustNet(t, "regtest"))
		entered, release := make(chan struct{}), make(chan struct{})
		s.mu.Lock()
		s.sync = func(f *os.File) error {
			close(entered)
			select {
			case <-release:
			case <-time.After(time.Minute):
				return errors.New("the test never released the fsync")
			}
			if fail {
				return errors.New("injected fsync failure")
			}
			return f.Sync()
		}
		s.mu.Unlock()
		hs := mineOnTip(t, s, 10, 600, 1)
		type result struct {
			res ConnectResult
			err error
		}
		done := make(chan result, 1)
		go func() {
			res, err := s.Connect(hs)
			done <- result{res, err}
		}()
		select {
		case <-entered:
		case <-time.After(30 * time.Second):
			require.FailNow(t, "the batch's fsync never began")
		}

		read := make(chan error, 1)
		go func() {
			if _, h := s.Tip(); h != 0 {
				read <- fmt.Errorf("tip %d before the batch is durable", h)
				return
			}
			if hdr, h, err := s.HeaderByHash(hs[5].BlockHash()); err != nil || h != 6 || hdr.BlockHash() != hs[5].BlockHash() {
				read <- fmt.Errorf("pending header: %d %v", h, err)
				return
			}
			if s.IsBest(hs[5].BlockHash()) || s.Count() != 11 {
				read <- fmt.Errorf("IsBest %v count %d", s.IsBest(hs[5].BlockHash()), s.Count())
				return
			}
			read <- nil
		}()
		select {
		case err := <-read:
			require.NoError(t, err)
		case <-time.After(10 * time.Second):
			require.FailNow(t, "readers blocked by a batch's fsync")
		}
		close(release)
		var r result
		select {
		case r = <-done:
		case <-time.After(30 * time.Second):
			require.FailNow(t, "Connect did not return after its fsync was released")
		}
		_, h := s.Tip()
		if fail {
			require.Error(t, r.err, "failed fsync: %+v %v tip %d count %d", r.res, r.err, h, s.Count())
			require.Equal(t, 0, r.res.Accepted, "failed fsync: %+v %v tip %d count %d", r.res, r.err, h, s.Count())
			require.Equal(t, int32(0), h, "failed fsync: %+v %v tip %d count %d", r.res, r.err, h, s.Count())
			require.Equal(t, 1, s.Count(), "failed fsync: %+v %v tip %d count %d", r.res, r.err, h, s.Count())
			_, err := s.HeightByHash(hs[5].BlockHash())
			require.ErrorIs(t, err, ErrNotFound, "batch still indexed: %v", err)
			continue
		}
		require.NoError(t, r.err, "%+v %v tip %d", r.res, r.err, h)
		require.Equal(t, 10, r.res.Accepted, "%+v %v tip %d", r.res, r.err, h)
		require.Equal(t, int32(10), h, "%+v %v tip %d", r.res, r.err, h)
	}
}

// TestConnectMixedBatch sends batches that leave Connect's in-order path
// (a header extending the newest stored one needs no lookup; the others are
// looked up, with the nodes of the batch so far indexed first): a batch of
// 140 headers followed, in the same batch, by a repeat of one of them, a
// branch from one of them, a branch from a header stored before, and a
// repeat of the last; then the same batch after a failed fsync rolled it
// back. The store must end as a reference store fed one branch a batch.
func TestConnectMixedBatch(t *testing.T) {
	net := mustNet(t, "regtest")
	ref, _ := openTest(t, net)
	a := mineOnTip(t, ref, 150, 600, 1)
	mustConnect(t, ref, a)
	c := mineOn(t, ref, a[100].BlockHash(), 5, 600, 2) // from inside the batch
	bb := mineOn(t, ref, a[9].BlockHash(), 5, 600, 3)  // from before the batch
	mustConnect(t, ref, c)
	mustConnect(t, ref, bb)

	batch := append([]wire.BlockHeader(nil), a[10:]...)
	batch = append(batch, a[40])
	batch = append(batch, c...)
	batch = append(batch, bb...)
	batch = append(batch, a[149])
	want := len(a) - 10 + len(c) + len(bb)

	s, _ := openTest(t, net)
	mustConnect(t, s, a[:10])
	fail := errors.New("injected fsync failure")
	s.sync = func(*os.File) error { return fail }
	res, err := s.Connect(batch)
	require.ErrorIs(t, err, fail, "failed fsync: %+v %v", res, err)
	require.Equal(t, 0, res.Accepted, "failed fsync: %+v %v", res, err)
	require.Equal(t, 11, s.Count(), "after rollback: count %d, indexed %d", s.Count(), s.index.count)
	require.Equal(t, 11, s.index.count, "after rollback: count %d, indexed %d", s.Count(), s.index.count)
	s.sync = (*os.File).Sync
	res, err = s.Connect(batch)
	require.NoError(t, err, "%+v %v, want %d accepted", res, err, want)
	require.Equal(t, want, res.Accepted, "%+v %v, want %d accepted", res, err, want)
	require.True(t, res.NewTip, "%+v %v, want %d accepted", res, err, want)
	require.Nil(t, res.Reorg, "%+v %v, want %d accepted", res, err, want)
	require.Equal(t, ref.Count(), s.Count(), "count %d (indexed %d), reference %d", s.Count(), s.index.count, ref.Count())
	require.Equal(t, s.Count(), s.index.count, "count %d (indexed %d), reference %d", s.Count(), s.index.count, ref.Count())
	rt, rh := ref.Tip()
	tip, h := s.Tip()
	require.Equal(t, rt, tip, "tip %v@%d, reference %v@%d", tip, h, rt, rh)
	require.Equal(t, rh, h, "tip %v@%d, reference %v@%d", tip, h, rt, rh)
	require.Equal(t, 0, s.TipWork().Cmp(ref.TipWork()), "tip %v@%d, reference %v@%d", tip, h, rt, rh)
	for _, hs := range [][]wire.BlockHeader{a, c, bb} {
		for _, hdr := range hs {
			hash := hdr.BlockHash()
			h, err := s.HeightByHash(hash)
			wh, _ := ref.HeightByHash(hash)
			require.NoError(t, err, "%v: height %d %v best %v, reference %d %v", hash, h, err, s.IsBest(hash), wh, ref.IsBest(hash))
			require.Equal(t, wh, h, "%v: height %d %v best %v, reference %d %v", hash, h, err, s.IsBest(hash), wh, ref.IsBest(hash))
			require.Equal(t, ref.IsBest(hash), s.IsBest(hash), "%v: height %d %v best %v, reference %d %v", hash, h, err, s.IsBest(hash), wh, ref.IsBest(hash))
		}
	}
	require.NoError(t, s.Verify())
}
