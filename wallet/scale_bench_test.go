package wallet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/btcsuite/btcwallet/waddrmgr"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/watch"
)

// benchAddress returns the i-th of a family of distinct regtest P2WPKH
// addresses nobody else uses, with its output script. The hashes are
// pseudo-random, as real ones are: sorted keys would hide the cost of
// inserting into the middle of the database's pages.
func benchAddress(tb testing.TB, i int) (string, []byte) {
	tb.Helper()
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(i))
	h := btcutil.Hash160(append([]byte("bloomwatch bench address "), n[:]...))
	addr, err := btcutil.NewAddressWitnessPubKeyHash(h, &chaincfg.RegressionNetParams)
	require.NoError(tb, err)
	script, err := txscript.PayToAddrScript(addr)
	require.NoError(tb, err)
	return addr.EncodeAddress(), script
}

// benchAddresses returns n benchAddress strings.
func benchAddresses(tb testing.TB, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i], _ = benchAddress(tb, i)
	}
	return out
}

// BenchmarkCreateImported measures Create with many single addresses (one
// op is one whole wallet) beside a wallet of 20, and the Open of the
// result.
func BenchmarkCreateImported(b *testing.B) {
	for _, n := range []int{20, 10_000, 100_000} {
		addrs := benchAddresses(b, n)
		b.Run(fmt.Sprintf("addrs=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				dir := b.TempDir()
				w, err := Create(dir, CreateConfig{Network: "regtest", Addresses: addrs})
				if err != nil {
					require.NoError(b, err)
				}
				if err := w.Close(); err != nil {
					require.NoError(b, err)
				}
			}
		})
	}
}

// BenchmarkAddAddress measures importing addresses into an existing wallet
// one call each (AddAddress, one commit per address), per address, into
// wallets already holding 20 and 10,000.
func BenchmarkAddAddress(b *testing.B) {
	for _, have := range []int{20, 10_000} {
		b.Run(fmt.Sprintf("have=%d", have), func(b *testing.B) {
			w, err := Create(b.TempDir(), CreateConfig{Network: "regtest", Addresses: benchAddresses(b, have)})
			require.NoError(b, err)
			defer w.Close()
			next := make([]string, b.N)
			for i := range next {
				next[i], _ = benchAddress(b, have+i)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for _, a := range next {
				if _, err := w.AddAddress(a); err != nil {
					require.NoError(b, err)
				}
			}
		})
	}
}

// BenchmarkAddAddressWatched measures AddAddress of an address the wallet
// (10,000 imported addresses and an account) already watches, as a sync
// restarted with its address list asks for each: refused before any write
// (it was a failed write and a reload of the wallet, 18.7 ms each).
func BenchmarkAddAddressWatched(b *testing.B) {
	addrs := benchAddresses(b, 10_000)
	w, err := Create(b.TempDir(), CreateConfig{Network: "regtest", Xpubs: []string{accountXpub(b, purposeBIP84, 1, versionVpub)}, Addresses: addrs})
	require.NoError(b, err)
	defer w.Close()
	b.ResetTimer()
	for i := range b.N {
		if _, err := w.AddAddress(addrs[i%len(addrs)]); !errors.Is(err, ErrDuplicate) {
			require.ErrorIs(b, err, ErrDuplicate, "AddAddress of a watched address: %v", err)
		}
	}
}

// BenchmarkAddAddresses measures importing 100,000 addresses in one
// AddAddresses call (one op is the whole batch) into a wallet holding 20;
// BenchmarkAddAddress is the same one call, and one commit, per address.
func BenchmarkAddAddresses(b *testing.B) {
	const n = 100_000
	all := benchAddresses(b, 20+n)
	b.ReportAllocs()
	for range b.N {
		b.StopTimer()
		w, err := Create(b.TempDir(), CreateConfig{Network: "regtest", Addresses: all[:20]})
		require.NoError(b, err)
		b.StartTimer()
		if _, err := w.AddAddresses(all[20:]); err != nil {
			require.NoError(b, err)
		}
		b.StopTimer()
		require.NoError(b, w.Close())
	}
}

// BenchmarkOpenImported measures Open (and Close) of a wallet holding many
// single addresses, beside one holding 20.
func BenchmarkOpenImported(b *testing.B) {
	for _, n := range []int{20, 100_000} {
		b.Run(fmt.Sprintf("addrs=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			w, err := Create(dir, CreateConfig{Network: "regtest", Addresses: benchAddresses(b, n)})
			require.NoError(b, err)
			require.NoError(b, w.Close())
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				w, err := Open(dir)
				if err != nil {
					require.NoError(b, err)
				}
				if err := w.Close(); err != nil {
					require.NoError(b, err)
				}
			}
		})
	}
}

