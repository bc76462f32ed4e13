package privacy

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/behaviour"
	"github.com/bloomwatch/bloomwatch/privacy/internal/testkit"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/stretchr/testify/require"
)

// TestMeterReadOncePerBatch feeds two meters one sync's events: one
// reads after every event (as a setter that returned the reading did),
// the other only at the end of each batch of events, as the session's
// bridge does. At each batch's end the readings are equal, and the
// histories too: the readings depend on what was fed, not on when it was
// read. The behaviour attack's reading is a cached one refreshed on its
// own schedule, so it is compared after Settle, which recomputes it from
// everything fed.
func TestMeterReadOncePerBatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(38, 38))
	els := testkit.Elements(rng, 400)
	filters := []*bip37.Filter{
		testkit.FilterOf(t, 600, 7, 11, els[:100]),
		testkit.FilterOf(t, 600, 7, 11, els[:180]),
		testkit.FilterOf(t, 1200, 7, 11, els[:300]),
	}
	eager, lazy := NewMeter(MeterConfig{}), NewMeter(MeterConfig{})
	var last Reading
	both := func(feed func(m *Meter)) {
		feed(eager)
		last = eager.Current()
		feed(lazy)
	}
	checkBatch := func(batch int) {
		got, want := lazy.Current(), last
		got.Behaviour, want.Behaviour = nil, nil
		require.Equal(t, want, got, "batch %d", batch)
	}
	both(func(m *Meter) { m.SetUniverse(50_000, "test") })
	both(func(m *Meter) { m.SetWallet(WalletCounts{OnChain: 0, Watched: 100, Elements: 100}) })
	checkBatch(0)
	seq := uint64(0)
	at := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	var fp, tested uint64
	height := int32(0)
	for batch, f := range filters {
		seq++
		rec := testkit.LoadRecord(seq, "127.0.0.1:18444", height, f)
		rec.Time = at.Add(time.Duration(seq) * time.Second)
		both(func(m *Meter) {
			_, err := m.Observe(rec)
			require.NoError(t, err)
		})
		for b := range 40 {
			height++
			if b%8 == 0 {
				seq++
				req := transcript.Record{Seq: seq, Time: at.Add(time.Duration(seq) * time.Second), Peer: "127.0.0.1:18444",
					Height: height, Count: 8, Kind: transcript.KindGetData, Reason: "sync"}
				both(func(m *Meter) { require.NoError(t, m.Feed(req)) })
			}
			matched, relevant := rng.IntN(3), 0
			if rng.IntN(4) == 0 {
				relevant = 1
			}
			fp += uint64(matched)
			tested += uint64(5 + rng.IntN(20))
			for range matched + relevant {
				var id chainhash.Hash
				id[0], id[1], id[2] = byte(batch), byte(b), byte(rng.IntN(256))
				both(func(m *Meter) {
					m.ObserveSent(at, "127.0.0.1:18444", height, behaviour.SentTx{ID: id, Wallet: relevant > 0})
				})
			}
			both(func(m *Meter) { m.ObserveBlock(matched+relevant, relevant) })
			both(func(m *Meter) { m.SetObserved(fp, tested) })
			both(func(m *Meter) { m.SetUniverse(50_000+uint64(height)*10, "test") })
		}
		both(func(m *Meter) {
			m.SetWallet(WalletCounts{OnChain: 10 * (batch + 1), Watched: 100 + 40*batch, Elements: 100 + 40*batch, Decoys: batch})
		})
		checkBatch(batch + 1)
	}
	require.Equal(t, eager.Settle(), lazy.Settle())
	require.Equal(t, eager.History(), lazy.History())
	r := lazy.Current()
	require.Equal(t, tested, r.ObservedTxTested)
	require.NotNil(t, r.ObservedTxFPCI)
	require.Positive(t, r.Entropy)
}
