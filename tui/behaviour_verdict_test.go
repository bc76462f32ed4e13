package tui

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/privacy/behaviour"
	"github.com/bloomwatch/bloomwatch/privacy/stats"
)

// TestTimingLineSaysNoVerdict: the dashboard's timing-attack line prints
// no verdict where the attack has no power (one suspect, a chance range
// reaching 1.00), never "no better than chance"; with a verdict it
// prints the verdict.
func TestTimingLineSaysNoVerdict(t *testing.T) {
	plain := func(s string) string { return s }
	one := behaviour.Score{Signal: behaviour.SignalAny, Suspects: 1, Hits: 1, Precision: 1,
		Chance: stats.Interval{Lo: 0, Hi: 1}, Verdict: behaviour.VerdictNoPower, Power: 0}
	r := &behaviour.Reading{HasTruth: true, Reloads: 1, PointingReloads: 1, Pointed: 1,
		Blocks: behaviour.Level{Candidates: 8, Wallet: 2, Scores: []behaviour.Score{one}},
		Txs:    behaviour.Level{Candidates: 9, Wallet: 2, Scores: []behaviour.Score{one}}}
	got := strings.Join(behaviourLines(plain, 200, r), "\n")
	require.Contains(t, got, "timing attack: no verdict: 1 suspect cannot tell")
	require.NotContains(t, got, behaviour.VerdictChance)

	chance := one
	chance.Suspects, chance.Verdict, chance.Power = 40, behaviour.VerdictChance, 0.93
	r.Blocks.Scores = []behaviour.Score{chance}
	got = strings.Join(behaviourLines(plain, 200, r), "\n")
	require.Contains(t, got, "timing attack: "+behaviour.VerdictChance)

	points := chance
	points.Verdict = behaviour.VerdictPoints
	r.Txs.Scores = []behaviour.Score{points}
	got = strings.Join(behaviourLines(plain, 200, r), "\n")
	require.Contains(t, got, "timing attack: points at your wallet")
}
