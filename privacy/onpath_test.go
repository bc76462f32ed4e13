package privacy

import (
	"math"
	"strings"
	"testing"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/internal/testkit"
	"github.com/bloomwatch/bloomwatch/transcript"
)

// TestMeterOnPathBesidePeers checks the meter's on-path reading: over v1
// the observer is left the set the colluding peers are left (it reads the
// same filters), over v2 the whole universe (it reads none), whatever the
// filters.
func TestMeterOnPathBesidePeers(t *testing.T) {
	filters := make([][]byte, 3)
	for i := range filters {
		f, err := bip37.NewFilter(uint32(64<<i), 1e-3, 9, bip37.UpdateAll)
		if err != nil {
			t.Fatal(err)
		}
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
			if err != nil {
				t.Fatal(err)
			}
		}
		m.ObserveBlock(3, 1)
		rd = m.Current()
		op := rd.OnPath
		if op.Loads != 3 || op.Blocks != 1 || op.WalletBlocks != 1 {
			t.Fatalf("%q: %+v", tr, op)
		}
		if tr == transcript.TransportV2 {
			if op.Encrypted != 3 || op.Rate != 1 || op.ExpectedFP != 100_000-20 || op.MinElements != 0 || op.MaxElements != 1024 {
				t.Errorf("v2: %+v", op)
			}
			continue
		}
		if op.Clear != 3 || math.Abs(op.Rate-rd.IntersectionRate) > 1e-15 || math.Abs(op.ExpectedFP-rd.IntersectionFP) > 1e-9 ||
			op.Precision == nil || math.Abs(*op.Precision-rd.Precision) > 1e-12 {
			t.Errorf("%q: on-path rate %g, fp %g, precision %v; the peers' %g, %g, %g", tr, op.Rate, op.ExpectedFP, op.Precision,
				rd.IntersectionRate, rd.IntersectionFP, rd.Precision)
		}
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
		if err := rep.WriteTable(&b); err != nil {
			t.Fatal(err)
		}
		n, u := 20.0, float64(len(fx.universe))
		switch tr {
		case transcript.TransportV1:
			if op.Clear != 1 || !testkit.Near(op.ExpectedFP, f.CurrentFPRate()*(u-n), 1e-9) || !strings.Contains(b.String(), "read all 1 filterloads") {
				t.Errorf("v1: %+v\n%s", op, b.String())
			}
		default:
			if op.Encrypted != 1 || op.ExpectedFP != u-n || op.MaxElements != 512 || !strings.Contains(b.String(), "4096-byte burst gives a wallet of 0 to 512 elements") {
				t.Errorf("v2: %+v\n%s", op, b.String())
			}
		}
	}
}
