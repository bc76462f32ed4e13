package headers

import (
	"math/rand/v2"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/stretchr/testify/require"
)

// TestHeaderHash checks headerHash against chainhash.DoubleHashH on the
// genesis headers of every network and on random headers.
func TestHeaderHash(t *testing.T) {
	t.Logf("SHA extensions used: %v", useSHANI)
	for _, name := range []string{"mainnet", "testnet3", "testnet4", "signet", "regtest", "simnet"} {
		net := mustNet(t, name)
		var raw [headerLen]byte
		encodeHeader(&raw, &net.Params.GenesisBlock.Header)
		got := headerHash(&raw)
		require.Equal(t, *net.Params.GenesisHash, got, "%s genesis: %v, want %v", name, got, net.Params.GenesisHash)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var raw [headerLen]byte
	for i := 0; i < 100_000; i++ {
		for j := range raw {
			raw[j] = byte(rng.Uint32())
		}
		if i%7 == 0 { // runs of equal bytes
			clear(raw[rng.IntN(headerLen):])
		}
		got, want := headerHash(&raw), chainhash.DoubleHashH(raw[:])
		require.Equal(t, want, got, "header %x: %v, want %v", raw, got, want)
	}
	var two [2][headerLen]byte
	var got [2]chainhash.Hash
	for i := 0; i < 50_000; i++ {
		for k := range two {
			for j := range two[k] {
				two[k][j] = byte(rng.Uint32())
			}
		}
		if i%5 == 0 {
			two[1] = two[0]
			two[1][rng.IntN(headerLen)] ^= 1 << rng.IntN(8)
		}
		headerHash2(&got, &two)
		for k := range two {
			want := chainhash.DoubleHashH(two[k][:])
			require.Equal(t, want, got[k], "pair %d header %x: %v, want %v", k, two[k], got[k], want)
		}
	}
}

// FuzzHeaderHash compares headerHash and headerHash2 with
// chainhash.DoubleHashH (the input's first 80 bytes are one header, the next
// 80 the other).
func FuzzHeaderHash(f *testing.F) {
	f.Add(make([]byte, 2*headerLen))
	f.Fuzz(func(t *testing.T, b []byte) {
		var two [2][headerLen]byte
		copy(two[0][:], b)
		copy(two[1][:], b[min(len(b), headerLen):])
		want := chainhash.DoubleHashH(two[0][:])
		require.Equal(t, want, headerHash(&two[0]), "header %x", two[0])
		var got [2]chainhash.Hash
		headerHash2(&got, &two)
		for k := range two {
			want := chainhash.DoubleHashH(two[k][:])
			require.Equal(t, want, got[k], "pair %d header %x: %v, want %v", k, two[k], got[k], want)
		}
	})
}

// BenchmarkHeaderHash compares headerHash with chainhash.DoubleHashH on
// one 80-byte header.
func BenchmarkHeaderHash(b *testing.B) {
	var raw [headerLen]byte
	var sink byte
	b.Run("headerHash", func(b *testing.B) {
		for b.Loop() {
			raw[0]++
			h := headerHash(&raw)
			sink ^= h[0]
		}
	})
	b.Run("headerHash2-per-header", func(b *testing.B) {
		var two [2][headerLen]byte
		var out [2]chainhash.Hash
		for b.Loop() {
			two[0][0]++
			two[1][0]++
			headerHash2(&out, &two)
			sink ^= out[0][0] ^ out[1][0]
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/header")
	})
	b.Run("DoubleHashH", func(b *testing.B) {
		for b.Loop() {
			raw[0]++
			h := chainhash.DoubleHashH(raw[:])
			sink ^= h[0]
		}
	})
	_ = sink
}
