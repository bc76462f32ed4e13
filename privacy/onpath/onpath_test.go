package onpath

import (
	"math"
	"slices"
	"testing"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/filterpolicy"
	"github.com/bloomwatch/bloomwatch/transcript"
)

// TestObserveFilteredBlocks reads a scripted v2 stream: a getdata for four
// blocks, a pong, an empty merkleblock, a matched one and its two
// transactions (one whose size two of the block's transactions share),
// an empty one followed by a coinbase match, and an empty one.
func TestObserveFilteredBlocks(t *testing.T) {
	blocks := []Block{
		{Height: 10, TxSizes: []int{150, 300}},
		{Height: 11, TxSizes: []int{150, 222, 250, 250}},
		{Height: 12, TxSizes: []int{180}},
		{Height: 13, TxSizes: []int{150, 400}},
	}
	gd := filterpolicy.V2PacketOverhead + 1 + 1 + 36*4
	pkts := []Packet{
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
	want := []Tx{{11, []int{1}}, {11, []int{2, 3}}, {12, []int{0}}}
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
	o := NewObserver(0)
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
