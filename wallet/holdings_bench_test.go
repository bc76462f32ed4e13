package wallet

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// holdingsSizes are the wallet sizes (unspent outputs) of
// BenchmarkHoldingsScale; the smallest is the baseline each other size's
// ns/op and B/op are compared with in the same run: linear growth is a
// ratio of about size/1,000. BLOOMWATCH_HOLDINGS_SIZES (comma-separated)
// replaces them, to measure a revision where the largest take too long.
var holdingsSizes = []int{1_000, 10_000, 100_000}

// Shapes of BenchmarkHoldingsScale's wallets: holdingsTxsPerBlock
// transactions per block of the many-txs shape, holdingsOutsPerTx outputs
// per transaction of the big-txs shape (25,000 P2WPKH outputs are 775 kB:
// a valid transaction holds at most 1,000,000 bytes without witness, so
// 30,000 such outputs at most).
const (
	holdingsTxsPerBlock = 1_000
	holdingsOutsPerTx   = 25_000
)

// holdingsFixture builds, in dir, a wallet of one imported address holding
// n unspent outputs: in transactions of up to holdingsOutsPerTx outputs,
// all in one block (shape "big-txs": what one fabricated payment of
// 70,000 outputs was, within what a valid transaction holds) or one
// output in each of n confirmed transactions ("many-txs"), plus one
// unconfirmed payment.
func holdingsFixture(b *testing.B, dir, shape string, n int) {
	b.Helper()
	addr, script := benchAddress(b, 0)
	w, err := Create(dir, CreateConfig{Network: "regtest", Addresses: []string{addr}}, WithClock(time.Now),
		WithBatch(DefaultBatchBlocks, 0))
	require.NoError(b, err)
	f := &txFactory{}
	chain := newTestChain(f, 1)
	switch shape {
	case "big-txs":
		var txs []*wire.MsgTx
		for done := 0; done < n; {
			outs := make([]output, min(holdingsOutsPerTx, n-done))
			for i := range outs {
				outs[i] = output{script, 1_000 + int64(done+i)}
			}
			done += len(outs)
			txs = append(txs, f.tx(nil, outs...))
		}
		mustApply(b, w, chain.add(txs...).filtered())
	case "many-txs":
		for done := 0; done < n; {
			txs := make([]*wire.MsgTx, 0, holdingsTxsPerBlock)
			for ; len(txs) < holdingsTxsPerBlock && done < n; done++ {
				txs = append(txs, f.tx(nil, output{script, 1_000 + int64(done)}))
			}
			mustApply(b, w, chain.add(txs...).filtered())
			chain.blocks = nil
		}
	default:
		require.FailNow(b, fmt.Sprintf("unknown shape %q", shape))
	}
	res, err := w.ApplyMempoolTx(f.tx(nil, output{script, 7_000}))
	require.NoError(b, err)
	require.True(b, res.Relevant)
	require.NoError(b, w.Close())
}

// BenchmarkHoldingsScale measures Open, Balance and UTXOs on wallets of
// 1,000, 10,000 and 100,000 unspent outputs, in transactions of up to
// 25,000 outputs or one per transaction (see holdingsFixture). Each size's
// figures divided by the 1,000-output baseline's of the same run show how
// the cost grows with the wallet: about 10 and 100 when it is linear.
// wtxmgr's UnspentOutputs, which these calls used before, decodes the
// whole transaction once per unspent output: with many outputs in one
// transaction that grew with the square of their count (10,000
// outputs, 3.8 s and 6 GiB per Balance).
func BenchmarkHoldingsScale(b *testing.B) {
	sizes := holdingsSizes
	if s := os.Getenv("BLOOMWATCH_HOLDINGS_SIZES"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			require.NoError(b, err)
			sizes = append(sizes, n)
		}
	}
	parent := b
	for _, shape := range []string{"big-txs", "many-txs"} {
		for _, n := range sizes {
			var dir string
			for _, op := range []string{"open", "balance", "utxos"} {
				b.Run(fmt.Sprintf("%s/utxos=%d/%s", shape, n, op), func(b *testing.B) {
					if dir == "" {
						dir = parent.TempDir()
						holdingsFixture(b, dir, shape, n)
					}
					var w *Wallet
					if op != "open" {
						var err error
						w, err = Open(dir)
						require.NoError(b, err)
						defer w.Close()
					}
					b.ReportAllocs()
					b.ResetTimer()
					for range b.N {
						switch op {
						case "open":
							w, err := Open(dir)
							if err != nil {
								require.NoError(b, err)
							}
							if err := w.Close(); err != nil {
								require.NoError(b, err)
							}
						case "balance":
							bal, err := w.Balance()
							if err != nil {
								require.NoError(b, err)
							}
							if bal.Confirmed == 0 {
								require.NotZero(b, bal.Confirmed, "no confirmed balance")
							}
						case "utxos":
							u, err := w.UTXOs()
							if err != nil {
								require.NoError(b, err)
							}
							if len(u) != n+1 {
								require.Len(b, u, n+1, "%d utxos, want %d", len(u), n+1)
							}
						}
					}
				})
			}
		}
	}
}

