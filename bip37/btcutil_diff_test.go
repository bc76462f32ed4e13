package bip37

import (
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/bloom"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// twinFilters returns this package's filter and a btcutil/bloom filter
// over identical bits, hash count, tweak and flags.
func twinFilters(t *testing.T, size int, hashFuncs uint32, flags UpdateFlag) (*Filter, *bloom.Filter) {
	t.Helper()
	f, err := NewFilterFromBits(make([]byte, size), hashFuncs, 0x5eed, flags)
	require.NoError(t, err)
	return f, bloom.LoadFilter(f.MsgFilterLoad())
}

// TestParamsDiffersFromBtcutil: Core truncates size*8/elements to an
// integer before multiplying by ln 2; btcutil does not.
func TestParamsDiffersFromBtcutil(t *testing.T) {
	tests := []struct {
		elements   uint32
		fpRate     float64
		wantK      uint32
		btcutilK   uint32
		sameLength bool
	}{
		{5, 0.05, 2, 3, true},
		{10, 0.01, 5, 6, true},
		{3, 0.01, 5, 5, true}, // agreement case: 24/3 is whole
	}
	for _, tc := range tests {
		size, k := Params(tc.elements, tc.fpRate)
		msg := bloom.NewFilter(tc.elements, 0, tc.fpRate, wire.BloomUpdateNone).MsgFilterLoad()
		require.Equal(t, tc.wantK, k, "(%d, %v): ours %d bytes k=%d, btcutil %d bytes k=%d; want k=%d vs %d", tc.elements, tc.fpRate, size, k, len(msg.Filter), msg.HashFuncs, tc.wantK, tc.btcutilK)
		require.Equal(t, tc.btcutilK, msg.HashFuncs, "(%d, %v): ours %d bytes k=%d, btcutil %d bytes k=%d; want k=%d vs %d", tc.elements, tc.fpRate, size, k, len(msg.Filter), msg.HashFuncs, tc.wantK, tc.btcutilK)
		require.Equal(t, tc.sameLength, (uint32(len(msg.Filter)) == size), "(%d, %v): ours %d bytes k=%d, btcutil %d bytes k=%d; want k=%d vs %d", tc.elements, tc.fpRate, size, k, len(msg.Filter), msg.HashFuncs, tc.wantK, tc.btcutilK)
	}
}

// TestEmptyFilterDiffersFromBtcutil: Core's zero-length filter matches
// everything (the CVE-2013-5700 fix). btcutil/bloom has no such guard: with
// hash functions it divides by zero and panics, so a hostile peer's empty
// filterload crashes a node built on it.
func TestEmptyFilterDiffersFromBtcutil(t *testing.T) {
	f, bf := twinFilters(t, 0, 5, UpdateNone)
	data := []byte("anything")
	require.True(t, f.Matches(data), "Matches = false, want true")
	tx := wire.NewMsgTx(wire.TxVersion)
	tx.AddTxOut(wire.NewTxOut(1, []byte{0x6a}))
	require.True(t, f.MatchTx(tx), "MatchTx = false, want true")
	require.True(t, panics(func() { bf.Matches(data) }), "btcutil Matches on an empty filter no longer panics; revisit this difference")
}

// panics reports whether fn panics.
func panics(fn func()) (panicked bool) {
	defer func() { panicked = recover() != nil }()
	fn()
	return false
}

// TestScriptParsingDiffersFromBtcutil covers the two parsing differences:
// Core keeps the pushes before a parse failure (btcutil drops the script)
// and skips empty pushes (btcutil tests them).
func TestScriptParsingDiffersFromBtcutil(t *testing.T) {
	watched := make([]byte, 20)
	watched[19] = 0x99
	tests := []struct {
		name      string
		element   []byte
		pkScript  []byte
		sigScript []byte
		want      bool
		btcutil   bool
	}{
		{
			name:     "push then truncated PUSHDATA1 in output",
			element:  watched,
			pkScript: append(append([]byte{0x14}, watched...), 0x4c),
			want:     true, btcutil: false,
		},
		{
			name:      "push then truncated push in scriptSig",
			element:   watched,
			pkScript:  []byte{0x6a},
			sigScript: append(append([]byte{0x14}, watched...), 0x05, 0x01),
			want:      true, btcutil: false,
		},
		{
			name:     "OP_0 of a P2WPKH output against an empty element",
			element:  []byte{},
			pkScript: append([]byte{0x00, 0x14}, make([]byte, 20)...),
			want:     false, btcutil: true,
		},
		{
			name:     "well-formed script: both agree",
			element:  watched,
			pkScript: append(append([]byte{0x76, 0xa9, 0x14}, watched...), 0x88, 0xac),
			want:     true, btcutil: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, bf := twinFilters(t, 64, 7, UpdateNone)
			f.Add(tc.element)
			bf.Add(tc.element)
			tx := wire.NewMsgTx(wire.TxVersion)
			tx.AddTxIn(wire.NewTxIn(&wire.OutPoint{Index: 1}, tc.sigScript, nil))
			tx.AddTxOut(wire.NewTxOut(1, tc.pkScript))
			got := f.MatchTx(tx)
			require.Equal(t, tc.want, got, "MatchTx = %v, want %v", got, tc.want)
			got = bf.MatchTxAndUpdate(btcutil.NewTx(tx))
			require.Equal(t, tc.btcutil, got, "btcutil = %v, want %v", got, tc.btcutil)
			ref := &refFilter{data: append([]byte(nil), f.Bits()...), hashFuncs: 7, tweak: 0x5eed}
			got = ref.isRelevantAndUpdate(tx)
			require.Equal(t, tc.want, got, "reference = %v, want %v", got, tc.want)
		})
	}
}

