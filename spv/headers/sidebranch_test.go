package headers

import (
	"errors"
	"math/big"
	"testing"
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

func TestSideBranchLimit(t *testing.T) {
	s, dir := openTest(t, mustNet(t, "regtest"), WithSideBranchLimits(0, 3))
	mustConnect(t, s, mineOnTip(t, s, 20, 600, 1))
	fork, _ := s.HashByHeight(18)
	side := mineOn(t, s, fork, 2, 600, 2) // two side headers, below the tip's work
	mustConnect(t, s, side)
	other, _ := s.HashByHeight(17)
	res, err := s.Connect(mineOn(t, s, other, 2, 600, 3))
	if !errors.Is(err, ErrSideBranchLimit) || res.Accepted != 1 {
		t.Fatalf("third and fourth side headers: accepted %d, %v; want 1 and ErrSideBranchLimit", res.Accepted, err)
	}
	// The count survives a restart.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(dir, mustNet(t, "regtest"), WithClock(fixedClock), WithSideBranchLimits(0, 3))
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	h16, _ := s2.HashByHeight(16)
	if _, err := s2.Connect(mineOn(t, s2, h16, 1, 600, 4)); !errors.Is(err, ErrSideBranchLimit) {
		t.Fatalf("after reopen: %v, want ErrSideBranchLimit", err)
	}
	mustConnect(t, s2, mineOnTip(t, s2, 1, 600, 1))
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
