package wallet_test

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/psbt"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/wallet"
	"github.com/bloomwatch/bloomwatch/watch"
)

// leakChain builds blocks the wallet applies and the analyzer reads.
type leakChain struct {
	blocks element.MemChain
	prev   chainhash.Hash
	n      uint32
}

// mine makes a block of a coinbase and txs and returns it filtered whole.
func (c *leakChain) mine(txs []*wire.MsgTx) *watch.FilteredBlock {
	height := int32(len(c.blocks))
	c.n++
	cb := wire.NewMsgTx(1)
	cb.AddTxIn(wire.NewTxIn(wire.NewOutPoint(&chainhash.Hash{}, wire.MaxPrevOutIndex), []byte{byte(height), byte(height >> 8), 0x51}, nil))
	cb.AddTxOut(wire.NewTxOut(50_000, testnet.RandomScript(nil, testnet.KindP2WPKH)))
	all := append([]*wire.MsgTx{cb}, txs...)
	utxs := make([]*btcutil.Tx, len(all))
	for i, tx := range all {
		utxs[i] = btcutil.NewTx(tx)
	}
	b := &wire.MsgBlock{Header: wire.BlockHeader{
		Version: 4, PrevBlock: c.prev, MerkleRoot: blockchain.CalcMerkleRoot(utxs, false),
		Timestamp: time.Unix(1_700_000_000+int64(height)*600, 0), Bits: 0x207fffff, Nonce: c.n,
	}, Transactions: all}
	c.blocks = append(c.blocks, b)
	c.prev = b.Header.BlockHash()
	fb := &watch.FilteredBlock{Height: height, Hash: c.prev, Header: b.Header, TotalTxs: uint32(len(all))}
	for i, tx := range all[1:] {
		fb.Txs = append(fb.Txs, tx)
		fb.TxIndexes = append(fb.TxIndexes, uint32(i+1))
	}
	return fb
}

// leakRun is what one simulated wallet history measured.
type leakRun struct {
	spends, inputs, merging int
	receivedTxs             int // summed over spends
	addresses               int // used addresses
	coSpend, graph          *privacy.Clustering
}

// leakSpends are the spend amounts of the simulated histories.
type leakSpends int

const (
	// largeSpends: a random 5-60 % of the confirmed balance.
	largeSpends leakSpends = iota
	// paymentSpends: log-uniform 10,000 to 1,000,000 sat, at most 80 %
	// of the confirmed balance.
	paymentSpends
)

// String names the spends.
func (s leakSpends) String() string {
	if s == paymentSpends {
		return "payment-sized spends (10,000-1,000,000 sat, log-uniform)"
	}
	return "large spends (5-60 % of the balance)"
}

// tempDir is a fresh directory for a wallet written hundreds of times:
// in memory (/dev/shm) when there is one, so the measurement does not
// wait on the disk's syncs.
func tempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "bloomwatch-leak-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// runLeakHistory plays one wallet history with policy sel: 40 payments
// from others (a quarter of them to two of its addresses at once) and
// 30 spends (amounts as spends says) at 2 sat/vB, interleaved after the
// first 15 payments, each in its own block with noise; every spend is
// built by CreatePSBT, signed by the keyring as a hardware signer would,
// and mined. The same seed gives the same payments to both policies.
func runLeakHistory(t *testing.T, seed int64, sel wallet.CoinSelection, spends leakSpends) *leakRun {
	t.Helper()
	params := &chaincfg.RegressionNetParams
	k, err := testnet.NewKeyring(testnet.DemoSeed, params)
	require.NoError(t, err)
	x, err := k.Xpub(testnet.PurposeBIP84)
	require.NoError(t, err)
	w, err := wallet.Create(tempDir(t), wallet.CreateConfig{Network: "regtest", Xpubs: []string{x}, GapExternal: 100})
	require.NoError(t, err)
	defer w.Close()
	r := rand.New(rand.NewSource(seed))
	noise := rand.New(rand.NewSource(seed + 1_000_000))
	c := &leakChain{}
	run := &leakRun{}
	apply := func(txs ...*wire.MsgTx) {
		for range 3 {
			tx := wire.NewMsgTx(2)
			tx.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: chainhash.Hash{byte(noise.Intn(256)), byte(noise.Intn(256)), 1}}, nil, nil))
			tx.AddTxOut(wire.NewTxOut(int64(10_000+noise.Intn(1_000_000)), testnet.RandomScript(noise, testnet.KindP2WPKH)))
			txs = append(txs, tx)
		}
		_, err := w.ApplyBlock(c.mine(txs))
		require.NoError(t, err)
	}
	apply() // height 0
	receive := func() {
		tx := wire.NewMsgTx(2)
		tx.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: chainhash.Hash{byte(r.Intn(256)), byte(r.Intn(256)), 2}, Index: uint32(r.Intn(9))}, nil, nil))
		outs := 1
		if r.Intn(4) == 0 {
			outs = 2
		}
		for range outs {
			info, err := w.Receive(wallet.ReceiveOptions{})
			require.NoError(t, err)
			addr, err := btcutil.DecodeAddress(info.Address, params)
			require.NoError(t, err)
			script, err := txscript.PayToAddrScript(addr)
			require.NoError(t, err)
			// Log-uniform amounts, 20,000 to 2,000,000 sat.
			amt := int64(20_000 * math.Pow(100, r.Float64()))
			tx.AddTxOut(wire.NewTxOut(amt, script))
		}
		apply(tx)
	}
	spend := func() {
		bal, err := w.Balance()
		require.NoError(t, err)
		amt := btcutil.Amount(float64(bal.Confirmed) * (0.05 + 0.55*r.Float64()))
		if spends == paymentSpends {
			amt = min(btcutil.Amount(10_000*math.Pow(100, r.Float64())), bal.Confirmed*8/10)
		}
		to := testnet.RandomScript(r, testnet.KindP2WPKH)
		_, addrs, _, err := txscript.ExtractPkScriptAddrs(to, params)
		require.NoError(t, err)
		res, err := w.CreatePSBT(wallet.PSBTRequest{Outputs: []wallet.PSBTOutput{{Address: addrs[0].EncodeAddress(), Amount: amt}}, FeeRate: 2, Selection: sel})
		require.NoError(t, err)
		require.NoError(t, k.SignPSBT(res.Packet))
		require.NoError(t, psbt.MaybeFinalizeAll(res.Packet))
		tx, err := psbt.Extract(res.Packet)
		require.NoError(t, err)
		run.spends++
		run.inputs += len(tx.TxIn)
		run.receivedTxs += res.ReceivedTxs
		if res.ReceivedTxs > 1 {
			run.merging++
		}
		apply(tx)
	}
	for range 15 {
		receive()
	}
	payments, outgoing := 25, 30
	for payments+outgoing > 0 {
		if outgoing == 0 || payments > 0 && r.Intn(payments+outgoing) < payments {
			receive()
			payments--
		} else {
			spend()
			outgoing--
		}
	}
	truth, err := w.TruthElements()
	require.NoError(t, err)
	els := make([][]byte, len(truth))
	for i, e := range truth {
		els[i] = e.Element
	}
	run.addresses = len(els)
	run.coSpend, err = privacy.LinkClusters(context.Background(), c.blocks, els, privacy.CoSpendLinks)
	require.NoError(t, err)
	run.graph, err = privacy.LinkClusters(context.Background(), c.blocks, els, privacy.GraphLinks)
	require.NoError(t, err)
	return run
}

