package bip37

import (
	"bytes"
	"encoding/hex"
	"math"
	"sync"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// TestFilterInsertSerialize runs Core's bloom_create_insert_serialize,
// bloom_create_insert_serialize_with_tweak and bloom_create_insert_key.
func TestFilterInsertSerialize(t *testing.T) {
	threeHashes := []string{
		"99108ad8ed9bb6274d3980bab5a85c048f0950c8",
		"b5a2c786d9ef4658287ced5914b37a1b4aa32eee",
		"b9300670b4c5366e95b2699e8b18bc75e5f729c5",
	}
	// One bit different in the first byte of the first element.
	const absent = "19108ad8ed9bb6274d3980bab5a85c048f0950c8"

	wif, err := btcutil.DecodeWIF("5Kg1gnAjaLfKiwhhPpGS3QfRg2m6awQvaj98JCZBZQ5SuS2F15C")
	require.NoError(t, err)
	pubKey := wif.SerializePubKey()
	keyElements := []string{hex.EncodeToString(pubKey), hex.EncodeToString(btcutil.Hash160(pubKey))}

	tests := []struct {
		name     string
		elements uint32
		fpRate   float64
		tweak    uint32
		insert   []string
		absent   []string
		want     string
	}{
		{"create_insert_serialize", 3, 0.01, 0, threeHashes, []string{absent}, "03614e9b050000000000000001"},
		{"with_tweak", 3, 0.01, 2147483649, threeHashes, []string{absent}, "03ce4299050000000100008001"},
		{"insert_key", 2, 0.001, 0, keyElements, nil, "038fc16b080000000000000001"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := NewFilter(tc.elements, tc.fpRate, tc.tweak, UpdateAll)
			require.NoError(t, err)
			for _, s := range tc.insert {
				f.Add(mustHex(t, s))
				require.True(t, f.Matches(mustHex(t, s)), "just-inserted %s does not match", s)
			}
			for _, s := range tc.absent {
				require.False(t, f.Matches(mustHex(t, s)), "absent %s matches", s)
			}
			got := hex.EncodeToString(f.Serialize())
			require.Equal(t, tc.want, got, "Serialize = %s, want %s", got, tc.want)
			var buf bytes.Buffer
			require.NoError(t, f.MsgFilterLoad().BtcEncode(&buf, wire.ProtocolVersion, wire.LatestEncoding))
			got = hex.EncodeToString(buf.Bytes())
			require.Equal(t, tc.want, got, "MsgFilterLoad encodes to %s, want %s", got, tc.want)
		})
	}
}

// TestParams checks sizing against values worked out by hand from Core's
// formula, including bitcoinj's sizing (docs/PRIVACY-MODEL.md, formula 1).
func TestParams(t *testing.T) {
	tests := []struct {
		name      string
		elements  uint32
		fpRate    float64
		wantBytes uint32
		wantK     uint32
	}{
		// 28.75 bits -> 28 -> 3 bytes; 24/3 = 8; 8 ln2 = 5.5.
		{"core vector", 3, 0.01, 3, 5},
		// 287.5 bits -> 35 bytes; 280/10 = 28; 28 ln2 = 19.4.
		{"core merkle tests", 10, 0.000001, 35, 19},
		// 24/5 = 4 in integer arithmetic; 4 ln2 = 2.77 (btcutil: 3).
		{"integer division", 5, 0.05, 3, 2},
		// 88/10 = 8; 8 ln2 = 5.5 (btcutil: 8.8 ln2 = 6.1 -> 6).
		{"integer division 2", 10, 0.01, 11, 5},
		// 8 bits / 5 = 1; ln2 < 1: a filter with no hash functions.
		{"zero hash functions", 5, 0.3, 1, 0},
		// 0.02 bits: an empty filter, which matches everything.
		{"empty filter", 1, 0.99, 0, 0},
		// bitcoinj's fresh wallet, M = 271*2 + 100 = 642 at p = 0.0005 (Nick's
		// blog, docs/RESEARCH.md): 1,269 bytes, k = 10, computed from BIP37.
		{"bitcoinj", 642, 0.0005, 1269, 10},
		{"realistic", 1000, 0.0001, 2396, 13},
		{"size cap", 100000000, 0.01, MaxFilterSize, 0},
		// 1437.8 bits -> 179 bytes; 1432 ln2 = 992 is capped at 50.
		{"hash cap", 1, 1e-300, 179, MaxHashFuncs},
		{"saturating conversion", math.MaxUint32, 1e-300, MaxFilterSize, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			size, k := Params(tc.elements, tc.fpRate)
			require.Equal(t, tc.wantBytes, size, "Params(%d, %v) = (%d, %d), want (%d, %d)", tc.elements, tc.fpRate, size, k, tc.wantBytes, tc.wantK)
			require.Equal(t, tc.wantK, k, "Params(%d, %v) = (%d, %d), want (%d, %d)", tc.elements, tc.fpRate, size, k, tc.wantBytes, tc.wantK)
			f, err := NewFilter(tc.elements, tc.fpRate, 0, UpdateNone)
			require.NoError(t, err)
			require.Equal(t, size, uint32(f.Size()), "NewFilter: size %d k %d bits %d", f.Size(), f.HashFuncs(), f.NumBits())
			require.Equal(t, k, f.HashFuncs(), "NewFilter: size %d k %d bits %d", f.Size(), f.HashFuncs(), f.NumBits())
			require.Equal(t, uint64(size)*8, f.NumBits(), "NewFilter: size %d k %d bits %d", f.Size(), f.HashFuncs(), f.NumBits())
		})
	}
}

