package main

import (
	"path/filepath"
	"testing"

	"github.com/bloomwatch/bloomwatch/testnet"
)

// TestSyncBIP158EndToEnd syncs an xpub wallet over BIP157/158 from a real
// regtest btcd with the CLI (sync --protocol bip158) and checks the
// summary against the truth to the satoshi: no filter loaded, one filter
// per block from the birthday, the matching blocks fetched whole, and the
// privacy reading's compact_filters agreeing with them.
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
	// What the peers learned, in the privacy reading: the blocks asked,
	// the filters scanned, and BIP37's figures for the same wallet.
	if sum.Privacy == nil || sum.Privacy.CF == nil {
		t.Fatalf("no privacy.compact_filters over BIP158: %+v", sum.Privacy)
	}
	cf := sum.Privacy.CF
	if cf.Fetched != len(sum.CF.Seen.Blocks) || cf.Scanned != sum.CF.Filters ||
		cf.FalsePositiveBlocks != sum.CF.FalsePositiveBlocks || cf.WalletBlocks+cf.FalsePositiveBlocks != sum.CF.Blocks {
		t.Errorf("privacy.compact_filters %+v against compact_filters %+v", *cf, *sum.CF)
	}
	if a := cf.BIP37; a == nil || a.Bytes == 0 || a.Elements == 0 || !(a.FPRate > 0) {
		t.Errorf("bip37_alternative %+v", a)
	}
	t.Logf("compact filters: %+v; bytes received %d", *sum.CF, sum.BytesReceived)
}
