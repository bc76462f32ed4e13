package behaviour_test

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/privacy/behaviour"
	"github.com/bloomwatch/bloomwatch/privacy/internal/behavetest"
)

// TestBehaviourOneSuspectNoVerdict: one reload right after the wallet's
// only payment names one block; its chance range reaches 1.00, so neither
// "points at the wallet" nor "no better than chance" can be printed: the
// score says it cannot tell, and so does its one-line summary.
func TestBehaviourOneSuspectNoVerdict(t *testing.T) {
	c := behavetest.NewChain(rand.New(rand.NewSource(3)), 100, 160, 0.3)
	first := int32(-1)
	for h := c.From; h <= c.To; h++ {
		if c.Wallet[h] {
			first = h
			break
		}
	}
	require.GreaterOrEqual(t, first, c.From)
	r := behavetest.RunLive(t, c, func(h int32) bool { return h == first }, false)
	s := r.Blocks.Score(behaviour.SignalReloadTiming)
	require.Equal(t, 1, s.Suspects)
	require.Equal(t, 1.0, s.Chance.Hi, "the chance range of one suspect reaches 1.00")
	require.Equal(t, behaviour.VerdictNoPower, s.Verdict, "%v", s)
	require.Less(t, s.Power, behaviour.MinVerdictPower)
	require.Nil(t, s.PHolm)
	require.Contains(t, s.String(), "no verdict: 1 suspect cannot tell")
}
