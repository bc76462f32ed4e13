package spv

import (
	"errors"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/watch"
	"github.com/bloomwatch/bloomwatch/watch/watchtest"
)

// failingWatcher is a MemWatcher whose ApplyBlock fails from height
// failAt on.
type failingWatcher struct {
	*watchtest.MemWatcher
	failAt int32
}

// errApply is failingWatcher's error.
var errApply = errors.New("the watcher's store failed")

func (w failingWatcher) ApplyBlock(b *watch.FilteredBlock) (watch.BlockResult, error) {
	if b.Height >= w.failAt {
		return watch.BlockResult{}, errApply
	}
	return w.MemWatcher.ApplyBlock(b)
}

// drain returns the events queued on sub, waiting at most a second for
// each after the first pause.
func drain(t *testing.T, sub *Subscription) []Event {
	t.Helper()
	var out []Event
	for {
		select {
		case ev, ok := <-sub.Events():
			if !ok {
				return out
			}
			out = append(out, ev)
		case <-time.After(time.Second):
			return out
		}
	}
}

// TestEventsCarryWhatStatusHad: a subscriber learns from the events alone
// what it read from Status before: the transactions tested so far
// (BlockProcessed.Tested), the filter's figures with its decoys
// (FilterLoaded), and the failure that stopped the sync (SyncStopped,
// with Status.Err's error).
func TestEventsCarryWhatStatusHad(t *testing.T) {
	w := failingWatcher{MemWatcher: watchtest.NewMemWatcher(1, p2wpkh(1)), failAt: 5}
	n, m := newTestManager(t, w, Config{Tuning: Tuning{BatchSize: 10}})
	sub := n.Subscribe()
	chain := mineBlocks(t, n.cfg.Network, genesis(n), 8, func(i int) []*wire.MsgTx {
		return []*wire.MsgTx{payTo(byte(i), 1000, p2wpkh(1)), payTo(byte(50+i), 7, p2wpkh(0x99))}
	})
	addSimPeer(t, m, "sim:1", chain, 0).run()
	var tested uint64
	var last BlockProcessed
	var loaded *FilterLoaded
	var stopped *SyncStopped
	for _, ev := range drain(t, sub) {
		switch ev := ev.(type) {
		case BlockProcessed:
			tested += uint64(len(chain[ev.Height-1].Transactions))
			require.Equal(t, tested, ev.Tested, "block %d: Tested %d, the blocks so far hold %d transactions", ev.Height, ev.Tested, tested)
			last = ev
		case FilterLoaded:
			loaded = &ev
		case SyncStopped:
			stopped = &ev
		}
	}
	require.Equal(t, int32(4), last.Height, "last block processed %d, want 4 (5 fails)", last.Height)
	require.NotNil(t, loaded, "filter loaded: %+v", loaded)
	require.Equal(t, 1, loaded.Elements, "filter loaded: %+v", loaded)
	require.Equal(t, 0, loaded.Decoys, "filter loaded: %+v", loaded)
	require.Equal(t, loaded.Record.Seq, loaded.Seq, "filter loaded: %+v", loaded)
	require.Equal(t, 1, loaded.Loads, "filter loaded: %+v", loaded)
	require.NotNil(t, stopped, "sync stopped: %+v", stopped)
	require.ErrorIs(t, stopped.Err, errApply, "sync stopped: %+v", stopped)
	require.ErrorIs(t, stopped.Err, ErrWatcher, "sync stopped: %+v", stopped)
}
