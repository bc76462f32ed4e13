package privacy

import (
	"strings"
	"testing"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/internal/testkit"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/stretchr/testify/require"
)

// TestMeterOnPathBesidePeers checks the meter's on-path reading: over v1
// the observer is left the set the colluding peers are left (it reads the
// same filters), over v2 the whole universe (it reads none), whatever the
// filters.
func TestMeterOnPathBesidePeers(t *testing.T) {
	filters := make([][]byte, 3)
	for i := range filters {
		f, err := bip37.NewFilter(uint32(64<<i), 1e-3, 9, bip37.UpdateAll)
		require.NoError(t, err)
		for j := range 30 + 10*i {
			f.Add([]byte{byte(j), byte(j >> 8), 7})
		}
		filters[i] = f.Serialize()
	}
	for _, tr := range []string{"", transcript.TransportV1, transcript.TransportV2} {
		m := NewMeter(MeterConfig{FPRate: 1e-3})
		m.SetUniverse(100_000, "test")
		m.SetWallet(WalletCounts{OnChain: 20, Watched: 60, Elements: 80, Decoys: 3})
		var rd Reading
		for i, ser := range filters {
			var err error
			rd, err = m.Observe(transcript.Record{Seq: uint64(i), Kind: transcript.KindFilterLoad, Filter: ser,
				Peer: "p", Transport: tr, Wire: map[bool]int{true: 4096}[tr == transcript.TransportV2]})
			require.NoError(t, err)
		}
		m.ObserveBlock(3, 1)
		rd = m.Current()
		op := rd.OnPath
		require.Equal(t, 3, op.Loads, "%q: %+v", tr, op)
		require.Equal(t, 1, op.Blocks, "%q: %+v", tr, op)
		require.Equal(t, 1, op.WalletBlocks, "%q: %+v", tr, op)
		if tr == transcript.TransportV2 {
			require.Equal(t, 3, op.Encrypted, "v2: %+v", op)
			require.Equal(t, float64(1), op.Rate, "v2: %+v", op)
			require.Equal(t, float64(100_000-20), op.ExpectedFP, "v2: %+v", op)
			require.Equal(t, 0, op.MinElements, "v2: %+v", op)
			require.Equal(t, 1024, op.MaxElements, "v2: %+v", op)
			continue
		}
		require.Equal(t, 3, op.Clear, "%q: on-path rate %g, fp %g, precision %v; the peers' %g, %g, %g", tr, op.Rate, op.ExpectedFP, op.Precision, rd.IntersectionRate, rd.IntersectionFP, rd.Precision)
		require.InDelta(t, rd.IntersectionRate, op.Rate, 1e-15, "%q: on-path rate %g, fp %g, precision %v; the peers' %g, %g, %g", tr, op.Rate, op.ExpectedFP, op.Precision, rd.IntersectionRate, rd.IntersectionFP, rd.Precision)
		require.InDelta(t, rd.IntersectionFP, op.ExpectedFP, 1e-9, "%q: on-path rate %g, fp %g, precision %v; the peers' %g, %g, %g", tr, op.Rate, op.ExpectedFP, op.Precision, rd.IntersectionRate, rd.IntersectionFP, rd.Precision)
		require.NotNil(t, op.Precision, "%q: on-path rate %g, fp %g, precision %v; the peers' %g, %g, %g", tr, op.Rate, op.ExpectedFP, op.Precision, rd.IntersectionRate, rd.IntersectionFP, rd.Precision)
		require.InDelta(t, rd.Precision, *op.Precision, 1e-12, "%q: on-path rate %g, fp %g, precision %v; the peers' %g, %g, %g", tr, op.Rate, op.ExpectedFP, op.Precision, rd.IntersectionRate, rd.IntersectionFP, rd.Precision)
	}
}

// TestAnalyzeOnPath checks the report's on-path reading: a transcript
// sent over v1 leaves the observer the peers' set (the single filter's
// expected false positives), the same one over v2 leaves it the whole
// universe and the element range of the burst; the table says which.
func TestAnalyzeOnPath(t *testing.T) {
	fx := newFixture(31, 20, 20000, 1)
	f := testkit.MustFilter(t, 64, 1e-4, 7, bip37.UpdateAll, fx.wallet...)
	for _, tr := range []string{transcript.TransportV1, transcript.TransportV2} {
		rec := testkit.LoadRecord(0, "127.0.0.1:1", 5, f)
		rec.Transport = tr
		if tr == transcript.TransportV2 {
			rec.Wire = 4096
		}
		rep := analyze(t, Input{Records: []transcript.Record{rec}, Universe: element.Stream(element.SliceUniverse(fx.universe)), Truth: fx.wallet})
		op := rep.OnPath
		var b strings.Builder
		require.NoError(t, rep.WriteTable(&b))
		n, u := 20.0, float64(len(fx.universe))
		switch tr {
		case transcript.TransportV1:
			require.Equal(t, 1, op.Clear, "v1: %+v\n%s", op, b.String())
			require.True(t, testkit.Near(op.ExpectedFP, f.CurrentFPRate()*(u-n), 1e-9), "v1: %+v\n%s", op, b.String())
			require.Contains(t, b.String(), "read all 1 filterloads", "v1: %+v\n%s", op, b.String())
		default:
			require.Equal(t, 1, op.Encrypted, "v2: %+v\n%s", op, b.String())
			require.Equal(t, op.ExpectedFP, u-n, "v2: %+v\n%s", op, b.String())
			require.Equal(t, 512, op.MaxElements, "v2: %+v\n%s", op, b.String())
			require.Contains(t, b.String(), "4096-byte burst gives a wallet of 0 to 512 elements", "v2: %+v\n%s", op, b.String())
		}
	}
}