// TestP2PubKeyOnlyDiffersFromBtcutil: Core's Solver and btcd's
// GetScriptClass disagree on what is a bare multisig, so UPDATE_P2PUBKEY_ONLY
// inserts different outpoints.
func TestP2PubKeyOnlyDiffersFromBtcutil(t *testing.T) {
	key33 := make([]byte, 33)
	key33[0], key33[1] = 0x02, 0x31
	other := make([]byte, 20)
	other[0] = 0x20
	var keys17 []byte
	for range 17 {
		keys17 = append(append(keys17, 0x21), key33...)
	}
	tests := []struct {
		name     string
		element  []byte
		pkScript []byte
		want     bool // outpoint inserted (Core)
		btcutil  bool
	}{
		{
			// btcd counts any push as a key; Core requires valid key sizes.
			name:     "20-byte push as a key",
			element:  other,
			pkScript: append(append([]byte{0x51, 0x14}, other...), 0x51, 0xae),
			want:     false, btcutil: true,
		},
		{
			// btcd does not compare m with n.
			name:     "2-of-1",
			element:  key33,
			pkScript: append(append([]byte{0x52, 0x21}, key33...), 0x51, 0xae),
			want:     false, btcutil: true,
		},
		{
			// Core reads counts above 16 from minimal pushes; btcd only
			// knows OP_1..OP_16.
			name:     "17-of-17",
			element:  key33,
			pkScript: append(append([]byte{0x01, 17}, keys17...), 0x01, 17, 0xae),
			want:     true, btcutil: false,
		},
		{
			name:     "1-of-1: both agree",
			element:  key33,
			pkScript: append(append([]byte{0x51, 0x21}, key33...), 0x51, 0xae),
			want:     true, btcutil: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, bf := twinFilters(t, 256, 11, UpdateP2PubKeyOnly)
			f.Add(tc.element)
			bf.Add(tc.element)
			tx := wire.NewMsgTx(wire.TxVersion)
			tx.AddTxIn(wire.NewTxIn(&wire.OutPoint{Index: 1}, nil, nil))
			tx.AddTxOut(wire.NewTxOut(1, tc.pkScript))
			require.True(t, f.MatchTxAndUpdate(tx), "the output push must match in both")
			require.True(t, bf.MatchTxAndUpdate(btcutil.NewTx(tx)), "the output push must match in both")
			op := &wire.OutPoint{Hash: tx.TxHash(), Index: 0}
			got := f.MatchesOutPoint(op)
			require.Equal(t, tc.want, got, "ours inserted = %v, want %v", got, tc.want)
			got = bf.MatchesOutPoint(op)
			require.Equal(t, tc.btcutil, got, "btcutil inserted = %v, want %v", got, tc.btcutil)
		})
	}
}