// TestNewFilterRejects checks the typed errors for bad sizing input.
func TestNewFilterRejects(t *testing.T) {
	tests := []struct {
		elements uint32
		fpRate   float64
		want     error
	}{
		{0, 0.01, ErrZeroElements},
		{1, 0, ErrFPRateRange},
		{1, 1, ErrFPRateRange},
		{1, -1, ErrFPRateRange},
		{1, 20.9999999769, ErrFPRateRange},
		{1, math.NaN(), ErrFPRateRange},
		{1, math.Inf(1), ErrFPRateRange},
	}
	for _, tc := range tests {
		f, err := NewFilter(tc.elements, tc.fpRate, 0, UpdateAll)
		require.ErrorIs(t, err, tc.want, "NewFilter(%d, %v) = %v, %v; want %v", tc.elements, tc.fpRate, f, err, tc.want)
		require.Nil(t, f, "NewFilter(%d, %v) = %v, %v; want %v", tc.elements, tc.fpRate, f, err, tc.want)
		size, k := Params(tc.elements, tc.fpRate)
		require.Equal(t, uint32(0), size, "Params(%d, %v) = (%d, %d), want (0, 0)", tc.elements, tc.fpRate, size, k)
		require.Equal(t, uint32(0), k, "Params(%d, %v) = (%d, %d), want (0, 0)", tc.elements, tc.fpRate, size, k)
	}
}

// TestEmptyFilterMatchesAll checks CVE-2013-5700 handling: a zero-length
// filter ignores inserts and matches everything, and so does a filter with
// no hash functions.
func TestEmptyFilterMatchesAll(t *testing.T) {
	tests := []struct {
		name      string
		bits      []byte
		hashFuncs uint32
	}{
		{"zero length", nil, 10},
		{"zero length no hashes", nil, 0},
		{"no hash functions", []byte{0, 0, 0}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := NewFilterFromBits(tc.bits, tc.hashFuncs, 7, UpdateAll)
			require.NoError(t, err)
			f.Add([]byte{1, 2, 3})
			require.False(t, !bytes.Equal(f.Bits(), tc.bits) && len(tc.bits) != 0, "Add changed bits to %x", f.Bits())
			for _, data := range [][]byte{nil, {1}, bytes.Repeat([]byte{9}, 200)} {
				require.True(t, f.Matches(data), "Matches(%x) = false", data)
			}
			require.True(t, f.MatchTx(wire.NewMsgTx(wire.TxVersion)), "MatchTx(empty tx) = false")
			got := f.CurrentFPRate()
			require.Equal(t, float64(1), got, "CurrentFPRate = %v, want 1", got)
		})
	}
}

// TestFilterCapsAndCopies checks NewFilterFromBits's caps and that it and
// the accessors do not alias caller memory.
func TestFilterCapsAndCopies(t *testing.T) {
	_, err := NewFilterFromBits(make([]byte, MaxFilterSize+1), 1, 0, UpdateNone)
	require.ErrorIs(t, err, ErrFilterTooLarge, "oversized")
	_, err = NewFilterFromBits(make([]byte, 10), MaxHashFuncs+1, 0, UpdateNone)
	require.ErrorIs(t, err, ErrTooManyHashFuncs, "too many hash funcs")
	_, err = NewFilterFromBits(make([]byte, MaxFilterSize), MaxHashFuncs, 0, UpdateNone)
	require.NoError(t, err, "at the caps")
	bits := []byte{0, 0, 0, 0}
	f, err := NewFilterFromBits(bits, 3, 1, UpdateAll)
	require.NoError(t, err)
	f.Add([]byte("element"))
	require.Equal(t, []byte{0, 0, 0, 0}, bits, "NewFilterFromBits aliases the caller's slice")
	c := f.Clone()
	c.Add([]byte("another element"))
	require.False(t, bytes.Equal(c.Bits(), f.Bits()), "Clone shares bits with the original")
	msg := f.MsgFilterLoad()
	msg.Filter[0] ^= 0xff
	require.False(t, bytes.Equal(msg.Filter, f.Bits()), "MsgFilterLoad shares bits with the filter")
	require.Equal(t, uint32(1), f.Tweak(), "accessors: tweak %d flags %v k %d", f.Tweak(), f.Flags(), f.HashFuncs())
	require.Equal(t, UpdateAll, f.Flags(), "accessors: tweak %d flags %v k %d", f.Tweak(), f.Flags(), f.HashFuncs())
	require.Equal(t, uint32(3), f.HashFuncs(), "accessors: tweak %d flags %v k %d", f.Tweak(), f.Flags(), f.HashFuncs())
}

