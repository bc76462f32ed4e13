package wallet

import (
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcwallet/waddrmgr"
	"github.com/btcsuite/btcwallet/walletdb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// committedHeight reads the sync point straight from the committed
// database, bypassing the open batch.
func committedHeight(t testing.TB, w *Wallet) int32 {
	t.Helper()
	var h int32 = noHeight
	require.NoError(t, walletdb.View(w.db, func(tx walletdb.ReadTx) error {
		m, err := readMeta(tx.ReadBucket(ownNS))
		if err != nil || m.firstApplied == noHeight {
			return err
		}
		mgr, err := waddrmgr.Open(tx.ReadBucket(waddrmgrNS), publicPassphrase, w.net.params)
		if err != nil {
			return err
		}
		defer mgr.Close()
		h = mgr.SyncedTo().Height
		return nil
	}))
	return h
}

func TestBatchCommitsAtItsLimits(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	clock := func() time.Time { return now }
	w, keys := newRegtestWallet(t, WithBatch(3, time.Second), WithClock(clock))
	f := &txFactory{}
	chain := newTestChain(f, 0)
	apply := func() { mustApply(t, w, chain.add(f.tx(nil, output{keys.p2wpkh(extBranch, 0), 1})).filtered()) }

	tests := []struct {
		name          string
		step          func()
		wantApplied   int32
		wantCommitted int32
	}{
		{"first block stays in the batch", apply, 0, noHeight},
		{"second too", apply, 1, noHeight},
		{"third reaches the block limit", apply, 2, 2},
		{"next one opens a new batch", apply, 3, 2},
		{"age limit", func() { now = now.Add(time.Second); apply() }, 4, 4},
		{"another block", apply, 5, 4},
		{"flush", func() { require.NoError(t, w.Flush()) }, 5, 5},
		{"flush with nothing open", func() { require.NoError(t, w.Flush()) }, 5, 5},
		{"block then mempool tx commits", func() {
			apply()
			_, err := w.ApplyMempoolTx(f.tx(nil, output{keys.p2wpkh(extBranch, 1), 1}))
			require.NoError(t, err)
		}, 6, 6},
		{"a mempool false positive writes nothing", func() {
			apply()
			_, err := w.ApplyMempoolTx(f.tx(nil, output{foreignScript(1), 1}))
			require.NoError(t, err)
		}, 7, 6},
		{"block then rollback commits", func() { apply(); mustRollback(t, w, 5) }, 5, 5},
	}
	for _, tc := range tests {
		tc.step()
		sp, err := w.SyncedTo()
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.wantApplied, sp.Height, tc.name)
		require.Equal(t, tc.wantCommitted, committedHeight(t, w), tc.name)
	}
}

// TestConcurrentReaders reads from several goroutines while blocks are
// applied; run with -race.
func TestConcurrentReaders(t *testing.T) {
	w, keys := newRegtestWallet(t, WithBatch(4, 0))
	f := &txFactory{}
	chain := newTestChain(f, 0)
	const blocks = 40
	var wg sync.WaitGroup
	done := make(chan struct{})
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				_, err := w.Balance()
				assert.NoError(t, err)
				_, err = w.Txs()
				assert.NoError(t, err)
				_, err = w.FilterElements()
				assert.NoError(t, err)
				_, err = w.Stats()
				assert.NoError(t, err)
			}
		}()
	}
	for i := range blocks {
		mustApply(t, w, chain.add(f.tx(nil, output{keys.p2wpkh(extBranch, uint32(i)), 1_000})).filtered())
	}
	close(done)
	wg.Wait()
	require.Equal(t, Balance{Confirmed: blocks * 1_000}, mustBalance(t, w))
}
