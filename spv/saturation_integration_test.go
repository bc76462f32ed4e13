package spv_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/bloomwatch/bloomwatch/watch/watchtest"
)

// TestCheckingPeerDoesNotSaturate syncs an address list (20 receive
// addresses paid three times each, and the change of half the payments)
// from a real btcd chain of 1,000 blocks of 10 noise transactions, first
// from one btcd, then from two (every block checked against the second,
// the default), at a loose false-positive rate (0.005) and one fixed
// tweak: the wallet's own outputs and the false positives', which the
// servers insert (BLOOM_UPDATE_ALL), fill the filters past their reload
// threshold. Every reload goes to both peers, the same filter, so a
// checking peer cannot keep its first filter and saturate: their last
// filters are equal, the checking peer receives no more than about what
// the download peer does, and the two-peer sync at most 2.2 times the
// one-peer sync's bytes (each block's proof twice).
func TestCheckingPeerDoesNotSaturate(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two btcds")
	}
	h, k := demoHarness(t)
	truth, err := h.BuildChain(context.Background(), testnet.ChainSpec{
		Blocks: 1000, TxsPerBlock: 10, Keyring: k, WatchAddrs: 20, PaymentsPerAddr: 10, SpendFraction: 0.5, Seed: 24,
	})
	require.NoError(t, err)
	second, err := testnet.StartNode(context.Background(), testnet.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = second.Stop() })
	require.NoError(t, second.ConnectTo(h.Node()))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, second.WaitForHeight(ctx, truth.TipHeight))
	var scripts [][]byte
	for _, a := range truth.Addresses {
		addr, err := btcutil.DecodeAddress(a.Address, h.Params())
		require.NoError(t, err)
		s, err := txscript.PayToAddrScript(addr)
		require.NoError(t, err)
		scripts = append(scripts, s)
	}
	const fpRate = 0.005
	var matched []spv.MatchedTx // the two-peer sync's delivered transactions
	sync := func(peers ...string) (spv.Status, []spv.PeerInfo, *watchtest.MemWatcher, string) {
		t.Helper()
		w := watchtest.NewMemWatcher(truth.StartHeight+1, scripts...)
		dir := t.TempDir()
		// One tweak for both runs: which noise a filter matches depends
		// on it.
		require.NoError(t, os.WriteFile(filepath.Join(dir, "filter.json"), []byte(`{"version":1,"tweak":2024}`), 0o600))
		n, err := spv.New(spv.Config{
			Network: regtest(t), DataDir: dir, Connect: peers, Watcher: w, Log: testLogger(),
			FPRate: fpRate,
			Tuning: spv.Tuning{RetryMin: 50 * time.Millisecond, MinPeers: len(peers), TickInterval: 20 * time.Millisecond},
		})
		require.NoError(t, err)
		sub := n.Subscribe()
		defer sub.Cancel()
		require.NoError(t, n.Start(context.Background()))
		defer func() { _ = n.Stop() }()
		waitSynced(t, n, truth.TipHeight)
		matched = matched[:0]
		for sub.Pending() > 0 {
			if ev, ok := (<-sub.Events()).(spv.MatchedTx); ok && ev.Height >= 0 {
				matched = append(matched, ev)
			}
		}
		// The peers' byte counts are refreshed at the node's tick.
		st := n.Status()
		waitFor(t, func() bool {
			var sum uint64
			for _, p := range n.Peers() {
				sum += p.BytesReceived
			}
			return sum >= st.BytesReceived
		})
		return st, n.Peers(), w, dir
	}
	one, _, w1, _ := sync(h.Node().P2PAddr())
	two, peers, w2, dir := sync(h.Node().P2PAddr(), second.P2PAddr())
	for _, w := range []*watchtest.MemWatcher{w1, w2} {
		require.Len(t, w.Txs(), len(truth.Txs), "watcher has %d txs, balance %d; truth %d, %d", len(w.Txs()), w.Balance(), len(truth.Txs), truth.Balance)
		require.Equal(t, truth.Balance, w.Balance(), "watcher has %d txs, balance %d; truth %d, %d", len(w.Txs()), w.Balance(), len(truth.Txs), truth.Balance)
	}
	var dl, check uint64
	for _, p := range peers {
		if p.Download {
			dl = p.BytesReceived
		} else {
			check = p.BytesReceived
		}
	}
	ratio := float64(two.BytesReceived) / float64(one.BytesReceived)
	t.Logf("one peer: %d bytes, %d false positives, %d filterloads; two peers: %d bytes (download %d, checking %d), %d false positives, %d filterloads, %d checks, %d unchecked; ratio %.2f",
		one.BytesReceived, one.FalsePositives, one.Filter.Loads, two.BytesReceived, dl, check,
		two.FalsePositives, two.Filter.Loads, two.SpotChecks, two.Unchecked, ratio)
	require.NotEqual(t, 0, two.SpotChecks, "%d checks, checking peer %d bytes, download peer %d bytes", two.SpotChecks, check, dl)
	require.NotEqual(t, uint64(0), check, "%d checks, checking peer %d bytes, download peer %d bytes", two.SpotChecks, check, dl)
	require.NotEqual(t, uint64(0), dl, "%d checks, checking peer %d bytes, download peer %d bytes", two.SpotChecks, check, dl)
	// Every filter went to both peers, the same bytes: the checking
	// peer's filter follows the download peer's.
	recs := readTranscript(t, dir)
	last := map[string][]byte{}
	byReason := map[string]int{}
	for _, r := range transcript.FilterRecords(recs) {
		last[r.Peer] = r.Filter
		byReason[r.Reason]++
	}
	var filters [][]byte
	for _, fl := range last {
		filters = append(filters, fl)
	}
	t.Logf("two-peer filterloads by reason: %v", byReason)
	require.Len(t, filters, 2, "the peers' last filters differ (%d peers): a reload went to one peer alone (%v)", len(filters), byReason)
	require.Equal(t, filters[1], filters[0], "the peers' last filters differ (%d peers): a reload went to one peer alone (%v)", len(filters), byReason)
	// What a reload shows either peer (the same bytes for both): the
	// outputs the servers inserted for the transactions they sent
	// (BLOOM_UPDATE_ALL; here the first output that matched, as Why
	// names it) are in the reloaded filter whether they are the wallet's
	// or a false positive's, as long as they are unspent (and no
	// drifted filter was reloaded since): the node carries the servers'
	// insertions from one filter to the next. A filter built from the
	// wallet's elements alone held every wallet output and none of the
	// false positives' (169 and 0 of 123 in a run before the node
	// carried them): each peer could tell which matched outputs were
	// the wallet's.
	final := bip37FromRecord(t, filters[0])
	spent := map[wire.OutPoint]bool{}
	for _, ev := range matched {
		for _, in := range ev.Tx.TxIn {
			spent[in.PreviousOutPoint] = true
		}
	}
	var walletIn, walletAll, fpIn, fpAll int
	for _, ev := range matched {
		for i := range ev.Tx.TxOut {
			op := wire.OutPoint{Hash: ev.Txid, Index: uint32(i)}
			if spent[op] {
				continue
			}
			switch {
			case ev.Relevant && w2.Coins()[op] > 0:
				walletAll++
				if final.MatchesOutPoint(&op) {
					walletIn++
				}
			case ev.FalsePositive && ev.Why != nil && ev.Why.Kind == bip37.MatchOutput && ev.Why.Index == i:
				fpAll++
				if final.MatchesOutPoint(&op) {
					fpIn++
				}
			}
		}
	}
	t.Logf("the last filter holds %d of the wallet's %d unspent outputs and %d of the %d unspent false-positive outputs the servers inserted",
		walletIn, walletAll, fpIn, fpAll)
	require.Equal(t, walletAll, walletIn, "the last filter lacks %d wallet outpoints", walletAll-walletIn)
	require.False(t, byReason[transcript.ReasonFPDrift] == 0 && fpIn != fpAll, "the last filter lacks %d of the %d false-positive outputs the servers inserted: a reload shows which matched outputs are the wallet's", fpAll-fpIn, fpAll)
	require.LessOrEqual(t, float64(check), 1.3*float64(dl), "the checking peer sent %d bytes, the download peer %d: its filter saturated", check, dl)
	require.LessOrEqual(t, ratio, 2.2, "two peers cost %.2f times the bytes of one (goal: at most 2.2)", ratio)
}

// bip37FromRecord decodes a transcript filter record's filter.
func bip37FromRecord(t *testing.T, raw []byte) *bip37.Filter {
	t.Helper()
	f, err := bip37.Deserialize(raw)
	require.NoError(t, err)
	return f
}