// TestBitsSet counts bits over lengths that exercise the 8-byte loop and
// the tail.
func TestBitsSet(t *testing.T) {
	tests := []struct {
		bits []byte
		want uint64
	}{
		{nil, 0},
		{[]byte{0xff}, 8},
		{[]byte{1, 2, 4, 8, 16, 32, 64, 128}, 8},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f}, 68},
		{bytes.Repeat([]byte{0x11}, 21), 42},
	}
	for _, tc := range tests {
		f, err := NewFilterFromBits(tc.bits, 1, 0, UpdateNone)
		require.NoError(t, err)
		got := f.BitsSet()
		require.Equal(t, tc.want, got, "BitsSet(%x) = %d, want %d", tc.bits, got, tc.want)
	}
}

// TestUpdateFlag checks names, parsing and unknown values.
func TestUpdateFlag(t *testing.T) {
	tests := []struct {
		in      string
		want    UpdateFlag
		wantErr bool
	}{
		{"none", UpdateNone, false},
		{"all", UpdateAll, false},
		{"p2pubkeyonly", UpdateP2PubKeyOnly, false},
		{"ALL", UpdateAll, false},
		{" none ", UpdateNone, false},
		{"p2pk", 0, true},
		{"", 0, true},
		{"3", 0, true},
	}
	for _, tc := range tests {
		got, err := ParseUpdateFlag(tc.in)
		if tc.wantErr {
			require.ErrorIs(t, err, ErrUnknownUpdateFlag, "ParseUpdateFlag(%q) error = %v, want ErrUnknownUpdateFlag", tc.in, err)
			continue
		}
		require.NoError(t, err, "ParseUpdateFlag(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		require.Equal(t, tc.want, got, "ParseUpdateFlag(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		back, _ := ParseUpdateFlag(got.String())
		require.Equal(t, got, back, "%v does not round trip through String", got)
	}
	got := UpdateFlag(0x83).String()
	require.Equal(t, "unknown(0x83)", got, "String(0x83) = %q", got)
}

// TestConcurrentReaders runs the read-only methods from several goroutines
// at once; under -race it proves they do not write to the filter.
func TestConcurrentReaders(t *testing.T) {
	f, err := NewFilter(100, 0.001, 3, UpdateAll)
	require.NoError(t, err)
	f.Add([]byte("watched"))
	tx := wire.NewMsgTx(wire.TxVersion)
	tx.AddTxIn(wire.NewTxIn(&wire.OutPoint{Index: 1}, []byte{0x07, 'w', 'a', 't', 'c', 'h', 'e', 'd'}, nil))
	tx.AddTxOut(wire.NewTxOut(1, []byte{0x6a}))
	const readers = 4
	// The readers report to the test goroutine: require stops the test
	// with FailNow, which only the test goroutine may call.
	stopped := make(chan int, readers)
	var wg sync.WaitGroup
	for r := range readers {
		wg.Go(func() {
			for i := range 1000 {
				if !f.Matches([]byte("watched")) || !f.MatchTx(tx) {
					stopped <- r
					return
				}
				f.MatchesOutPoint(&wire.OutPoint{Index: uint32(r*1000 + i)})
				_ = f.BitsSet() + uint64(f.CurrentFPRate())
			}
		})
	}
	wg.Wait()
	close(stopped)
	for r := range stopped {
		require.FailNow(t, "a member stopped matching", "reader %d", r)
	}
}

func TestBitsSetKeptAsBitsAreSet(t *testing.T) {
	f, err := NewFilter(500, 0.01, 5, UpdateAll)
	require.NoError(t, err)
	for i := range 400 {
		f.Add([]byte{byte(i), byte(i >> 8), 7})
		got, want := f.BitsSet(), uint64(popcount(f.Bits()))
		require.Equal(t, want, got, "after %d insertions: BitsSet %d, bits in the array %d", i+1, got, want)
	}
	c := f.Clone()
	c.Add([]byte("one more"))
	require.Equal(t, uint64(popcount(f.Bits())), f.BitsSet(), "a clone shares the count")
	require.Equal(t, uint64(popcount(c.Bits())), c.BitsSet(), "a clone shares the count")
	g, _ := NewFilterFromBits(f.Bits(), f.HashFuncs(), 5, UpdateAll)
	require.Equal(t, f.BitsSet(), g.BitsSet(), "from bits: %d, want %d", g.BitsSet(), f.BitsSet())
}
