package privacy

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/filterpolicy"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/internal/cputime"
	"github.com/bloomwatch/bloomwatch/privacy/internal/testkit"
	"github.com/bloomwatch/bloomwatch/privacy/replay"
	"github.com/bloomwatch/bloomwatch/privacy/stats"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/bloomwatch/bloomwatch/watch"
	"github.com/stretchr/testify/require"
)

func TestMeter(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 41))
	w := testkit.RandomCandidates(rng, 10, 1)
	f1 := testkit.MustFilter(t, 20, 0.01, 1, bip37.UpdateNone, w...)
	f2 := testkit.MustFilter(t, 20, 0.01, 2, bip37.UpdateNone, w...)
	const u = 1_000_000
	m := NewMeter(MeterConfig{History: 3})
	m.SetCandidates(u)
	r := m.Current()
	require.Equal(t, float64(0), r.ExpectedFP, "reading before any filter: %+v", r)
	require.Equal(t, 0, r.Filters, "reading before any filter: %+v", r)
	steps := []struct {
		name        string
		rec         transcript.Record
		wantFilters int
		wantSingle  float64 // rate of the latest filter
		wantInter   float64 // rate product of the intersection
	}{
		{"first load", testkit.LoadRecord(0, "a", 1, f1), 1, f1.CurrentFPRate(), f1.CurrentFPRate()},
		{"same filter to another peer", testkit.LoadRecord(1, "b", 1, f1), 1, f1.CurrentFPRate(), f1.CurrentFPRate()},
		{"restart with a fresh tweak", testkit.LoadRecord(2, "a", 2, f2), 2, f2.CurrentFPRate(), f1.CurrentFPRate() * f2.CurrentFPRate()},
	}
	for _, s := range steps {
		r, err := m.Observe(s.rec)
		require.NoError(t, err)
		// Without the wallet's counts the meter knows no N: not m^ (N = m^
		// would be wrong), no precision or entropy, and
		// every candidate a chance match.
		require.False(t, r.WalletKnown, "%s: wallet figures without the wallet: %+v", s.name, r)
		require.Equal(t, 0, r.Members, "%s: wallet figures without the wallet: %+v", s.name, r)
		require.Equal(t, float64(0), r.Precision, "%s: wallet figures without the wallet: %+v", s.name, r)
		require.Equal(t, float64(0), r.SingleEntropy, "%s: wallet figures without the wallet: %+v", s.name, r)
		require.Equal(t, s.wantFilters, r.Filters, "%s: %+v", s.name, r)
		require.True(t, testkit.Near(r.ExpectedFP, s.wantSingle*u, 1e-9), "%s: %+v", s.name, r)
		require.True(t, testkit.Near(r.IntersectionFP, s.wantInter*u, 1e-9), "%s: %+v", s.name, r)
		require.NotNil(t, r.EstElementsCI, "%s: m^ %v, interval %+v", s.name, r.EstElements, r.EstElementsCI)
		require.True(t, r.EstElementsCI.Contains(r.EstElements), "%s: m^ %v, interval %+v", s.name, r.EstElements, r.EstElementsCI)
	}
	raw, err := json.Marshal(m.Current())
	require.NoError(t, err, "JSON without the wallet's counts: %s (%v)", raw, err)
	require.False(t, bytes.Contains(raw, []byte(`"precision"`)), "JSON without the wallet's counts: %s (%v)", raw, err)
	require.False(t, bytes.Contains(raw, []byte(`"members"`)), "JSON without the wallet's counts: %s (%v)", raw, err)
	// The client's counts: N is the addresses on chain, not the watched
	// ones or the elements.
	m.SetWallet(WalletCounts{OnChain: 10, Watched: 40, Elements: 47})
	r = m.Current()
	fi := f1.CurrentFPRate() * f2.CurrentFPRate()
	require.True(t, r.WalletKnown, "with the wallet: %+v", r)
	require.Equal(t, 10, r.Members, "with the wallet: %+v", r)
	require.Equal(t, 40, r.Watched, "with the wallet: %+v", r)
	require.Equal(t, 47, r.Elements, "with the wallet: %+v", r)
	require.True(t, testkit.Near(r.IntersectionFP, fi*(u-10), 1e-9), "with the wallet: %+v", r)
	require.True(t, testkit.Near(r.ExpectedFP, f2.CurrentFPRate()*(u-10), 1e-9), "with the wallet: %+v", r)
	require.True(t, testkit.Near(r.Precision, stats.ExpectedPrecision(10, 0, fi*(u-10)), 1e-12), "precision/entropy %+v", r)
	require.True(t, testkit.Near(r.SingleEntropy, stats.ExpectedEntropy(10, 0, f2.CurrentFPRate()*(u-10)), 1e-12), "precision/entropy %+v", r)
	// Decoys match for certain and are not the wallet's.
	m.SetWallet(WalletCounts{OnChain: 10, Watched: 40, Elements: 47, Decoys: 3})
	r = m.Current()
	require.True(t, testkit.Near(r.IntersectionFP, 3+fi*(u-13), 1e-9), "with 3 decoys: %+v", r)
	require.True(t, testkit.Near(r.Precision, stats.ExpectedPrecision(10, 3, fi*(u-13)), 1e-12), "with 3 decoys: %+v", r)
	require.LessOrEqual(t, r.Precision, 10.0/13, "with 3 decoys: %+v", r)
	m.SetWallet(WalletCounts{OnChain: 10, Watched: 40, Elements: 47})
	// The observed per-transaction rate is a sample, with its interval.
	m.SetObserved(7, 10_000)
	obs := m.Current()
	require.Equal(t, 7e-4, obs.ObservedTxFPRate, "observed: %+v (%+v)", obs, obs.ObservedTxFPCI)
	require.NotNil(t, obs.ObservedTxFPCI, "observed: %+v (%+v)", obs, obs.ObservedTxFPCI)
	require.True(t, obs.ObservedTxFPCI.Contains(7e-4), "observed: %+v (%+v)", obs, obs.ObservedTxFPCI)
	require.Equal(t, stats.MethodBinomial, obs.ObservedTxFPCI.Method, "observed: %+v (%+v)", obs, obs.ObservedTxFPCI)
	require.LessOrEqual(t, obs.ObservedTxFPCI.Hi, 2e-3, "observed: %+v (%+v)", obs, obs.ObservedTxFPCI)
	added := []byte("a new address hash")
	r, err = m.Observe(transcript.Record{Seq: 3, Kind: transcript.KindFilterAdd, Peer: "b", Data: added})
	require.NoError(t, err)
	g := f1.Clone()
	g.Add(added)
	require.Equal(t, 10, r.Members, "after filteradd: %+v", r)
	require.Equal(t, 1, r.Revealed, "after filteradd: %+v", r)
	require.Equal(t, g.CurrentFPRate(), r.FPRate, "after filteradd: %+v", r)
	require.Equal(t, uint64(7), r.ObservedTxFP, "after filteradd: %+v", r)
	// Peer b's grown filter and peer a's old f1 share tweak and size: their
	// AND is f1's bits, so the intersection rate is unchanged.
	require.True(t, testkit.Near(r.IntersectionFP, f1.CurrentFPRate()*f2.CurrentFPRate()*(u-10), 1e-9), "intersection after filteradd %v", r.IntersectionFP)
	h := m.History()
	require.Len(t, h, 3, "history %+v", h)
	require.Equal(t, uint64(1), h[0].Seq, "history %+v", h)
	require.Equal(t, uint64(3), h[2].Seq, "history %+v", h)
	before := m.Current()
	_, err = m.Observe(transcript.Record{Seq: 9, Kind: transcript.KindFilterLoad, Peer: "c", Filter: []byte{1}})
	require.ErrorIs(t, err, replay.ErrBadFilterRecord, "err = %v", err)
	require.Equal(t, before, m.Current(), "a bad record changed the meter")
	require.Len(t, m.History(), 3, "a bad record changed the meter")
	_, err = m.Observe(transcript.Record{Kind: transcript.KindFilterClear, Peer: "a"})
	require.NoError(t, err)
}

