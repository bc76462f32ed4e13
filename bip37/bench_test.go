package bip37

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/bloom"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// Benchmarks compare this package ("bip37") with btcutil/bloom ("btcutil")
// in the same run; see the package report for the ratios. Run with
//
//	go test -run '^$' -bench . ./bip37

// benchElements is the number of distinct query elements each benchmark
// cycles through, so no single element's cache lines dominate. It is a
// power of two so the loop selects the next element with a mask
// (benchMask) rather than a division, keeping harness cost out of the
// comparison.
const (
	benchElements = 1024
	benchMask     = benchElements - 1
)

// benchFilterSpec is a filter sized for elements at fpRate and filled with
// that many elements (its design capacity).
type benchFilterSpec struct {
	name     string
	elements uint32
	fpRate   float64
}

var benchFilters = []benchFilterSpec{
	{"n1000_p0.0001", 1000, 0.0001},
	{"bitcoinj_n642_p0.0005", 642, 0.0005},
}

var benchElementSizes = []int{20, 33}

// randomElements returns count random byte strings of the given size.
func randomElements(rng *rand.Rand, count, size int) [][]byte {
	out := make([][]byte, count)
	for i := range out {
		out[i] = make([]byte, size)
		for j := range out[i] {
			out[i][j] = byte(rng.Uint32())
		}
	}
	return out
}

// filledFilters returns twin filters (this package and btcutil) filled to
// capacity with members of the given size.
func filledFilters(b *testing.B, spec benchFilterSpec, size int, rng *rand.Rand) (*Filter, *bloom.Filter, [][]byte) {
	b.Helper()
	f, err := NewFilter(spec.elements, spec.fpRate, rng.Uint32(), UpdateNone)
	require.NoError(b, err)
	members := randomElements(rng, int(spec.elements), size)
	for _, m := range members {
		f.Add(m)
	}
	return f, bloom.LoadFilter(f.MsgFilterLoad()), members
}

// BenchmarkAdd measures inserting 20- and 33-byte elements.
func BenchmarkAdd(b *testing.B) {
	for _, size := range benchElementSizes {
		rng := rand.New(rand.NewPCG(1, uint64(size)))
		elems := randomElements(rng, benchElements, size)
		spec := benchFilters[0]
		b.Run(fmt.Sprintf("%s/%dB/bip37", spec.name, size), func(b *testing.B) {
			f, err := NewFilter(spec.elements, spec.fpRate, 1, UpdateNone)
			require.NoError(b, err)
			for i := 0; b.Loop(); i++ {
				f.Add(elems[i&benchMask])
			}
		})
		b.Run(fmt.Sprintf("%s/%dB/btcutil", spec.name, size), func(b *testing.B) {
			bf := bloom.NewFilter(spec.elements, 1, spec.fpRate, wire.BloomUpdateNone)
			for i := 0; b.Loop(); i++ {
				bf.Add(elems[i&benchMask])
			}
		})
	}
}

// benchMatches runs Matches over queries for both implementations.
func benchMatches(b *testing.B, member bool) {
	for _, spec := range benchFilters {
		for _, size := range benchElementSizes {
			rng := rand.New(rand.NewPCG(2, uint64(size)))
			f, bf, members := filledFilters(b, spec, size, rng)
			queries := randomElements(rng, benchElements, size)
			if member {
				for i := range queries {
					queries[i] = members[i%len(members)]
				}
			}
			want := 0
			for _, q := range queries {
				if f.Matches(q) {
					want++
				}
			}
			name := fmt.Sprintf("%s/%dB", spec.name, size)
			b.Run(name+"/bip37", func(b *testing.B) {
				hits := 0
				for i := 0; b.Loop(); i++ {
					if f.Matches(queries[i&benchMask]) {
						hits++
					}
				}
				sink = hits
			})
			b.Run(name+"/btcutil", func(b *testing.B) {
				hits := 0
				for i := 0; b.Loop(); i++ {
					if bf.Matches(queries[i&benchMask]) {
						hits++
					}
				}
				sink = hits
			})
			require.False(b, member && want != len(queries), "%s: %d of %d members match", name, want, len(queries))
		}
	}
}

