package spv_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/filterpolicy"
	"github.com/bloomwatch/bloomwatch/privacy/onpath"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/stretchr/testify/require"
)

// onPathRun is one measured v2 sync: the client's settings.
type onPathRun struct {
	name string
	fp   float64
	pad  filterpolicy.FilterPadding
}

// onPathResult is what the observer made of one run, and the truth.
type onPathResult struct {
	run onPathRun
	// The filter: its true element count, the burst, the range read.
	elements, wire, lo, hi int
	// Blocks: asked, with any match (truth), with a wallet match
	// (truth), called matched by the observer, and of those the
	// wallet's.
	asked, anyBlocks, walletBlocks, called, calledWallet int
	// Transactions: matched (truth), the wallet's; placed by the
	// observer, named by their length alone, the wallet's so named.
	matched, walletTxs, placed, named, namedWallet int
	// Bytes on the wire each way; padding the decoy bytes sent.
	sent, received, padding int
	// packets received, relay reads (down); blocks delivered again
	// after a filter reload (truth) and read as asked again.
	packets, reads     int
	refetched, reasked int
}

// TestOnPathObserverMeasured syncs a 150-block chain (12 noise
// transactions a block, a 10-address wallet) from btcd v0.25.0 over v2
// through a relay, with the settings of each run, and lets an on-path
// observer who knows the chain read the download from the packet lengths
// alone (onpath.ObserveFilteredBlocks): which blocks held matches and
// which transactions they were, and the element range the filterload's
// burst gives (filterpolicy.ElementsForWire). It checks that the reading
// is what the lengths allow (every block placed, the blocks it calls
// matched are exactly those with matches, the true element count in the
// range read) and logs the table of docs/PRIVACY-MODEL.md's on-path
// section: what the observer learns, and what padding and false-positive
// cover cost.
func TestOnPathObserverMeasured(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd, builds a 150-block chain")
	}
	h := testnet.NewT(t, testnet.Options{V2Transport: true})
	key, err := testnet.NewKeyring(testnet.DemoSeed, regtest(t).Params)
	require.NoError(t, err)
	xpub, err := key.Xpub(testnet.PurposeBIP84)
	require.NoError(t, err)
	truth, err := h.BuildChain(t.Context(), testnet.ChainSpec{
		Blocks: 150, TxsPerBlock: 12, Keyring: key, Purpose: testnet.PurposeBIP84,
		WatchAddrs: 10, PaymentsPerAddr: 2, SpendFraction: 0.3, Seed: 2626,
	})
	require.NoError(t, err)
	c := &transportChain{srv: h.Chain, key: key, xpub: xpub, truth: truth, birth: truth.StartHeight + 1}
	blocks, txids := chainShapes(t, h, c.birth, truth.TipHeight)

	runs := []onPathRun{
		{"no padding", 1e-4, filterpolicy.PadNone},
		{"default (steps)", 1e-4, filterpolicy.PadSteps},
		{"max padding", 1e-4, filterpolicy.PadMax},
		{"fp 1e-3", 1e-3, filterpolicy.PadSteps},
		{"fp 1e-2", 1e-2, filterpolicy.PadSteps},
		{"fp 0.05", 0.05, filterpolicy.PadSteps},
		{"fp 0.2", 0.2, filterpolicy.PadSteps},
	}
	var results []onPathResult
	for _, run := range runs {
		t.Run(run.name, func(t *testing.T) {
			res := measureOnPath(t, c, h, run, blocks, txids)
			results = append(results, res)
		})
	}
	unique, all := 0, 0
	for _, b := range blocks {
		for _, sz := range b.TxSizes {
			all++
			if n := len(slices.DeleteFunc(slices.Clone(b.TxSizes), func(x int) bool { return x != sz })); n == 1 {
				unique++
			}
		}
	}
	t.Logf("on-path observer of a v2 sync (%d blocks, %d transactions, %d of them of a size unique in their block):\n%s",
		len(blocks), all, unique, onPathTable(results))
	if len(results) == len(runs) {
		def, wide := results[1], results[5]
		p, q := ratio(def.calledWallet, def.called), ratio(wide.calledWallet, wide.called)
		require.Less(t, q, p, "false-positive cover did not lower the observer's block precision: %.3f at 1e-4, %.3f at 0.05", p, q)
		require.True(t, results[2].hi-results[2].lo > results[1].hi-results[1].lo && results[1].hi-results[1].lo > results[0].hi-results[0].lo, "padding did not widen the element range: %d-%d, %d-%d, %d-%d", results[0].lo, results[0].hi, results[1].lo, results[1].hi, results[2].lo, results[2].hi)
	}
}

