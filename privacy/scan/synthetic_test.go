package scan

import (
	"math/rand/v2"
	"testing"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/internal/testkit"
	"github.com/stretchr/testify/require"
)

// plainIndexed hides a universe's concrete type, so Run takes the
// per-candidate path even for a Synthetic.
type plainIndexed struct{ element.IndexedUniverse }

// TestScanSyntheticFastPathMatchesPlainPath scans 10^6 synthetic
// candidates (with and without public keys, alone and in a Concat) on the
// fast path and on the per-candidate path and requires identical results:
// every count and every hit, with their match bits and truth flags.
func TestScanSyntheticFastPathMatchesPlainPath(t *testing.T) {
	const count = 1_000_000
	rng := rand.New(rand.NewPCG(23, 5))
	wallet := testkit.RandomCandidates(rng, 271, 2)
	bitcoinj := testkit.MustFilter(t, 642, 0.0005, rng.Uint32(), bip37.UpdateNone, wallet...)
	loose := testkit.MustFilter(t, 60, 0.05, rng.Uint32(), bip37.UpdateNone, wallet[:40]...)
	odd, err := bip37.NewFilterFromBits(bitcoinj.Bits(), 7, rng.Uint32(), bip37.UpdateNone)
	require.NoError(t, err)
	matchAll, err := bip37.NewFilterFromBits(nil, 0, 0, bip37.UpdateNone)
	require.NoError(t, err)
	// The truth holds a few of the universe's own candidates (one form of
	// each), so that the wallet is seen, beside elements it never holds.
	var truthElems [][]byte
	var c element.Candidate
	for _, i := range []uint64{0, 63, 64, 999_999, 123_457} {
		Synthetic{Seed: 9, Count: count, PubKeys: true}.Fill(i, &c)
		truthElems = append(truthElems, c.Clone().Forms[i%2])
	}
	truthElems = append(truthElems, wallet[0].Forms...)
	truth := element.NewSet(truthElems)

	tests := []struct {
		name    string
		u       element.IndexedUniverse
		filters []*bip37.Filter
		truth   *element.Set
		workers int
	}{
		{"hashes, bitcoinj filter", Synthetic{Seed: 1, Count: count}, []*bip37.Filter{bitcoinj}, nil, 2},
		{"pubkeys, three filters, truth", Synthetic{Seed: 9, Count: count, PubKeys: true}, []*bip37.Filter{bitcoinj, loose, odd}, truth, 3},
		{"hashes, match-all and loose, truth", Synthetic{Seed: 9, Count: 5000}, []*bip37.Filter{matchAll, loose}, truth, 1},
		{"concat", element.NewConcat(element.SliceUniverse(wallet), Synthetic{Seed: 9, Count: count, PubKeys: true}, Synthetic{Seed: 2, Count: 777}),
			[]*bip37.Filter{loose, bitcoinj}, truth, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Filters: tc.filters, Truth: tc.truth, Workers: tc.workers}
			fast := scanAll(t, element.Stream(tc.u), cfg)
			var plainU element.IndexedUniverse = plainIndexed{tc.u}
			if cc, ok := tc.u.(*element.Concat); ok {
				parts := cc.Parts()
				for i, p := range parts {
					parts[i] = plainIndexed{p}
				}
				plainU = element.NewConcat(parts...)
			}
			plain := scanAll(t, element.Stream(plainU), cfg)
			require.Equal(t, tc.u.Len(), fast.Scanned, "scanned %d of %d", fast.Scanned, tc.u.Len())
			require.Equal(t, plain, fast, "fast path differs from the plain path:\nfast  any %v all %v forms %v truth %v hits %d\nplain any %v all %v forms %v truth %v hits %d", fast.AnyCounts, fast.AllCounts, fast.FormCounts[:3], fast.TruthCounts[:3], len(fast.Hits), plain.AnyCounts, plain.AllCounts, plain.FormCounts[:3], plain.TruthCounts[:3], len(plain.Hits))
			require.False(t, tc.truth != nil && fast.Truth() == 0, "no wallet candidate seen: the truth check is not exercised")
			require.NotEqual(t, uint64(0), fast.AnyCounts[0], "filter 0 matched nothing: test too weak")
		})
	}
}