// TestUnspentIndexMatches checks that what Open reads from wtxmgr's
// unspent index (unspentOutpoints) and what Balance and UTXOs read once
// per transaction (readCoins) equal what wtxmgr's public API gives
// (UnspentOutputs), on a wallet with a transaction of 2,000 outputs, many
// small ones, spends confirmed and pending, a pending child, conflicts
// and a rollback, before and after reopening: a wtxmgr whose layout
// differs fails here.
func TestUnspentIndexMatches(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(dir, CreateConfig{Network: "regtest", Xpubs: []string{accountXpub(t, purposeBIP84, 1, versionVpub)}})
	require.NoError(t, err)
	keys := newTestKeys(t, purposeBIP84, 1, w.net.params)
	f := &txFactory{}
	chain := newTestChain(f, 100)
	outs := make([]output, 2_000)
	for i := range outs {
		outs[i] = output{keys.p2wpkh(extBranch, uint32(i%15)), 1_000 + int64(i)}
	}
	big := f.tx(nil, outs...)
	var small []*wire.MsgTx
	for i := range 50 {
		small = append(small, f.tx(nil, output{keys.p2wpkh(extBranch, uint32(i%15)), 5_000}))
	}
	mustApply(t, w, chain.add(append([]*wire.MsgTx{big}, small...)...).filtered())
	spend := f.tx([]wire.OutPoint{op(big, 0), op(small[0], 0)}, output{keys.p2wpkh(intBranch, 0), 3_000})
	mustApply(t, w, chain.add(spend).filtered())
	pending := f.tx([]wire.OutPoint{op(big, 1), op(spend, 0)}, output{keys.p2wpkh(intBranch, 1), 2_000}, output{foreignScript(1), 100})
	child := f.tx([]wire.OutPoint{op(pending, 0)}, output{keys.p2wpkh(extBranch, 3), 1_500})
	rival := f.tx([]wire.OutPoint{op(big, 1)}, output{foreignScript(2), 900})
	payment := f.tx(nil, output{keys.p2wpkh(extBranch, 4), 700})
	for _, tx := range []*wire.MsgTx{pending, child, rival, payment} {
		res, err := w.ApplyMempoolTx(tx)
		require.NoError(t, err)
		require.True(t, res.Relevant)
	}
	requireOutpointsMatchStore(t, w)
	mustApply(t, w, chain.add(f.tx([]wire.OutPoint{op(small[1], 0)}, output{foreignScript(3), 4_000})).filtered())
	mustRollback(t, w, 101)
	requireOutpointsMatchStore(t, w)
	bal := mustBalance(t, w)
	require.NoError(t, w.Close())
	w, err = Open(dir)
	require.NoError(t, err)
	defer w.Close()
	requireOutpointsMatchStore(t, w)
	require.Equal(t, bal, mustBalance(t, w))
	require.Equal(t, 3, mustBalance(t, w).Conflicts, "pending, its child and their rival")
}
