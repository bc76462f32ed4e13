package synth

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/txscript"
	"github.com/stretchr/testify/require"
)

// TestGolden pins the generator: the experiments' published-figure
// reproductions and the benchmarks depend on these exact bytes.
func TestGolden(t *testing.T) {
	pk, h := Key(1, 101, 0)
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"Key pubkey", pk, "028ee843b9134a7ac0fa7b2ac606ed270319fbf58e1d1c00d84fae901de1bebb09"},
		{"Key hash160", h, "853945747f2c03f836c9098c90b1314d90fea217"},
		{"Hash", Hash(nil, Mix64(42), 7), "526592a3a0042427cd0c76289e24bcc277bb8d10"},
		{"PubKey", PubKey(nil, Mix64(42), 10), "0214c91ec61fb5b2c3146ff2ccf809dfe24cc13d6d16fb64e6b6641bf76c769414"},
	}
	for _, tc := range tests {
		got := hex.EncodeToString(tc.got)
		require.Equal(t, tc.want, got, "%s = %s, want %s", tc.name, got, tc.want)
	}
}

func TestShapes(t *testing.T) {
	buf := make([]byte, 0, PubKeySize)
	for i := range uint64(64) {
		pk, h := Key(7, 3, i)
		require.Len(t, pk, PubKeySize, "key %d: %x / %x", i, pk, h)
		require.Equal(t, byte(compressedEven), pk[0]&^1, "key %d: %x / %x", i, pk, h)
		require.Equal(t, btcutil.Hash160(pk), h, "key %d: %x / %x", i, pk, h)
		got := Hash(buf, Mix64(i), 0)
		require.Len(t, got, HashSize, "Hash did not reuse a large enough buffer")
		require.Same(t, &buf[:1][0], &got[0], "Hash did not reuse a large enough buffer")
	}
	p := P2PKH(make([]byte, HashSize))
	require.Equal(t, txscript.PubKeyHashTy, txscript.GetScriptClass(p), "P2PKH is %v", txscript.GetScriptClass(p))
	pushes, err := txscript.PushedData(SpendScript(make([]byte, PubKeySize)))
	require.NoError(t, err, "SpendScript pushes %d items", len(pushes))
	require.Len(t, pushes, 2, "SpendScript pushes %d items, err %v", len(pushes), err)
	require.Len(t, pushes[0], fakeSigSize, "SpendScript pushes %d items, err %v", len(pushes), err)
	require.Len(t, pushes[1], PubKeySize, "SpendScript pushes %d items, err %v", len(pushes), err)
	require.False(t, bytes.Equal(HeightScript(1), HeightScript(2)), "two heights share a coinbase script")
}

// TestCandidateGeneratorsMatchHashAndPubKey checks the scan's batch
// generators against Hash and PubKey, the bytes scan.Synthetic.Fill
// gives.
func TestCandidateGeneratorsMatchHashAndPubKey(t *testing.T) {
	for _, vector := range []bool{true, false} {
		restore := setAVX2(vector)
		checkCandidateGenerators(t)
		restore()
	}
}

// checkCandidateGenerators is TestCandidateGeneratorsMatchHashAndPubKey
// with the current generator.
func checkCandidateGenerators(t *testing.T) {
	t.Helper()
	for _, seed := range []uint64{0, 1, 42, 1 << 63} {
		for _, first := range []uint64{0, 1, 1000, 1<<40 + 3} {
			for _, n := range []int{0, 1, 7, 8, 9, 63, 64} {
				ms := Mix64(seed)
				var w HashWords
				CandidateWords(ms, first, &w, n)
				pubKeys := make([][PubKeySize]byte, n)
				CandidatePubKeys(ms, first, pubKeys)
				for i := range n {
					lane := (first + uint64(i)) * TotalLanes
					h := Hash(nil, ms, lane)
					for b := range HashSize / 4 {
						got, want := w[b][i], binary.LittleEndian.Uint32(h[4*b:])
						require.Equal(t, want, got, "seed %d candidate %d word %d: %08x, want %08x", seed, first+uint64(i), b, got, want)
					}
					pk := PubKey(nil, ms, lane+HashLanes)
					require.Equal(t, pk, pubKeys[i][:], "seed %d candidate %d: pubkey %x, want %x", seed, first+uint64(i), pubKeys[i], pk)
				}
			}
		}
	}
}