// TestMeterAgreesWithAnalyze checks the live meter's formula against the
// analyzer's on the same transcript.
func TestMeterAgreesWithAnalyze(t *testing.T) {
	fx := newFixture(42, 10, 30000, 1)
	var recs []transcript.Record
	for i := range 3 {
		recs = append(recs, testkit.LoadRecord(uint64(i), "p", int32(i), testkit.MustFilter(t, 10, 0.05, uint32(i), bip37.UpdateNone, fx.wallet...)))
	}
	rep := analyze(t, Input{Records: recs, Universe: element.Stream(element.SliceUniverse(fx.universe)), Truth: fx.wallet, Attacks: Attacks{Intersection: true}})
	m := NewMeter(MeterConfig{})
	m.SetCandidates(uint64(len(fx.universe)))
	m.SetWallet(WalletCounts{OnChain: 10, Watched: 10, Elements: 10})
	for i, r := range recs {
		rd, err := m.Observe(r)
		require.NoError(t, err)
		p := rep.Curve(StageIntersection).Points[i]
		require.True(t, testkit.Near(rd.IntersectionFP, p.ExpectedFP, 1e-9), "record %d: meter %v/%v, analyzer %v/%v", i, rd.IntersectionFP, rd.Entropy, p.ExpectedFP, p.ExpectedEntropy)
		require.True(t, testkit.Near(rd.Entropy, p.ExpectedEntropy, 1e-9), "record %d: meter %v/%v, analyzer %v/%v", i, rd.IntersectionFP, rd.Entropy, p.ExpectedFP, p.ExpectedEntropy)
		require.True(t, testkit.Near(rd.Precision, p.ExpectedPrecision, 1e-9), "record %d: meter %v/%v, analyzer %v/%v", i, rd.IntersectionFP, rd.Entropy, p.ExpectedFP, p.ExpectedEntropy)
	}
}