// TestScanSyntheticCounts pins what seeds give (the figures of the
// per-candidate scan before the fast path existed) through the bitcoinj-sized
// benchmark filter over 10^6 synthetic candidates, with one form and with
// two: the fast path must not change a seed's counts.
func TestScanSyntheticCounts(t *testing.T) {
	f := bitcoinjFilter(t)
	tests := []struct {
		u                Synthetic
		wantAny, wantAll uint64
	}{
		{Synthetic{Seed: 1, Count: 1_000_000}, 147, 147},
		{Synthetic{Seed: 2, Count: 1_000_000, PubKeys: true}, 324, 0},
	}
	for _, tc := range tests {
		r := scanAll(t, element.Stream(tc.u), Config{Filters: []*bip37.Filter{f}})
		require.Equal(t, tc.wantAny, r.AnyCounts[0], "%+v: any %d all %d hits %d, want %d %d", tc.u, r.AnyCounts[0], r.AllCounts[0], len(r.Hits), tc.wantAny, tc.wantAll)
		require.Equal(t, tc.wantAll, r.AllCounts[0], "%+v: any %d all %d hits %d, want %d %d", tc.u, r.AnyCounts[0], r.AllCounts[0], len(r.Hits), tc.wantAny, tc.wantAll)
		require.Len(t, r.Hits, int(tc.wantAny), "%+v: any %d all %d hits %d, want %d %d", tc.u, r.AnyCounts[0], r.AllCounts[0], len(r.Hits), tc.wantAny, tc.wantAll)
	}
}

func TestSyntheticDeterministicAndDistinct(t *testing.T) {
	const n = 20000
	a := testkit.Collect(t, element.Stream(Synthetic{Seed: 7, Count: n, PubKeys: true}))
	b := testkit.Collect(t, element.Stream(Synthetic{Seed: 7, Count: n, PubKeys: true}))
	other := testkit.Collect(t, element.Stream(Synthetic{Seed: 8, Count: n}))
	seen := map[string]bool{}
	for i := range a {
		// 20000 candidates: a plain comparison guards each require.
		if !a[i].Equal(b[i]) {
			require.True(t, a[i].Equal(b[i]), "candidate %d differs between runs", i)
		}
		if len(a[i].Forms) != 2 || len(a[i].Forms[0]) != SyntheticHashSize || len(a[i].Forms[1]) != SyntheticPubKeySize {
			require.Len(t, a[i].Forms, 2, "candidate %d has shape %d forms", i, len(a[i].Forms))
			require.Len(t, a[i].Forms[0], SyntheticHashSize, "candidate %d has shape %d forms", i, len(a[i].Forms))
			require.Len(t, a[i].Forms[1], SyntheticPubKeySize, "candidate %d has shape %d forms", i, len(a[i].Forms))
		}
		if p := a[i].Forms[1][0]; p != 0x02 && p != 0x03 {
			require.Contains(t, []byte{0x02, 0x03}, p, "pubkey prefix %#x", p)
		}
		seen[a[i].Key()] = true
	}
	for _, c := range other {
		seen[c.Key()] = true
	}
	require.Len(t, seen, 2*n, "%d distinct primary forms among %d", len(seen), 2*n)
	// Bytes are balanced: each bit is set about half the time.
	ones := 0
	for _, c := range a {
		for _, x := range c.Forms[0] {
			for j := range 8 {
				ones += int(x>>j) & 1
			}
		}
	}
	total := n * SyntheticHashSize * 8
	d := float64(ones)/float64(total) - 0.5
	require.LessOrEqual(t, d, 0.005, "bit balance %.4f", float64(ones)/float64(total))
	require.GreaterOrEqual(t, d, -0.005, "bit balance %.4f", float64(ones)/float64(total))
}

func TestConcat(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	a := element.SliceUniverse(testkit.RandomCandidates(rng, 3, 1))
	empty := element.SliceUniverse(nil)
	b := element.SliceUniverse(testkit.RandomCandidates(rng, 2, 2))
	s := Synthetic{Seed: 9, Count: 4}
	c := element.NewConcat(a, empty, b, s)
	require.Equal(t, uint64(9), c.Len(), "Len = %d", c.Len())
	got := testkit.Collect(t, element.Stream(c))
	want := append(append(append([]element.Candidate{}, a...), b...), testkit.Collect(t, element.Stream(s))...)
	for i := range want {
		require.True(t, got[i].Equal(want[i]), "candidate %d differs", i)
	}
}