// Shape of the blocks of BenchmarkApplyBlockScale: scaleBlockTxs delivered
// transactions (a saturated filter, or a wallet matched by many), of which
// scalePayments pay fresh receive addresses of the HD account (the branch
// grows in strides, see nextStride) and scaleSpends spend wallet coins;
// the rest are false positives. scaleHistoryBlock is how many wallet
// transactions each block of a prepared history holds.
const (
	scaleBlockTxs     = 2000
	scalePayments     = 20
	scaleSpends       = 10
	scaleHistoryBlock = 100
)

// scaleSpec is one wallet of BenchmarkApplyBlockScale.
type scaleSpec struct {
	name string
	// imported single addresses, past wallet transactions (paying them,
	// or the account's first receive addresses when there are none;
	// every other one also spends an earlier coin), the receive gap
	// limit (0: the default), and whether an unconfirmed wallet
	// transaction is pending during the run.
	imported, history int
	gap               uint32
	pending           bool
}

// scaleFixture is a prepared wallet file and the state to continue its
// chain from.
type scaleFixture struct {
	db      string // the wallet.db to copy
	keys    *testKeys
	f       txFactory
	prev    chainhash.Hash
	height  int32
	coins   []wire.OutPoint // wallet coins to spend, oldest first
	nextExt uint32          // next fresh receive index
	scripts int             // watched scripts
}

// buildScaleFixture creates and syncs the wallet of spec in dir.
func buildScaleFixture(b *testing.B, dir string, spec scaleSpec) *scaleFixture {
	b.Helper()
	keys := newTestKeys(b, purposeBIP84, 1, &chaincfg.RegressionNetParams)
	w, err := Create(dir, CreateConfig{
		Network:     "regtest",
		Xpubs:       []string{accountXpub(b, purposeBIP84, 1, versionVpub)},
		Addresses:   benchAddresses(b, spec.imported),
		GapExternal: spec.gap,
	}, WithClock(time.Now))
	require.NoError(b, err)
	fx := &scaleFixture{keys: keys}
	f := &txFactory{}
	chain := newTestChain(f, 1)
	var coins []wire.OutPoint
	// A first payment to receive index 0 makes the branch take its first
	// stride before the timed blocks.
	prime := f.tx(nil, output{keys.p2wpkh(extBranch, 0), 50_000})
	mustApply(b, w, chain.add(prime).filtered())
	coins = append(coins, op(prime, 0))
	fx.nextExt = 1
	for done := 0; done < spec.history; {
		txs := make([]*wire.MsgTx, 0, scaleHistoryBlock)
		for j := 0; j < scaleHistoryBlock && done < spec.history; j, done = j+1, done+1 {
			var script []byte
			if spec.imported > 0 {
				_, script = benchAddress(b, done%spec.imported)
			} else {
				script = keys.p2wpkh(extBranch, uint32(done%10))
			}
			var ins []wire.OutPoint
			if done%2 == 1 && len(coins) > 0 {
				ins, coins = coins[:1:1], coins[1:]
			}
			tx := f.tx(ins, output{script, 10_000 + int64(done)}, output{foreignScript(uint32(done)), 1_000})
			coins = append(coins, op(tx, 0))
			txs = append(txs, tx)
		}
		mustApply(b, w, chain.add(txs...).filtered())
	}
	if spec.pending {
		res, err := w.ApplyMempoolTx(f.tx(nil, output{keys.p2wpkh(extBranch, 0), 7_000}))
		require.NoError(b, err)
		require.True(b, res.Relevant)
	}
	st, err := w.Stats()
	require.NoError(b, err)
	require.NoError(b, w.Close())
	fx.db, fx.f, fx.prev, fx.height, fx.coins, fx.scripts = dbPath(dir), *f, chain.prev, chain.height, coins, st.Scripts
	return fx
}

// copyFile copies the file at src to dst.
func copyFile(tb testing.TB, src, dst string) {
	tb.Helper()
	in, err := os.Open(src)
	require.NoError(tb, err)
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	require.NoError(tb, err)
	_, err = io.Copy(out, in)
	require.NoError(tb, err)
	require.NoError(tb, out.Close())
}

