package headers

import (
	"bytes"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

func TestSideBranchMargin(t *testing.T) {
	// Regtest never retargets: every block has the same work, so a margin
	// of 5 blocks admits branches forking at most 5 blocks below the tip.
	s, _ := openTest(t, mustNet(t, "regtest"), WithSideBranchLimits(5, 0))
	mustConnect(t, s, mineOnTip(t, s, 30, 600, 1))
	deep, _ := s.HashByHeight(10)
	_, err := s.Connect(mineOn(t, s, deep, 3, 600, 2))
	require.ErrorIs(t, err, ErrLowWorkBranch, "a branch forking 20 blocks down: %v, want ErrLowWorkBranch", err)
	require.Equal(t, 31, s.Count(), "count %d: a refused header was stored", s.Count())
	near, _ := s.HashByHeight(27)
	mustConnect(t, s, mineOn(t, s, near, 3, 600, 3))
	require.Equal(t, 34, s.Count(), "count %d: the near branch was not stored", s.Count())
	// The near branch overtakes when it gets longer: fork choice is
	// untouched by the bound.
	tipBefore, _ := s.Tip()
	branchTip := mineOn(t, s, near, 3, 600, 3)[2].BlockHash()
	more := mineOn(t, s, branchTip, 2, 600, 3)
	res := mustConnect(t, s, more)
	tip, h := s.Tip()
	require.NotEqual(t, tipBefore, tip, "the longer near branch did not win: tip %v at %d, reorg %+v", tip, h, res.Reorg)
	require.Equal(t, int32(32), h, "the longer near branch did not win: tip %v at %d, reorg %+v", tip, h, res.Reorg)
	require.NotNil(t, res.Reorg, "the longer near branch did not win: tip %v at %d, reorg %+v", tip, h, res.Reorg)
	// And the best chain still extends after a refusal.
	mustConnect(t, s, mineOnTip(t, s, 2, 600, 3))
}

// TestSideBranchEviction fills the side-branch bound and checks that it
// evicts the branches with the least work (leaf first, the newest among
// equals) instead of refusing headers, keeps the side branch with the most
// work, always takes the branch that becomes the best chain (a reorg that
// arrives when the bound is full), never evicts the old best chain of a
// reorg, and that the file holds exactly what memory holds after each
// eviction (a reopen finds the same headers). Before eviction the second
// branch was refused with "too many side-branch headers", and so was the
// honest reorg, also after a restart.
func TestSideBranchEviction(t *testing.T) {
	net := mustNet(t, "regtest")
	const bound = 8 // eviction leaves 7
	s, dir := openTest(t, net, WithSideBranchLimits(0, bound))
	mustConnect(t, s, mineOnTip(t, s, 30, 600, 1))
	at := func(h int32) chainhash.Hash {
		hash, err := s.HashByHeight(h)
		require.NoError(t, err)
		return hash
	}
	stored := func(hs []wire.BlockHeader) (n int) {
		for _, h := range hs {
			if _, err := s.HeightByHash(h.BlockHash()); err == nil {
				n++
			}
		}
		return n
	}
	checkFile := func(what string) {
		t.Helper()
		st, err := os.Stat(filepath.Join(dir, FileName))
		require.NoError(t, err)
		want := recordOffset(int32(s.Count()))
		require.Equal(t, want, st.Size(), "%s: file of %d bytes for %d headers (want %d)", what, st.Size(), s.Count(), want)
		require.NoError(t, s.Verify(), "%s", what)
	}

	// A: 8 headers from height 20 (ends at 28): the bound, not above it.
	a := mineOn(t, s, at(20), 8, 600, 2)
	res := mustConnect(t, s, a)
	require.Equal(t, 0, res.Evicted, "A: %+v, %d side headers", res, s.SideHeaders())
	require.Equal(t, 8, s.SideHeaders(), "A: %+v, %d side headers", res, s.SideHeaders())
	// B: 4 from 25 (ends at 29, more work than A): 12 side headers, down
	// to 7 by evicting A's top five.
	b := mineOn(t, s, at(25), 4, 600, 3)
	res = mustConnect(t, s, b)
	require.Equal(t, 5, res.Evicted, "B: %+v; side %d, A stored %d, B stored %d", res, s.SideHeaders(), stored(a), stored(b))
	require.Equal(t, 4, res.Accepted, "B: %+v; side %d, A stored %d, B stored %d", res, s.SideHeaders(), stored(a), stored(b))
	require.Equal(t, 7, s.SideHeaders(), "B: %+v; side %d, A stored %d, B stored %d", res, s.SideHeaders(), stored(a), stored(b))
	require.Equal(t, 3, stored(a), "B: %+v; side %d, A stored %d, B stored %d", res, s.SideHeaders(), stored(a), stored(b))
	require.Equal(t, 4, stored(b), "B: %+v; side %d, A stored %d, B stored %d", res, s.SideHeaders(), stored(a), stored(b))
	_, err := s.HeightByHash(a[2].BlockHash())
	require.NoError(t, err, "A was not evicted from its tip down")
	checkFile("after B")
	// C: 4 from 26, as much work as the best chain: the rest of A goes,
	// then B's tip (less work than C's).
	c := mineOn(t, s, at(26), 4, 600, 4)
	res = mustConnect(t, s, c)
	require.Equal(t, 4, res.Evicted, "C: %+v; A %d, B %d, C %d stored", res, stored(a), stored(b), stored(c))
	require.Equal(t, 0, stored(a), "C: %+v; A %d, B %d, C %d stored", res, stored(a), stored(b), stored(c))
	require.Equal(t, 3, stored(b), "C: %+v; A %d, B %d, C %d stored", res, stored(a), stored(b), stored(c))
	require.Equal(t, 4, stored(c), "C: %+v; A %d, B %d, C %d stored", res, stored(a), stored(b), stored(c))
	tip30 := at(30)
	// The honest reorg: 4 from 27 (ends at 31), with the bound full. The
	// old best chain's 28-30 turn into side headers; B goes instead.
	r := mineOn(t, s, at(27), 4, 600, 5)
	res = mustConnect(t, s, r)
	require.NotNil(t, res.Reorg, "the reorg: %+v (reorg %+v)", res, res.Reorg)
	require.Len(t, res.Reorg.Detached, 3, "the reorg: %+v (reorg %+v)", res, res.Reorg)
	require.Len(t, res.Reorg.Attached, 4, "the reorg: %+v (reorg %+v)", res, res.Reorg)
	require.Equal(t, tip30, res.Reorg.Detached[0], "the reorg: %+v (reorg %+v)", res, res.Reorg)
	tip, h := s.Tip()
	require.Equal(t, r[3].BlockHash(), tip, "tip %v at %d, want the reorg's", tip, h)
	require.Equal(t, int32(31), h, "tip %v at %d, want the reorg's", tip, h)
	require.Equal(t, 3, res.Evicted, "reorg: %+v; B %d, C %d stored", res, stored(b), stored(c))
	require.Equal(t, 0, stored(b), "reorg: %+v; B %d, C %d stored", res, stored(b), stored(c))
	require.Equal(t, 4, stored(c), "reorg: %+v; B %d, C %d stored", res, stored(b), stored(c))
	require.True(t, s.IsBest(r[0].BlockHash()), "reorg: %+v; B %d, C %d stored", res, stored(b), stored(c))
	_, err = s.HeightByHash(tip30)
	require.NoError(t, err, "the old tip was evicted")
	checkFile("after the reorg")
	// D: 2 headers from 22, less work than any stored side branch: evicted
	// at once (Dropped), the others stay.
	d := mineOn(t, s, at(22), 2, 600, 6)
	res = mustConnect(t, s, d)
	require.Equal(t, 0, res.Accepted, "D: %+v; D %d, C %d stored, %d side", res, stored(d), stored(c), s.SideHeaders())
	require.Equal(t, 2, res.Dropped, "D: %+v; D %d, C %d stored, %d side", res, stored(d), stored(c), s.SideHeaders())
	require.Equal(t, 2, res.Evicted, "D: %+v; D %d, C %d stored, %d side", res, stored(d), stored(c), s.SideHeaders())
	require.Equal(t, 0, stored(d), "D: %+v; D %d, C %d stored, %d side", res, stored(d), stored(c), s.SideHeaders())
	require.Equal(t, 4, stored(c), "D: %+v; D %d, C %d stored, %d side", res, stored(d), stored(c), s.SideHeaders())
	require.Equal(t, 7, s.SideHeaders(), "D: %+v; D %d, C %d stored, %d side", res, stored(d), stored(c), s.SideHeaders())
	checkFile("after D")
	// A restart finds exactly the same headers, and the best chain still
	// extends.
	count, side := s.Count(), s.SideHeaders()
	require.NoError(t, s.Close())
	s2, err := Open(dir, net, WithClock(fixedClock), WithSideBranchLimits(0, bound))
	require.NoError(t, err)
	defer s2.Close()
	require.Equal(t, count, s2.Count(), "reopened: %d headers, %d side, repairs %v; want %d, %d", s2.Count(), s2.SideHeaders(), s2.Repairs(), count, side)
	require.Equal(t, side, s2.SideHeaders(), "reopened: %d headers, %d side, repairs %v; want %d, %d", s2.Count(), s2.SideHeaders(), s2.Repairs(), count, side)
	require.Len(t, s2.Repairs(), 0, "reopened: %d headers, %d side, repairs %v; want %d, %d", s2.Count(), s2.SideHeaders(), s2.Repairs(), count, side)
	tip, _ = s2.Tip()
	require.Equal(t, r[3].BlockHash(), tip, "reopened tip %v", tip)
	mustConnect(t, s2, mineOnTip(t, s2, 2, 600, 1))
}

// TestSideBranchBoundAtOpen opens a store whose file holds more side-branch
// headers than the bound (written with a higher one): Open evicts the
// least-work ones, rewrites the file and reports it as a repair.
func TestSideBranchBoundAtOpen(t *testing.T) {
	net := mustNet(t, "regtest")
	s, dir := openTest(t, net)
	mustConnect(t, s, mineOnTip(t, s, 20, 600, 1))
	low, _ := s.HashByHeight(10)
	high, _ := s.HashByHeight(15)
	lowBranch := mineOn(t, s, low, 4, 600, 2)
	highBranch := mineOn(t, s, high, 4, 600, 3)
	mustConnect(t, s, lowBranch)
	mustConnect(t, s, highBranch)
	require.NoError(t, s.Close())
	var repairs []Repair
	s2, err := Open(dir, net, WithClock(fixedClock), WithSideBranchLimits(0, 5),
		WithRepairHook(func(r Repair) { repairs = append(repairs, r) }))
	require.NoError(t, err)
	defer s2.Close()
	require.Equal(t, 5, s2.SideHeaders(), "%d side headers of %d, repairs %+v", s2.SideHeaders(), s2.Count(), repairs)
	require.Equal(t, 21+5, s2.Count(), "%d side headers of %d, repairs %+v", s2.SideHeaders(), s2.Count(), repairs)
	require.Len(t, repairs, 1, "%d side headers of %d, repairs %+v", s2.SideHeaders(), s2.Count(), repairs)
	require.Equal(t, 3, repairs[0].Dropped, "%d side headers of %d, repairs %+v", s2.SideHeaders(), s2.Count(), repairs)
	for _, h := range highBranch {
		_, err := s2.HeightByHash(h.BlockHash())
		require.NoError(t, err, "the branch with more work lost %v", h.BlockHash())
	}
	require.NoError(t, s2.Verify())
}

// TestSideBranchEvictionWriteFails fails the fsync of the rewritten file:
// the batch is dropped and the store is exactly as before it, in memory and
// on disk.
func TestSideBranchEvictionWriteFails(t *testing.T) {
	net := mustNet(t, "regtest")
	s, dir := openTest(t, net, WithSideBranchLimits(0, 4))
	mustConnect(t, s, mineOnTip(t, s, 20, 600, 1))
	h10, _ := s.HashByHeight(10)
	h15, _ := s.HashByHeight(15)
	mustConnect(t, s, mineOn(t, s, h10, 4, 600, 2))
	before, err := os.ReadFile(filepath.Join(dir, FileName))
	require.NoError(t, err)
	fail := errors.New("injected fsync failure")
	s.sync = func(*os.File) error { return fail }
	batch := mineOn(t, s, h15, 4, 600, 3)
	res, err := s.Connect(batch)
	require.ErrorIs(t, err, fail, "failed rewrite: %+v %v", res, err)
	require.Equal(t, 0, res.Accepted, "failed rewrite: %+v %v", res, err)
	after, err := os.ReadFile(filepath.Join(dir, FileName))
	require.NoError(t, err)
	require.Equal(t, after, before, "after the failure: file changed %v, count %d, indexed %d", !bytes.Equal(before, after), s.Count(), s.index.count)
	require.Equal(t, 25, s.Count(), "after the failure: file changed %v, count %d, indexed %d", !bytes.Equal(before, after), s.Count(), s.index.count)
	require.Equal(t, 25, s.index.count, "after the failure: file changed %v, count %d, indexed %d", !bytes.Equal(before, after), s.Count(), s.index.count)
	_, err = os.Stat(filepath.Join(dir, FileName+".tmp"))
	require.ErrorIs(t, err, os.ErrNotExist, "temporary file left: %v", err)
	s.sync = (*os.File).Sync
	res = mustConnect(t, s, batch)
	require.NotEqual(t, 0, res.Evicted, "no eviction: %+v", res)
	require.NoError(t, s.Verify())
}

func TestSideBranchBelowMinimumChainWork(t *testing.T) {
	net := *mustNet(t, "regtest")
	s, _ := openTest(t, &net, WithSideBranchLimits(1000, 0))
	hs := mineOnTip(t, s, 30, 600, 1)
	// Before the best chain has the minimum work, any branch may be the
	// honest one: a side branch from genesis is stored.
	net.MinChainWork = big.NewInt(0).Mul(s.rules.info(hs[0].Bits).work.big(), big.NewInt(25))
	mustConnect(t, s, hs[:20])
	genesis := *net.Params.GenesisHash
	mustConnect(t, s, mineOn(t, s, genesis, 2, 600, 2))
	// Once it has, a side branch below the minimum is refused; one above
	// it is stored.
	mustConnect(t, s, hs[20:])
	low, _ := s.HashByHeight(5)
	_, err := s.Connect(mineOn(t, s, low, 2, 600, 3))
	require.ErrorIs(t, err, ErrLowWorkBranch, "a side branch below the minimum chain work: %v", err)
	high, _ := s.HashByHeight(26)
	mustConnect(t, s, mineOn(t, s, high, 2, 600, 4))
}