// TestCoinSelectionLeaks measures what the default coin selection
// (SelectPrivate) leaks against largest-first, with the analyzer's
// transaction-graph clustering (privacy.LinkClusters, the graph attack's
// links) over the whole chain of 10 simulated wallet histories per
// policy and kind of spend: how many spends merge coins of different
// received transactions, and how the wallet's used addresses cluster by
// common inputs alone and by common inputs and change (the graph
// attack). The private policy must merge in fewer spends and link each
// address to fewer others, by common inputs (or as few) and by the graph
// attack's links.
func TestCoinSelectionLeaks(t *testing.T) {
	if testing.Short() {
		t.Skip("plays 40 wallet histories")
	}
	const seeds = 10
	type agg struct {
		merging, spends, inputs, received, addrs     int
		coClusters, coLargest, grClusters, grLargest int
		coSeen, grSeen                               float64
	}
	policies := []wallet.CoinSelection{wallet.SelectPrivate, wallet.SelectLargestFirst}
	var (
		b       strings.Builder
		results [][2]agg
	)
	fmt.Fprintf(&b, "%d wallet histories per row (40 payments, 30 spends, 2 sat/vB); per spend: share merging received txs, inputs, received txs;\n", seeds)
	fmt.Fprintf(&b, "per history: used addresses, clusters (co: common inputs, graph: common inputs and change), largest, mean cluster size an address is in\n")
	for _, kind := range []leakSpends{largeSpends, paymentSpends} {
		var res [2]agg
		for s := int64(1); s <= seeds; s++ {
			for i, sel := range policies {
				run := runLeakHistory(t, s, sel, kind)
				a := &res[i]
				a.merging += run.merging
				a.spends += run.spends
				a.inputs += run.inputs
				a.received += run.receivedTxs
				a.addrs += run.addresses
				a.coClusters += len(run.coSpend.Sizes)
				a.coLargest += run.coSpend.Largest()
				a.coSeen += run.coSpend.MeanSeen()
				a.grClusters += len(run.graph.Sizes)
				a.grLargest += run.graph.Largest()
				a.grSeen += run.graph.MeanSeen()
			}
		}
		fmt.Fprintf(&b, "%s:\n", kind)
		fmt.Fprintf(&b, "  %-14s %8s %7s %9s %6s %9s %8s %8s %9s %8s %8s\n", "policy", "merging", "inputs", "recv txs", "addrs",
			"co clust", "co larg", "co seen", "gr clust", "gr larg", "gr seen")
		for i, sel := range policies {
			a := res[i]
			n := float64(seeds)
			fmt.Fprintf(&b, "  %-14s %7.1f%% %7.2f %9.2f %6.1f %9.1f %8.1f %8.2f %9.1f %8.1f %8.2f\n", sel,
				100*float64(a.merging)/float64(a.spends), float64(a.inputs)/float64(a.spends), float64(a.received)/float64(a.spends),
				float64(a.addrs)/n, float64(a.coClusters)/n, float64(a.coLargest)/n, a.coSeen/n,
				float64(a.grClusters)/n, float64(a.grLargest)/n, a.grSeen/n)
		}
		results = append(results, res)
	}
	t.Log("\n" + b.String())
	for i, kind := range []leakSpends{largeSpends, paymentSpends} {
		p, l := results[i][0], results[i][1]
		require.Less(t, p.merging, l.merging, "%s: the private policy merges received transactions in fewer spends", kind)
		require.Less(t, p.received, l.received, "%s", kind)
		require.LessOrEqual(t, p.coSeen, l.coSeen, "%s: an address is in no larger common-input cluster", kind)
		require.Less(t, p.grSeen, l.grSeen, "%s: and in a smaller cluster of the graph attack", kind)
	}
}