// chainShapes returns the observer's view of the blocks from..to (the
// stripped size of every transaction, in block order) and their txids.
func chainShapes(t *testing.T, h *testnet.Harness, from, to int32) ([]onpath.Block, map[int32][]chainhash.Hash) {
	t.Helper()
	var blocks []onpath.Block
	txids := map[int32][]chainhash.Hash{}
	for ht := from; ht <= to; ht++ {
		hash, err := h.Node().RPC().GetBlockHash(int64(ht))
		require.NoError(t, err)
		b, err := h.Node().RPC().GetBlock(hash)
		require.NoError(t, err)
		pb := onpath.Block{Height: ht}
		for _, tx := range b.Transactions {
			pb.TxSizes = append(pb.TxSizes, tx.SerializeSizeStripped())
			txids[ht] = append(txids[ht], tx.TxHash())
		}
		blocks = append(blocks, pb)
	}
	return blocks, txids
}

// measureOnPath runs one v2 sync and scores the observer.
func measureOnPath(t *testing.T, c *transportChain, h *testnet.Harness, run onPathRun, blocks []onpath.Block, txids map[int32][]chainhash.Hash) onPathResult {
	relay, err := testnet.StartRelay(t.Context(), h.Node().P2PAddr())
	require.NoError(t, err)
	defer relay.Close()
	var mu sync.Mutex
	var taps []spv.WirePacket
	dir := t.TempDir()
	w := implWallet(t, t, filepath.Join(dir, "wallet"), c.xpub, c.birth, 0)
	cfg := implConfig(filepath.Join(dir, "spv"), w, relay.Addr())
	cfg.Transport, cfg.FPRate, cfg.FilterPadding = spv.TransportV2, run.fp, run.pad
	spv.SetWireTap(&cfg, func(p spv.WirePacket) {
		mu.Lock()
		taps = append(taps, p)
		mu.Unlock()
	})
	n, err := spv.New(cfg)
	require.NoError(t, err)
	sub := n.Subscribe()
	defer sub.Cancel()
	// Collect the events as they come (the node discards what is
	// unread at Stop), up to the SyncDone at the chain's tip.
	var evs []spv.Event
	atTip := make(chan struct{})
	go func() {
		for ev := range sub.Events() {
			evs = append(evs, ev)
			if d, ok := ev.(spv.SyncDone); ok && d.Hash == c.truth.TipHash {
				close(atTip)
				return
			}
		}
	}()
	require.NoError(t, n.Start(context.Background()))
	select {
	case <-atTip:
	case <-time.After(2 * time.Minute):
		require.FailNow(t, fmt.Sprintf("not synced at the tip after 2 min: %+v", n.Status()))
	}
	require.NoError(t, n.Stop())
	res := onPathResult{run: run, asked: len(blocks), lo: -1, hi: -1}
	walletBlock, anyBlock := map[int32]bool{}, map[int32]bool{}
	wallet, matched := map[chainhash.Hash]bool{}, map[chainhash.Hash]bool{}
	refetched := 0
	for _, ev := range evs {
		switch ev := ev.(type) {
		case spv.FilterLoaded:
			if res.wire == 0 {
				res.elements, res.wire = ev.Elements, ev.Record.Wire
				unpadded := filterpolicy.FilterLoadPacket(len(ev.Record.Filter))
				res.padding = ev.Record.Wire - unpadded
				if cl, ok := filterpolicy.ElementsForWire(ev.Record.Wire, run.fp, run.pad); ok {
					res.lo, res.hi = cl.MinElements, cl.MaxElements
				}
			}
			require.Equal(t, transcript.TransportV2, ev.Record.Transport, "a filterload over %q", ev.Record.Transport)
		case spv.MatchedTx:
			if ev.Height < 0 {
				continue
			}
			matched[ev.Txid] = true
			anyBlock[ev.Height] = true
			if ev.Relevant {
				walletBlock[ev.Height] = true
				wallet[ev.Txid] = true
			}
		case spv.BlockProcessed:
			if ev.Again {
				refetched++
			}
		}
	}
	res.refetched = refetched
	res.anyBlocks, res.walletBlocks = len(anyBlock), len(walletBlock)
	res.matched, res.walletTxs = len(matched), len(wallet)
	mu.Lock()
	var pkts []onpath.Packet
	for _, p := range taps {
		pkts = append(pkts, onpath.Packet{Time: p.Time, Out: p.Out, Bytes: p.Bytes})
		if p.Out {
			res.sent += p.Bytes
		} else {
			res.received += p.Bytes
			res.packets++
		}
	}
	mu.Unlock()
	for _, ch := range relay.Chunks() {
		if !ch.Up {
			res.reads++
		}
	}
	st := onpath.ObserveFilteredBlocks(pkts, blocks, run.fp)
	// The reading from lengths alone takes every merkleblock and
	// transaction packet for what it is, and nothing else for either.
	wrong := 0
	mu.Lock()
	for i, p := range taps {
		want := ""
		if !p.Out && (p.Cmd == onpath.RoleMerkleBlock || p.Cmd == onpath.RoleTx) {
			want = p.Cmd
		}
		if st.Roles[i] != want {
			wrong++
			require.Greater(t, wrong, 5, "packet %d (%s, %d bytes, out %v) read as %q", i, p.Cmd, p.Bytes, p.Out, st.Roles[i])
		}
	}
	mu.Unlock()
	require.LessOrEqual(t, wrong, 0, "%d packets misread", wrong)
	res.reasked = st.Refetched
	require.Equal(t, len(blocks), st.Requested-st.Refetched, "the observer read %d blocks asked (%d again) and placed %d merkleblocks, want %d asked once", st.Requested, st.Refetched, st.Parsed, len(blocks))
	require.Equal(t, st.Requested, st.Parsed, "the observer read %d blocks asked (%d again) and placed %d merkleblocks, want %d asked once", st.Requested, st.Refetched, st.Parsed, len(blocks))
	called := map[int32]bool{}
	for _, ht := range st.Matched {
		called[ht] = true
		if walletBlock[ht] {
			res.calledWallet++
		}
	}
	res.called = len(called)
	// Every block whose matches the client took is called; the
	// observer may call more: the answers the client discarded after a
	// reload, to its old filter, matched other false positives.
	for ht := range anyBlock {
		require.True(t, called[ht], "block %d held matches; the observer missed it", ht)
	}
	placed, named := map[string]bool{}, map[chainhash.Hash]bool{}
	for _, tx := range st.Txs {
		placed[fmt.Sprint(tx.Height, tx.Candidates)] = true
		if len(tx.Candidates) == 1 {
			named[txids[tx.Height][tx.Candidates[0]]] = true
		}
	}
	res.placed, res.named = len(placed), len(named)
	for id := range named {
		if wallet[id] {
			res.namedWallet++
		}
	}
	require.GreaterOrEqual(t, res.lo, 0, "%d elements, the burst of %d bytes reads as %d-%d", res.elements, res.wire, res.lo, res.hi)
	require.GreaterOrEqual(t, res.elements, res.lo, "%d elements, the burst of %d bytes reads as %d-%d", res.elements, res.wire, res.lo, res.hi)
	require.LessOrEqual(t, res.elements, res.hi, "%d elements, the burst of %d bytes reads as %d-%d", res.elements, res.wire, res.lo, res.hi)
	return res
}