// TestRestoreIsObserveRecordByRecord feeds one transcript to two meters:
// record by record (Observe) and at once (Restore, which brings the model
// up to date once). Both end in the same state: the same reading, and the
// same reading again after one more record; Restore skips what Observe
// refuses and says so.
func TestRestoreIsObserveRecordByRecord(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	cands := testkit.RandomCandidates(rng, 400, 1)
	var recs []transcript.Record
	seq := uint64(0)
	next := func(r transcript.Record) {
		r.Seq = seq
		seq++
		recs = append(recs, r)
	}
	// One tweak, nested sizes, the same filter to three peers, the wallet
	// growing: as the node sends them.
	for i := 0; i < 30; i++ {
		n := uint32(64 << (i / 10))
		f := testkit.MustFilter(t, n, 1e-4, 0x5eed, bip37.UpdateAll, cands[:10+5*i]...)
		for _, p := range []string{"a", "b", "c"} {
			next(testkit.LoadRecord(0, p, int32(100+i), f))
		}
		if i == 12 {
			next(transcript.Record{Peer: "b", Kind: transcript.KindFilterAdd, Data: cands[399].Forms[0]})
			next(transcript.Record{Peer: "c", Kind: transcript.KindFilterClear})
			next(transcript.Record{Peer: "a", Kind: transcript.KindGetData, Height: 5, Count: 2})
			next(transcript.Record{Peer: "a", Kind: transcript.KindFilterLoad, Filter: []byte{1, 2, 3}}) // refused
		}
	}
	one := NewMeter(MeterConfig{})
	one.SetUniverse(5_000_000, "test")
	one.SetWallet(WalletCounts{OnChain: 20, Watched: 60, Elements: 70})
	var refused int
	for _, r := range recs {
		if _, err := one.Observe(r); err != nil {
			refused++
		}
	}
	all := NewMeter(MeterConfig{})
	all.SetUniverse(5_000_000, "test")
	all.SetWallet(WalletCounts{OnChain: 20, Watched: 60, Elements: 70})
	got, err := all.Restore(recs)
	require.Equal(t, 1, refused, "Observe refused %d records, Restore said %v", refused, err)
	require.ErrorIs(t, err, replay.ErrBadFilterRecord, "Observe refused %d records, Restore said %v", refused, err)
	want := one.Current()
	require.Equal(t, want, got, "restored reading\n%+v\nrecord by record\n%+v", got, want)
	h := all.History()
	require.Len(t, h, 1, "history after Restore: %d readings", len(h))
	require.Equal(t, got, h[0], "history after Restore: %d readings", len(h))
	f := testkit.MustFilter(t, 512, 1e-4, 0x5eed, bip37.UpdateAll, cands[:200]...)
	more := testkit.LoadRecord(seq, "a", 200, f)
	r1, err1 := one.Observe(more)
	r2, err2 := all.Observe(more)
	require.NoError(t, err1, "after one more record:\n%+v (%v)\n%+v (%v)", r1, err1, r2, err2)
	require.NoError(t, err2, "after one more record:\n%+v (%v)\n%+v (%v)", r1, err1, r2, err2)
	require.Equal(t, r2, r1, "after one more record:\n%+v (%v)\n%+v (%v)", r1, err1, r2, err2)
	empty, err := NewMeter(MeterConfig{}).Restore(nil)
	require.NoError(t, err, "empty restore: %+v", empty)
	require.Equal(t, 0, empty.Filters, "empty restore: %+v, %v", empty, err)
}

