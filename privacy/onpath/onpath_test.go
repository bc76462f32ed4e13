package onpath

import (
	"slices"
	"testing"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/filterpolicy"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/stretchr/testify/require"
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
	require.Equal(t, 4, got.Requested, "requested %d parsed %d, want 4 and 4", got.Requested, got.Parsed)
	require.Equal(t, 4, got.Parsed, "requested %d parsed %d, want 4 and 4", got.Requested, got.Parsed)
	require.True(t, slices.Equal(got.Matched, []int32{11, 12}), "matched %v, want [11 12]", got.Matched)
	want := []Tx{{11, []int{1}}, {11, []int{2, 3}}, {12, []int{0}}}
	require.Len(t, got.Txs, len(want), "txs %+v", got.Txs)
	for i, w := range want {
		require.Equal(t, w.Height, got.Txs[i].Height, "tx %d: %+v, want %+v", i, got.Txs[i], w)
		require.True(t, slices.Equal(got.Txs[i].Candidates, w.Candidates), "tx %d: %+v, want %+v", i, got.Txs[i], w)
	}
	require.Equal(t, 4, getDataCount(gd), "getDataCount")
	require.Equal(t, -1, getDataCount(gd+1), "getDataCount")
	require.Equal(t, 300, getDataCount(filterpolicy.V2PacketOverhead+1+3+36*300), "getDataCount")
}

// TestOnPathReadsClearFiltersOnly feeds a v1 and a v2 filterload: the
// observer reads the first (its rate is the filter's) and only the size
// of the second (the element range of a 4,096-byte burst); blocks with
// matches count whatever they held.
func TestOnPathReadsClearFiltersOnly(t *testing.T) {
	f, err := bip37.NewFilter(64, 1e-4, 5, bip37.UpdateAll)
	require.NoError(t, err)
	for i := range 20 {
		f.Add([]byte{byte(i), 1, 2})
	}
	o := NewObserver(0)
	rd := o.Reading(1000, true, 20, 0)
	require.Equal(t, float64(1), rd.Rate, "empty reading %+v", rd)
	require.Equal(t, 0, rd.Loads, "empty reading %+v", rd)
	require.Equal(t, -1, rd.MinElements, "empty reading %+v", rd)
	require.Equal(t, float64(1), rd.BlockPrecision, "empty reading %+v", rd)
	ser := f.Serialize()
	o.Observe(transcript.Record{Kind: transcript.KindFilterLoad, Filter: ser}) // no transport: v1
	rd = o.Reading(1000, true, 20, 0)
	require.Equal(t, 1, rd.Clear, "after a v1 load: %+v (filter rate %g)", rd, f.CurrentFPRate())
	require.InDelta(t, f.CurrentFPRate(), rd.Rate, 1e-12, "after a v1 load: %+v (filter rate %g)", rd, f.CurrentFPRate())
	o.Observe(transcript.Record{Kind: transcript.KindFilterLoad, Filter: ser, Transport: transcript.TransportV2, Wire: 4096})
	o.ObserveBlock(2, 1)
	o.ObserveBlock(1, 0)
	o.ObserveBlock(0, 0)
	rd = o.Reading(1000, true, 20, 0)
	require.Equal(t, 2, rd.Loads, "after a v2 load: %+v", rd)
	require.Equal(t, 1, rd.Encrypted, "after a v2 load: %+v", rd)
	require.Equal(t, 0, rd.MinElements, "after a v2 load: %+v", rd)
	require.Equal(t, 512, rd.MaxElements, "after a v2 load: %+v", rd)
	require.Equal(t, 4096, rd.Wire, "after a v2 load: %+v", rd)
	require.Equal(t, 2, rd.Blocks, "blocks: %+v", rd)
	require.Equal(t, 1, rd.WalletBlocks, "blocks: %+v", rd)
	require.Equal(t, 0.5, rd.BlockPrecision, "blocks: %+v", rd)
}
