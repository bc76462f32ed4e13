package main

import (
	"context"
	"encoding/hex"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/btcsuite/btcd/rpcclient"
	"github.com/btcsuite/btcd/wire"

	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/session"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// nodeChain is the adversary's chain read over btcd's RPC client.
type nodeChain struct{ rpc *rpcclient.Client }

// BestHeight implements privacy.Chain.
func (c nodeChain) BestHeight() (int32, error) {
	n, err := c.rpc.GetBlockCount()
	return int32(n), err
}

// BlockAt implements privacy.Chain.
func (c nodeChain) BlockAt(h int32) (*wire.MsgBlock, error) {
	hash, err := c.rpc.GetBlockHash(int64(h))
	if err != nil {
		return nil, err
	}
	return c.rpc.GetBlock(hash)
}

// TestPrivacyOfARealSync syncs a wallet from a real btcd with a loose
// filter, then plays the full node: it replays the transcript the sync
// recorded against every output script on that chain, with the wallet's
// real elements as the truth, and checks that the adversary finds every
// wallet element and that the measured false-positive anonymity set agrees
// with the formula's expectation within Poisson bounds.
func TestPrivacyOfARealSync(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h, truth := syncChain(t, testnet.ChainSpec{Blocks: 150, TxsPerBlock: 10, WatchAddrs: 10, SpendFraction: 0.3, Seed: 11})
	dir := filepath.Join(t.TempDir(), "w")
	runSyncJSON(t, "--datadir", dir, "--network", "regtest", "--xpub", truth.Xpub, "--fp-rate", "0.05",
		"--birthday", itoa(truth.StartHeight+1), "--connect", h.Node().P2PAddr())

	f, err := os.Open(session.TranscriptPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	records, err := transcript.Read(f)
	if err != nil || len(records) == 0 {
		t.Fatalf("transcript: %d records, %v", len(records), err)
	}
	w, err := wallet.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	addrs, err := w.Addresses()
	_ = w.Close()
	if err != nil {
		t.Fatal(err)
	}
	var truthCands []privacy.Candidate
	for _, a := range addrs {
		if !a.Used {
			continue // never on chain: not in the universe
		}
		el, err := hex.DecodeString(a.Element)
		if err != nil {
			t.Fatal(err)
		}
		truthCands = append(truthCands, privacy.Candidate{Forms: [][]byte{el}})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	chain := nodeChain{rpc: h.Node().RPC()}
	tip, err := chain.BestHeight()
	if err != nil {
		t.Fatal(err)
	}
	universe, err := privacy.ChainUniverse(ctx, chain, tip)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := privacy.Analyze(ctx, privacy.Input{
		Records: records, Universe: privacy.Stream(universe), Truth: truthCands, Chain: chain,
		Attacks: privacy.Attacks{Intersection: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	single := rep.Curve(privacy.StageSingle)
	if single == nil || len(single.Points) == 0 {
		t.Fatalf("no single-filter curve: %+v", rep.Curves)
	}
	last := single.Points[len(single.Points)-1]
	t.Logf("universe %d candidates, %d wallet elements on chain, %d filters; latest filter: %d matched, %d false positives, %.2f expected, recall %.3f",
		rep.Universe, rep.Members, len(rep.Filters), last.Matched, last.FalsePositives, last.ExpectedFP, last.Recall)
	if last.Recall != 1 {
		t.Errorf("recall %.3f: the adversary must find every used wallet element", last.Recall)
	}
	if bound := 4*math.Sqrt(last.ExpectedFP) + 3; math.Abs(float64(last.FalsePositives)-last.ExpectedFP) > bound {
		t.Errorf("false positives %d, expected %.2f: outside +-%.1f", last.FalsePositives, last.ExpectedFP, bound)
	}
}