// BenchmarkApplyBlockScale measures ApplyBlock per block at scale: blocks
// of 2,000 delivered transactions (20 paying fresh receive addresses, 10
// spending wallet coins, 1,970 false positives), committed once at the end
// (amortized), on wallets of growing size. The first sub-benchmark is the baseline
// (one BIP84 account, 30 addresses, no history): compare each ns/op with
// it in the same run. "addrs" reports the watched scripts at the start.
func BenchmarkApplyBlockScale(b *testing.B) {
	specs := []scaleSpec{
		{name: "base"},
		{name: "imported=2000", imported: 2_000},
		{name: "imported=10000", imported: 10_000},
		{name: "gap=5000", gap: 5_000},
		{name: "history=10000", history: 10_000},
		{name: "imported=2000/history=10000", imported: 2_000, history: 10_000},
		{name: "imported=10000/history=10000", imported: 10_000, history: 10_000},
		{name: "imported=10000/history=10000/pending", imported: 10_000, history: 10_000, pending: true},
	}
	// The fixtures are built once per spec, in the parent's directory:
	// b.Run calls each function several times.
	fixtures := map[string]*scaleFixture{}
	parent := b
	for _, spec := range specs {
		b.Run(spec.name, func(b *testing.B) {
			fx := fixtures[spec.name]
			if fx == nil {
				fx = buildScaleFixture(b, parent.TempDir(), spec)
				fixtures[spec.name] = fx
			}
			dir := b.TempDir()
			copyFile(b, fx.db, dbPath(dir))
			f := fx.f
			chain := &testChain{f: &f, prev: fx.prev, height: fx.height, start: time.Unix(1_700_000_000, 0)}
			fps := make([]*wire.MsgTx, scaleBlockTxs-scalePayments-scaleSpends)
			for i := range fps {
				fps[i] = f.tx(nil, output{foreignScript(uint32(i)), 1_000})
			}
			coins := append([]wire.OutPoint(nil), fx.coins...)
			next := fx.nextExt
			blocks := make([]*watch.FilteredBlock, b.N)
			for i := range blocks {
				txs := make([]*wire.MsgTx, 0, scaleBlockTxs)
				for range scalePayments {
					tx := f.tx(nil, output{fx.keys.p2wpkh(extBranch, next), 20_000})
					next++
					coins = append(coins, op(tx, 0))
					txs = append(txs, tx)
				}
				for range scaleSpends {
					spent := coins[0]
					coins = coins[1:]
					txs = append(txs, f.tx([]wire.OutPoint{spent}, output{foreignScript(7), 5_000}))
				}
				txs = append(txs, fps...)
				blocks[i] = chain.add(txs...).filtered()
				chain.blocks = nil
			}
			// One commit at the end (Flush), not one per interval: the
			// disk's fsync time would dominate and vary between runs.
			w, err := Open(dir, WithClock(time.Now), WithBatch(DefaultBatchBlocks, 0))
			require.NoError(b, err)
			defer w.Close()
			b.ReportAllocs()
			b.ResetTimer()
			for _, blk := range blocks {
				if _, err := w.ApplyBlock(blk); err != nil {
					require.NoError(b, err)
				}
			}
			if err := w.Flush(); err != nil {
				require.NoError(b, err)
			}
			b.StopTimer()
			b.ReportMetric(float64(fx.scripts), "addrs")
		})
	}
}

// BenchmarkDeriveStride measures gap-limit derivation per address (one op
// is one address derived, stored in hd-scripts and watched), in strides of
// 40 (the default receive gap's) and 10,000 (gap 5,000), inside one
// database transaction per stride as ApplyBlock does.
func BenchmarkDeriveStride(b *testing.B) {
	for _, stride := range []uint32{40, 10_000} {
		b.Run(fmt.Sprintf("stride=%d", stride), func(b *testing.B) {
			w, err := Create(b.TempDir(), CreateConfig{
				Network: "regtest",
				Xpubs:   []string{accountXpub(b, purposeBIP84, 1, versionVpub)},
			})
			require.NoError(b, err)
			defer w.Close()
			key := branchKey{scope: waddrmgr.KeyScope{Purpose: purposeBIP84, Coin: 1}, account: 0, branch: waddrmgr.ExternalBranch}
			b.ReportAllocs()
			b.ResetTimer()
			w.mu.Lock()
			defer w.mu.Unlock()
			for done := uint32(0); done < uint32(b.N); {
				n := min(stride, uint32(b.N)-done)
				err := w.updateNow(func(bk buckets) error {
					_, err := w.deriveThrough(bk.am, key, w.watch.derived[key]+n-1, false)
					return err
				})
				if err != nil {
					require.NoError(b, err)
				}
				done += n
			}
		})
	}
}