// sink keeps benchmark results alive.
var sink int

// BenchmarkMatchesNonMember measures Matches of elements never inserted
// into a filter filled to capacity (the common case a full node sees).
func BenchmarkMatchesNonMember(b *testing.B) { benchMatches(b, false) }

// BenchmarkMatchesMember measures Matches of inserted elements (all k
// probes are taken).
func BenchmarkMatchesMember(b *testing.B) { benchMatches(b, true) }

// typicalTx returns a 2-in 2-out transaction: a P2PKH input (signature and
// pubkey in the scriptSig), a P2WPKH input (witness only), a P2WPKH output
// and a P2PKH output.
func typicalTx(rng *rand.Rand) *wire.MsgTx {
	tx := wire.NewMsgTx(2)
	var prev wire.OutPoint
	copy(prev.Hash[:], randomElements(rng, 1, 32)[0])
	sig := randomElements(rng, 1, 71)[0]
	key := append([]byte{0x02}, randomElements(rng, 1, 32)[0]...)
	sigScript := append(append(append([]byte{byte(len(sig))}, sig...), byte(len(key))), key...)
	tx.AddTxIn(wire.NewTxIn(&prev, sigScript, nil))
	prev.Index = 1
	tx.AddTxIn(wire.NewTxIn(&prev, nil, wire.TxWitness{sig, key}))
	tx.AddTxOut(wire.NewTxOut(50000, append([]byte{0x00, 0x14}, randomElements(rng, 1, 20)[0]...)))
	tx.AddTxOut(wire.NewTxOut(40000, append(append([]byte{0x76, 0xa9, 0x14}, randomElements(rng, 1, 20)[0]...), 0x88, 0xac)))
	return tx
}

// BenchmarkMatchTx measures the full-node relevance test on a typical
// transaction that does not match (every element is examined). Both sides
// hash the transaction on every call: btcutil gets a fresh btcutil.Tx so
// its txid cache does not hide that cost.
func BenchmarkMatchTx(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	spec := benchFilters[0]
	f, bf, _ := filledFilters(b, spec, 20, rng)
	tx := typicalTx(rng)
	require.False(b, f.MatchTx(tx), "fixture tx matches")
	b.Run(spec.name+"/2in2out/bip37", func(b *testing.B) {
		for b.Loop() {
			require.False(b, f.MatchTxAndUpdate(tx), "matched")
		}
	})
	b.Run(spec.name+"/2in2out/btcutil", func(b *testing.B) {
		for b.Loop() {
			require.False(b, bf.MatchTxAndUpdate(btcutil.NewTx(tx)), "matched")
		}
	})
}

// merkleBenchBlock returns a 2,000-transaction block and its merkleblock
// with five matches.
func merkleBenchBlock(b *testing.B) (*wire.MsgBlock, *wire.MsgMerkleBlock, []int) {
	b.Helper()
	const txs = 2000
	matched := []int{3, 517, 1024, 1500, 1999}
	block := syntheticBlock(txs, rand.New(rand.NewPCG(5, 6)))
	mb := BuildMerkleBlock(block, func(i int, _ *wire.MsgTx) bool {
		for _, m := range matched {
			if m == i {
				return true
			}
		}
		return false
	})
	return block, mb, matched
}

// BenchmarkVerifyMerkleBlock measures verifying a 2,000-tx merkleblock with
// five matches. btcutil/bloom has no verifier, so the baseline is the plain
// transcription of Core's ExtractMatches kept in merkle_reference_test.go
// ("reference").
func BenchmarkVerifyMerkleBlock(b *testing.B) {
	_, mb, matched := merkleBenchBlock(b)
	b.Run("2000tx_5matches/bip37", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m, _, err := VerifyMerkleBlock(mb)
			require.NoError(b, err)
			require.Equal(b, len(matched), len(m), err)
		}
	})
	b.Run("2000tx_5matches/reference", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			root, m, _, ok := newRefPMT(mb.Transactions, mb.Hashes, mb.Flags).extract()
			require.True(b, ok, "reference rejected the tree")
			require.Equal(b, mb.Header.MerkleRoot, root, "reference rejected the tree")
			require.Equal(b, len(matched), len(m), "reference rejected the tree")
		}
	})
}

