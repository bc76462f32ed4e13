package main

import (
	"path/filepath"
	"testing"

	"github.com/bloomwatch/bloomwatch/testnet"
)

// TestSyncBIP158EndToEnd syncs an xpub wallet over BIP157/158 from a real
// regtest btcd with the CLI (sync --protocol bip158) and checks the
// summary against the truth to the satoshi: no filter loaded, one filter
// per block from the birthday, the matching blocks fetched whole.
func TestSyncBIP158EndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h, truth := syncChain(t, testnet.ChainSpec{Blocks: 60, TxsPerBlock: 6, WatchAddrs: 12, SpendFraction: 0.5, Seed: 7})
	dir := filepath.Join(t.TempDir(), "w")
	sum := runSyncJSON(t, "--datadir", dir, "--network", "regtest", "--xpub", truth.Xpub,
		"--birthday", itoa(truth.StartHeight+1), "--connect", h.Node().P2PAddr(), "--protocol", "bip158")
	checkAgainstTruth(t, sum, truth)
	if sum.Protocol != "bip158" || sum.CF == nil {
		t.Fatalf("protocol %q, compact filters %+v", sum.Protocol, sum.CF)
	}
	if sum.Filter.Loads != 0 {
		t.Errorf("%d filterloads over BIP158", sum.Filter.Loads)
	}
	if want := int(truth.TipHeight - truth.StartHeight); sum.CF.Filters != want {
		t.Errorf("%d filters, want %d (one per block from the birthday)", sum.CF.Filters, want)
	}
	if sum.CF.Blocks == 0 || sum.CF.BlockBytes == 0 {
		t.Errorf("no block fetched: %+v", sum.CF)
	}
	t.Logf("compact filters: %+v; bytes received %d", *sum.CF, sum.BytesReceived)
}
