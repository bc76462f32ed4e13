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
)

func TestSideBranchMargin(t *testing.T) {
	// Regtest never retargets: every block has the same work, so a margin
	// of 5 blocks admits branches forking at most 5 blocks below the tip.
	s, _ := openTest(t, mustNet(t, "regtest"), WithSideBranchLimits(5, 0))
	mustConnect(t, s, mineOnTip(t, s, 30, 600, 1))
	deep, _ := s.HashByHeight(10)
	_, err := s.Connect(mineOn(t, s, deep, 3, 600, 2))
	if !errors.Is(err, ErrLowWorkBranch) {
		t.Fatalf("a branch forking 20 blocks down: %v, want ErrLowWorkBranch", err)
	}
	if s.Count() != 31 {
		t.Fatalf("count %d: a refused header was stored", s.Count())
	}
	near, _ := s.HashByHeight(27)
	mustConnect(t, s, mineOn(t, s, near, 3, 600, 3))
	if s.Count() != 34 {
		t.Fatalf("count %d: the near branch was not stored", s.Count())
	}
	// The near branch overtakes when it gets longer: fork choice is
	// untouched by the bound.
	tipBefore, _ := s.Tip()
	branchTip := mineOn(t, s, near, 3, 600, 3)[2].BlockHash()
	more := mineOn(t, s, branchTip, 2, 600, 3)
	res := mustConnect(t, s, more)
	if tip, h := s.Tip(); tip == tipBefore || h != 32 || res.Reorg == nil {
		t.Fatalf("the longer near branch did not win: tip %v at %d, reorg %+v", tip, h, res.Reorg)
	}
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
		if err != nil {
			t.Fatal(err)
		}
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
		if err != nil {
			t.Fatal(err)
		}
		if want := recordOffset(int32(s.Count())); st.Size() != want {
			t.Fatalf("%s: file of %d bytes for %d headers (want %d)", what, st.Size(), s.Count(), want)
		}
		if err := s.Verify(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}

	// A: 8 headers from height 20 (ends at 28): the bound, not above it.
	a := mineOn(t, s, at(20), 8, 600, 2)
	if res := mustConnect(t, s, a); res.Evicted != 0 || s.SideHeaders() != 8 {
		t.Fatalf("A: %+v, %d side headers", res, s.SideHeaders())
	}
	// B: 4 from 25 (ends at 29, more work than A): 12 side headers, down
	// to 7 by evicting A's top five.
	b := mineOn(t, s, at(25), 4, 600, 3)
	res := mustConnect(t, s, b)
	if res.Evicted != 5 || res.Accepted != 4 || s.SideHeaders() != 7 || stored(a) != 3 || stored(b) != 4 {
		t.Fatalf("B: %+v; side %d, A stored %d, B stored %d", res, s.SideHeaders(), stored(a), stored(b))
	}
	if _, err := s.HeightByHash(a[2].BlockHash()); err != nil {
		t.Fatalf("A was not evicted from its tip down: %v", err)
	}
	checkFile("after B")
	// C: 4 from 26, as much work as the best chain: the rest of A goes,
	// then B's tip (less work than C's).
	c := mineOn(t, s, at(26), 4, 600, 4)
	res = mustConnect(t, s, c)
	if res.Evicted != 4 || stored(a) != 0 || stored(b) != 3 || stored(c) != 4 {
		t.Fatalf("C: %+v; A %d, B %d, C %d stored", res, stored(a), stored(b), stored(c))
	}
	tip30 := at(30)
	// The honest reorg: 4 from 27 (ends at 31), with the bound full. The
	// old best chain's 28-30 turn into side headers; B goes instead.
	r := mineOn(t, s, at(27), 4, 600, 5)
	res = mustConnect(t, s, r)
	if res.Reorg == nil || len(res.Reorg.Detached) != 3 || len(res.Reorg.Attached) != 4 || res.Reorg.Detached[0] != tip30 {
		t.Fatalf("the reorg: %+v (reorg %+v)", res, res.Reorg)
	}
	if tip, h := s.Tip(); tip != r[3].BlockHash() || h != 31 {
		t.Fatalf("tip %v at %d, want the reorg's", tip, h)
	}
	if res.Evicted != 3 || stored(b) != 0 || stored(c) != 4 || !s.IsBest(r[0].BlockHash()) {
		t.Fatalf("reorg: %+v; B %d, C %d stored", res, stored(b), stored(c))
	}
	if _, err := s.HeightByHash(tip30); err != nil {
		t.Fatalf("the old tip was evicted: %v", err)
	}
	checkFile("after the reorg")
	// D: 2 headers from 22, less work than any stored side branch: evicted
	// at once (Dropped), the others stay.
	d := mineOn(t, s, at(22), 2, 600, 6)
	res = mustConnect(t, s, d)
	if res.Accepted != 0 || res.Dropped != 2 || res.Evicted != 2 || stored(d) != 0 || stored(c) != 4 || s.SideHeaders() != 7 {
		t.Fatalf("D: %+v; D %d, C %d stored, %d side", res, stored(d), stored(c), s.SideHeaders())
	}
	checkFile("after D")
	// A restart finds exactly the same headers, and the best chain still
	// extends.
	count, side := s.Count(), s.SideHeaders()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(dir, net, WithClock(fixedClock), WithSideBranchLimits(0, bound))
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if s2.Count() != count || s2.SideHeaders() != side || len(s2.Repairs()) != 0 {
		t.Fatalf("reopened: %d headers, %d side, repairs %v; want %d, %d", s2.Count(), s2.SideHeaders(), s2.Repairs(), count, side)
	}
	if tip, _ := s2.Tip(); tip != r[3].BlockHash() {
		t.Fatalf("reopened tip %v", tip)
	}
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
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var repairs []Repair
	s2, err := Open(dir, net, WithClock(fixedClock), WithSideBranchLimits(0, 5),
		WithRepairHook(func(r Repair) { repairs = append(repairs, r) }))
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if s2.SideHeaders() != 5 || s2.Count() != 21+5 || len(repairs) != 1 || repairs[0].Dropped != 3 {
		t.Fatalf("%d side headers of %d, repairs %+v", s2.SideHeaders(), s2.Count(), repairs)
	}
	for _, h := range highBranch {
		if _, err := s2.HeightByHash(h.BlockHash()); err != nil {
			t.Fatalf("the branch with more work lost %v", h.BlockHash())
		}
	}
	if err := s2.Verify(); err != nil {
		t.Fatal(err)
	}
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
	if err != nil {
		t.Fatal(err)
	}
	fail := errors.New("injected fsync failure")
	s.sync = func(*os.File) error { return fail }
	batch := mineOn(t, s, h15, 4, 600, 3)
	if res, err := s.Connect(batch); !errors.Is(err, fail) || res.Accepted != 0 {
		t.Fatalf("failed rewrite: %+v %v", res, err)
	}
	after, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) || s.Count() != 25 || s.index.count != 25 {
		t.Fatalf("after the failure: file changed %v, count %d, indexed %d", !bytes.Equal(before, after), s.Count(), s.index.count)
	}
	if _, err := os.Stat(filepath.Join(dir, FileName+".tmp")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("temporary file left: %v", err)
	}
	s.sync = (*os.File).Sync
	if res := mustConnect(t, s, batch); res.Evicted == 0 {
		t.Fatalf("no eviction: %+v", res)
	}
	if err := s.Verify(); err != nil {
		t.Fatal(err)
	}
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
	if _, err := s.Connect(mineOn(t, s, low, 2, 600, 3)); !errors.Is(err, ErrLowWorkBranch) {
		t.Fatalf("a side branch below the minimum chain work: %v", err)
	}
	high, _ := s.HashByHeight(26)
	mustConnect(t, s, mineOn(t, s, high, 2, 600, 4))
}
