package privacy

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/filterpolicy"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/internal/testkit"
	"github.com/bloomwatch/bloomwatch/transcript"
)

// TestObserveFilteredBlocks reads a scripted v2 stream: a getdata for four
// blocks, a pong, an empty merkleblock, a matched one and its two
// transactions (one whose size two of the block's transactions share),
// an empty one followed by a coinbase match, and an empty one.
func TestObserveFilteredBlocks(t *testing.T) {
	blocks := []PathBlock{
		{Height: 10, TxSizes: []int{150, 300}},
		{Height: 11, TxSizes: []int{150, 222, 250, 250}},
		{Height: 12, TxSizes: []int{180}},
		{Height: 13, TxSizes: []int{150, 400}},
	}
	gd := filterpolicy.V2PacketOverhead + 1 + 1 + 36*4
	pkts := []PathPacket{
		{Out: true, Bytes: 29}, // a ping before: no getdata
		{Out: false, Bytes: 2500},
		{Out: true, Bytes: gd}, // before any filterload: handshake bytes
		{Out: true, Bytes: 4096},
		{Out: true, Bytes: gd},
		{Out: true, Bytes: 29},
		{Bytes: EmptyMerkleBlockWire},
		{Bytes: EmptyMerkleBlockWire + 64},
		{Bytes: 222 + txWireOverhead},
		{Bytes: 250 + txWireOverhead},
		{Bytes: EmptyMerkleBlockWire},
		{Bytes: 180 + txWireOverhead},
		{Bytes: 29}, // the pong
		{Bytes: EmptyMerkleBlockWire},
	}
	got := ObserveFilteredBlocks(pkts, blocks, 1e-4)
	if got.Requested != 4 || got.Parsed != 4 {
		t.Fatalf("requested %d parsed %d, want 4 and 4", got.Requested, got.Parsed)
	}
	if !slices.Equal(got.Matched, []int32{11, 12}) {
		t.Fatalf("matched %v, want [11 12]", got.Matched)
	}
	want := []PathTx{{11, []int{1}}, {11, []int{2, 3}}, {12, []int{0}}}
	if len(got.Txs) != len(want) {
		t.Fatalf("txs %+v", got.Txs)
	}
	for i, w := range want {
		if got.Txs[i].Height != w.Height || !slices.Equal(got.Txs[i].Candidates, w.Candidates) {
			t.Errorf("tx %d: %+v, want %+v", i, got.Txs[i], w)
		}
	}
	if getDataCount(gd) != 4 || getDataCount(gd+1) != -1 || getDataCount(filterpolicy.V2PacketOverhead+1+3+36*300) != 300 {
		t.Errorf("getDataCount")
	}
}

// TestOnPathReadsClearFiltersOnly feeds a v1 and a v2 filterload: the
// observer reads the first (its rate is the filter's) and only the size
// of the second (the element range of a 4,096-byte burst); blocks with
// matches count whatever they held.
func TestOnPathReadsClearFiltersOnly(t *testing.T) {
	f, err := bip37.NewFilter(64, 1e-4, 5, bip37.UpdateAll)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		f.Add([]byte{byte(i), 1, 2})
	}
	o := NewOnPath(0)
	rd := o.Reading(1000, true, 20, 0)
	if rd.Rate != 1 || rd.Loads != 0 || rd.MinElements != -1 || rd.BlockPrecision != 1 {
		t.Fatalf("empty reading %+v", rd)
	}
	ser := f.Serialize()
	o.Observe(transcript.Record{Kind: transcript.KindFilterLoad, Filter: ser}) // no transport: v1
	rd = o.Reading(1000, true, 20, 0)
	if rd.Clear != 1 || math.Abs(rd.Rate-f.CurrentFPRate()) > 1e-12 {
		t.Fatalf("after a v1 load: %+v (filter rate %g)", rd, f.CurrentFPRate())
	}
	o.Observe(transcript.Record{Kind: transcript.KindFilterLoad, Filter: ser, Transport: transcript.TransportV2, Wire: 4096})
	o.ObserveBlock(2, 1)
	o.ObserveBlock(1, 0)
	o.ObserveBlock(0, 0)
	rd = o.Reading(1000, true, 20, 0)
	if rd.Loads != 2 || rd.Encrypted != 1 || rd.MinElements != 0 || rd.MaxElements != 512 || rd.Wire != 4096 {
		t.Fatalf("after a v2 load: %+v", rd)
	}
	if rd.Blocks != 2 || rd.WalletBlocks != 1 || rd.BlockPrecision != 0.5 {
		t.Fatalf("blocks: %+v", rd)
	}
}

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