// BenchmarkMeterStartup brings a meter to the filters of a transcript of
// 1,000 filterload records (one tweak, each filter sent to three peers,
// five elements more between loads, nested sizes: what a session finds
// at start-up, sized as the node sizes them), record by record (observe: as sessions did before
// Restore) or at once (restore). The records carry their filters decoded
// (transcript.Read's); observe-decode decodes each again as Observe did
// before the record shared its filter.
func BenchmarkMeterStartup(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	cands := testkit.RandomCandidates(rng, 2000, 1)
	var recs []transcript.Record
	var raw []transcript.Record
	for i := 0; len(recs) < 1000; i++ {
		var els watch.Elements
		for _, c := range cands[:40+5*i] {
			els.Data = append(els.Data, c.Forms[0])
		}
		f, err := filterpolicy.BuildFilter(els, filterpolicy.DefaultFPRate, 0x5eed)
		if err != nil {
			require.NoError(b, err)
		}
		for _, p := range []string{"a", "b", "c"} {
			r := testkit.LoadRecord(uint64(len(recs)), p, int32(100+i), f)
			raw = append(raw, r)
			recs = append(recs, r.WithBloom(f))
		}
	}
	recs, raw = recs[:1000], raw[:1000]
	// CPU time beside the wall time, which the shared machine's load
	// stretches.
	run := func(name string, f func(m *Meter) error) {
		b.Run(name, func(b *testing.B) {
			cpu0 := cputime.Process()
			for b.Loop() {
				if err := f(NewMeter(MeterConfig{})); err != nil {
					require.NoError(b, err)
				}
			}
			b.ReportMetric(float64(cputime.Process()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		})
	}
	observe := func(recs []transcript.Record) func(m *Meter) error {
		return func(m *Meter) error {
			for _, r := range recs {
				if _, err := m.Observe(r); err != nil {
					return err
				}
			}
			return nil
		}
	}
	run("observe-decode", observe(raw))
	run("observe", observe(recs))
	run("restore", func(m *Meter) error { _, err := m.Restore(recs); return err })
}
