package bip37

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"sync"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/wire"
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
	if err != nil {
		t.Fatal(err)
	}
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
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.insert {
				f.Add(mustHex(t, s))
				if !f.Matches(mustHex(t, s)) {
					t.Errorf("just-inserted %s does not match", s)
				}
			}
			for _, s := range tc.absent {
				if f.Matches(mustHex(t, s)) {
					t.Errorf("absent %s matches", s)
				}
			}
			if got := hex.EncodeToString(f.Serialize()); got != tc.want {
				t.Errorf("Serialize = %s, want %s", got, tc.want)
			}
			var buf bytes.Buffer
			if err := f.MsgFilterLoad().BtcEncode(&buf, wire.ProtocolVersion, wire.LatestEncoding); err != nil {
				t.Fatal(err)
			}
			if got := hex.EncodeToString(buf.Bytes()); got != tc.want {
				t.Errorf("MsgFilterLoad encodes to %s, want %s", got, tc.want)
			}
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
			if size != tc.wantBytes || k != tc.wantK {
				t.Errorf("Params(%d, %v) = (%d, %d), want (%d, %d)", tc.elements, tc.fpRate, size, k, tc.wantBytes, tc.wantK)
			}
			f, err := NewFilter(tc.elements, tc.fpRate, 0, UpdateNone)
			if err != nil {
				t.Fatal(err)
			}
			if uint32(f.Size()) != size || f.HashFuncs() != k || f.NumBits() != uint64(size)*8 {
				t.Errorf("NewFilter: size %d k %d bits %d", f.Size(), f.HashFuncs(), f.NumBits())
			}
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
		if !errors.Is(err, tc.want) || f != nil {
			t.Errorf("NewFilter(%d, %v) = %v, %v; want %v", tc.elements, tc.fpRate, f, err, tc.want)
		}
		if size, k := Params(tc.elements, tc.fpRate); size != 0 || k != 0 {
			t.Errorf("Params(%d, %v) = (%d, %d), want (0, 0)", tc.elements, tc.fpRate, size, k)
		}
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
			if err != nil {
				t.Fatal(err)
			}
			f.Add([]byte{1, 2, 3})
			if !bytes.Equal(f.Bits(), tc.bits) && len(tc.bits) != 0 {
				t.Errorf("Add changed bits to %x", f.Bits())
			}
			for _, data := range [][]byte{nil, {1}, bytes.Repeat([]byte{9}, 200)} {
				if !f.Matches(data) {
					t.Errorf("Matches(%x) = false", data)
				}
			}
			if !f.MatchTx(wire.NewMsgTx(wire.TxVersion)) {
				t.Error("MatchTx(empty tx) = false")
			}
			if got := f.CurrentFPRate(); got != 1 {
				t.Errorf("CurrentFPRate = %v, want 1", got)
			}
		})
	}
}

// TestFilterCapsAndCopies checks NewFilterFromBits's caps and that it and
// the accessors do not alias caller memory.
func TestFilterCapsAndCopies(t *testing.T) {
	if _, err := NewFilterFromBits(make([]byte, MaxFilterSize+1), 1, 0, UpdateNone); !errors.Is(err, ErrFilterTooLarge) {
		t.Errorf("oversized: %v", err)
	}
	if _, err := NewFilterFromBits(make([]byte, 10), MaxHashFuncs+1, 0, UpdateNone); !errors.Is(err, ErrTooManyHashFuncs) {
		t.Errorf("too many hash funcs: %v", err)
	}
	if _, err := NewFilterFromBits(make([]byte, MaxFilterSize), MaxHashFuncs, 0, UpdateNone); err != nil {
		t.Errorf("at the caps: %v", err)
	}
	bits := []byte{0, 0, 0, 0}
	f, err := NewFilterFromBits(bits, 3, 1, UpdateAll)
	if err != nil {
		t.Fatal(err)
	}
	f.Add([]byte("element"))
	if !bytes.Equal(bits, []byte{0, 0, 0, 0}) {
		t.Error("NewFilterFromBits aliases the caller's slice")
	}
	c := f.Clone()
	c.Add([]byte("another element"))
	if bytes.Equal(c.Bits(), f.Bits()) {
		t.Error("Clone shares bits with the original")
	}
	msg := f.MsgFilterLoad()
	msg.Filter[0] ^= 0xff
	if bytes.Equal(msg.Filter, f.Bits()) {
		t.Error("MsgFilterLoad shares bits with the filter")
	}
	if f.Tweak() != 1 || f.Flags() != UpdateAll || f.HashFuncs() != 3 {
		t.Errorf("accessors: tweak %d flags %v k %d", f.Tweak(), f.Flags(), f.HashFuncs())
	}
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
		if err != nil {
			t.Fatal(err)
		}
		if got := f.BitsSet(); got != tc.want {
			t.Errorf("BitsSet(%x) = %d, want %d", tc.bits, got, tc.want)
		}
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
			if !errors.Is(err, ErrUnknownUpdateFlag) {
				t.Errorf("ParseUpdateFlag(%q) error = %v, want ErrUnknownUpdateFlag", tc.in, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseUpdateFlag(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if back, _ := ParseUpdateFlag(got.String()); back != got {
			t.Errorf("%v does not round trip through String", got)
		}
	}
	if got := UpdateFlag(0x83).String(); got != "unknown(0x83)" {
		t.Errorf("String(0x83) = %q", got)
	}
}

// TestConcurrentReaders runs the read-only methods from several goroutines
// at once; under -race it proves they do not write to the filter.
func TestConcurrentReaders(t *testing.T) {
	f, err := NewFilter(100, 0.001, 3, UpdateAll)
	if err != nil {
		t.Fatal(err)
	}
	f.Add([]byte("watched"))
	tx := wire.NewMsgTx(wire.TxVersion)
	tx.AddTxIn(wire.NewTxIn(&wire.OutPoint{Index: 1}, []byte{0x07, 'w', 'a', 't', 'c', 'h', 'e', 'd'}, nil))
	tx.AddTxOut(wire.NewTxOut(1, []byte{0x6a}))
	const readers = 4
	var wg sync.WaitGroup
	for r := range readers {
		wg.Go(func() {
			for i := range 1000 {
				if !f.Matches([]byte("watched")) || !f.MatchTx(tx) {
					t.Error("a member stopped matching")
					return
				}
				f.MatchesOutPoint(&wire.OutPoint{Index: uint32(r*1000 + i)})
				_ = f.BitsSet() + uint64(f.CurrentFPRate())
			}
		})
	}
	wg.Wait()
}

func TestBitsSetKeptAsBitsAreSet(t *testing.T) {
	f, err := NewFilter(500, 0.01, 5, UpdateAll)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 400 {
		f.Add([]byte{byte(i), byte(i >> 8), 7})
		if got, want := f.BitsSet(), uint64(popcount(f.Bits())); got != want {
			t.Fatalf("after %d insertions: BitsSet %d, bits in the array %d", i+1, got, want)
		}
	}
	c := f.Clone()
	c.Add([]byte("one more"))
	if f.BitsSet() != uint64(popcount(f.Bits())) || c.BitsSet() != uint64(popcount(c.Bits())) {
		t.Fatal("a clone shares the count")
	}
	g, _ := NewFilterFromBits(f.Bits(), f.HashFuncs(), 5, UpdateAll)
	if g.BitsSet() != f.BitsSet() {
		t.Fatalf("from bits: %d, want %d", g.BitsSet(), f.BitsSet())
	}
}
