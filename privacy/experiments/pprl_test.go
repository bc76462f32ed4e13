package experiments

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPPRLFrequencyAttackHasBite: on the seeds' own setting (one Bloom
// filter of padded bigrams per record, a public frequency list), c[p]-
// removes candidate bigrams, and names the alignment never saw are
// re-identified exactly, where c[p]+ alone re-identifies fewer; the
// exact guesses are right; a list of another population aligns wrongly.
func TestPPRLFrequencyAttackHasBite(t *testing.T) {
	r, err := Run(context.Background(), "pprl", Config{Seed: 1, HashFuncs: 15})
	require.NoError(t, err)
	pre := "public list: a second snapshot of the register (95 % of its records shared), k=15: "
	removed := rowByName(t, r, pre+"share of c[p]+ that c[p]- removes")
	require.Greater(t, removed.Measured, 0.3, "c[p]- removes candidates")
	pairs := rowByName(t, r, pre+"aligned pairs that pair a filter with its own name")
	require.Greater(t, pairs.Interval[0], 0.8)
	one := rowByName(t, r, pre+"never-aligned names re-identified exactly (correct 1-1)")
	plus := rowByName(t, r, pre+"the same without c[p]- (c[p]+ alone): correct 1-1")
	require.Greater(t, one.Interval[0], 0.02, "never-aligned names re-identified: %v %v", one.Measured, *one.Interval)
	require.Greater(t, one.Measured, plus.Measured+0.05, "c[p]- buys exact re-identifications")
	right := rowByName(t, r, pre+"exact (1-1) guesses that are right")
	require.Greater(t, right.Interval[0], 0.6)
	other := rowByName(t, r, "public list: births 1880-2024 (other years), k=15: aligned pairs that pair a filter with its own name")
	require.Less(t, other.Measured, 0.2, "another population's list misaligns")
}

// TestPPRLBigramsAndEncoding: padded bigrams, and an encoding that sets
// at most k bits per bigram and depends on the keys.
func TestPPRLBigramsAndEncoding(t *testing.T) {
	require.Equal(t, []string{"_a", "an", "nn", "na", "a_"}, bigrams("anna"))
	a := clkEncoder{l: pprlBits, k: 15, key1: []byte("one"), key2: []byte("two")}
	b := clkEncoder{l: pprlBits, k: 15, key1: []byte("three"), key2: []byte("two")}
	fa := a.encode(bigrams("anna"))
	require.LessOrEqual(t, fa.ones(), 5*15)
	require.Greater(t, fa.ones(), 15)
	require.Equal(t, fa.key(), a.encode(bigrams("anna")).key())
	require.NotEqual(t, fa.key(), b.encode(bigrams("anna")).key())
	names, err := loadNames()
	require.NoError(t, err)
	require.Len(t, names, 3000)
	require.Equal(t, "james", names[0].name)
}