// BenchmarkFilterBlock measures serving a filtered block: the relevance
// test over 2,000 transactions and the partial merkle tree, against
// btcutil's NewMerkleBlock.
func BenchmarkFilterBlock(b *testing.B) {
	block, _, _ := merkleBenchBlock(b)
	rng := rand.New(rand.NewPCG(7, 8))
	f, _, _ := filledFilters(b, benchFilters[0], 20, rng)
	msg := f.MsgFilterLoad()
	b.Run("2000tx/bip37", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			FilterBlock(f.Clone(), block)
		}
	})
	b.Run("2000tx/btcutil", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			bloom.NewMerkleBlock(btcutil.NewBlock(block), bloom.LoadFilter(&wire.MsgFilterLoad{
				Filter: append([]byte(nil), msg.Filter...), HashFuncs: msg.HashFuncs, Tweak: msg.Tweak, Flags: msg.Flags}))
		}
	})
}

// BenchmarkMatcher measures Matcher.Match20 and Match33 on non-members of
// a filter filled to capacity, per element, in batches of MaxMatchBatch,
// beside Matches on the same elements one at a time and btcutil/bloom's
// Matches. "portable" is the Matcher without its AVX2 kernel.
func BenchmarkMatcher(b *testing.B) {
	for _, spec := range benchFilters {
		for _, size := range benchElementSizes {
			rng := rand.New(rand.NewPCG(9, uint64(size)))
			f, bf, _ := filledFilters(b, spec, size, rng)
			m := NewMatcher(f)
			queries := randomElements(rng, benchElements, size)
			name := fmt.Sprintf("%s/%dB", spec.name, size)
			var batch func(lo int) uint64
			switch size {
			case hash160Len:
				arr := make([][hash160Len]byte, benchElements)
				for i, q := range queries {
					arr[i] = [hash160Len]byte(q)
				}
				batch = func(lo int) uint64 { return m.Match20(arr[lo : lo+MaxMatchBatch]) }
			case compressedPubKeyLen:
				arr := make([][compressedPubKeyLen]byte, benchElements)
				for i, q := range queries {
					arr[i] = [compressedPubKeyLen]byte(q)
				}
				batch = func(lo int) uint64 { return m.Match33(arr[lo : lo+MaxMatchBatch]) }
			}
			perElement := func(b *testing.B) {
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*MaxMatchBatch), "ns/elem")
			}
			for _, vector := range []bool{true, false} {
				if vector && !useAVX2 {
					continue
				}
				variant := "/Matcher"
				if !vector {
					variant = "/Matcher-portable"
				}
				b.Run(name+variant, func(b *testing.B) {
					defer setAVX2(vector)()
					hits := 0
					for i := 0; b.Loop(); i++ {
						hits += bits.OnesCount64(batch(i * MaxMatchBatch & benchMask))
					}
					sink = hits
					perElement(b)
				})
			}
			b.Run(name+"/Matches", func(b *testing.B) {
				hits := 0
				for i := 0; b.Loop(); i++ {
					for _, q := range queries[i*MaxMatchBatch&benchMask:][:MaxMatchBatch] {
						if f.Matches(q) {
							hits++
						}
					}
				}
				sink = hits
				perElement(b)
			})
			b.Run(name+"/btcutil", func(b *testing.B) {
				hits := 0
				for i := 0; b.Loop(); i++ {
					for _, q := range queries[i*MaxMatchBatch&benchMask:][:MaxMatchBatch] {
						if bf.Matches(q) {
							hits++
						}
					}
				}
				sink = hits
				perElement(b)
			})
		}
	}
}
