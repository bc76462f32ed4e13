package main

import (
	"path/filepath"
	"testing"

	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/stretchr/testify/require"
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
	require.Equal(t, "bip158", sum.Protocol, "protocol %q, compact filters %+v", sum.Protocol, sum.CF)
	require.NotNil(t, sum.CF, "protocol %q, compact filters %+v", sum.Protocol, sum.CF)
	require.Equal(t, 0, sum.Filter.Loads, "%d filterloads over BIP158", sum.Filter.Loads)
	want := int(truth.TipHeight - truth.StartHeight)
	require.Equal(t, want, sum.CF.Filters, "%d filters, want %d (one per block from the birthday)", sum.CF.Filters, want)
	require.NotEqual(t, 0, sum.CF.Blocks, "no block fetched: %+v", sum.CF)
	require.NotEqual(t, uint64(0), sum.CF.BlockBytes, "no block fetched: %+v", sum.CF)
	// What the peers learned, in the privacy reading: the blocks asked,
	// the filters scanned, and BIP37's figures for the same wallet.
	require.NotNil(t, sum.Privacy, "no privacy.compact_filters over BIP158: %+v", sum.Privacy)
	require.NotNil(t, sum.Privacy.CF, "no privacy.compact_filters over BIP158: %+v", sum.Privacy)
	cf := sum.Privacy.CF
	require.Equal(t, len(sum.CF.Seen.Blocks), cf.Fetched, "privacy.compact_filters %+v against compact_filters %+v", *cf, *sum.CF)
	require.Equal(t, sum.CF.Filters, cf.Scanned, "privacy.compact_filters %+v against compact_filters %+v", *cf, *sum.CF)
	require.Equal(t, sum.CF.FalsePositiveBlocks, cf.FalsePositiveBlocks, "privacy.compact_filters %+v against compact_filters %+v", *cf, *sum.CF)
	require.Equal(t, sum.CF.Blocks, cf.WalletBlocks+cf.FalsePositiveBlocks, "privacy.compact_filters %+v against compact_filters %+v", *cf, *sum.CF)
	a := cf.BIP37
	require.NotNil(t, a, "bip37_alternative %+v", a)
	require.NotEqual(t, 0, a.Bytes, "bip37_alternative %+v", a)
	require.NotEqual(t, 0, a.Elements, "bip37_alternative %+v", a)
	require.True(t, a.FPRate > 0, "bip37_alternative %+v", a)
	t.Logf("compact filters: %+v; bytes received %d", *sum.CF, sum.BytesReceived)
}