// ratio is a/b, 1 when b is 0.
func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

// onPathTable formats the results.
func onPathTable(rs []onPathResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-16s %8s %6s %11s %15s %9s %12s %13s %8s %9s %7s %7s %13s\n", "run", "elements", "burst", "range read",
		"blocks called", "precision", "wallet named", "named (taken)", "sent", "received", "padding", "again", "reads/packets")
	for _, r := range rs {
		fmt.Fprintf(&b, "%-16s %8d %6d %11s %8d of %3d %9.2f %7d of %3d %6d (%4d) %8d %9d %7d %3d/%3d %6d/%6d\n",
			r.run.name, r.elements, r.wire, fmt.Sprintf("%d-%s", r.lo, upTo(r.hi)),
			r.called, r.asked, ratio(r.calledWallet, r.called), r.namedWallet, r.walletTxs, r.named, r.matched,
			r.sent, r.received, r.padding, r.reasked, r.refetched, r.reads, r.packets)
	}
	b.WriteString("blocks called: the blocks the observer saw carry matches (every one of the wallet's among them); precision: the wallet's share of them;\n" +
		"wallet named: the wallet's transactions whose length names them in their block; named (taken): transactions named, (matched ones the client took);\n" +
		"again: blocks the observer read as asked again after a filterload / blocks the client re-applied; reads/packets: the relay's reads of the peer's stream / its packets\n")
	return b.String()
}

// upTo prints a range's top, "any" for no bound.
func upTo(hi int) string {
	if hi >= 1<<31-1 {
		return "any"
	}
	return fmt.Sprint(hi)
}
