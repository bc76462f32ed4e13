package tui

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/privacy/stats"
)

// TestTimingLineSaysNoVerdict: the dashboard's timing-attack line prints
// no verdict where the attack has no power (one suspect, a chance range
// reaching 1.00), never "no better than chance"; with a verdict it
// prints the verdict.
func TestTimingLineSaysNoVerdict(t *testing.T) {
	plain := func(s string) string { return s }
	one := privacy.BehaviourScore{Signal: privacy.SignalAny, Suspects: 1, Hits: 1, Precision: 1,
		Chance: stats.Interval{Lo: 0, Hi: 1}, Verdict: privacy.VerdictNoPower, Power: 0}
	r := &privacy.BehaviourReading{HasTruth: true, Reloads: 1, PointingReloads: 1, Pointed: 1,
		Blocks: privacy.BehaviourLevel{Candidates: 8, Wallet: 2, Scores: []privacy.BehaviourScore{one}},
		Txs:    privacy.BehaviourLevel{Candidates: 9, Wallet: 2, Scores: []privacy.BehaviourScore{one}}}
	got := strings.Join(behaviourLines(plain, 200, r), "\n")
	require.Contains(t, got, "timing attack: no verdict: 1 suspect cannot tell")
	require.NotContains(t, got, privacy.VerdictChance)

	chance := one
	chance.Suspects, chance.Verdict, chance.Power = 40, privacy.VerdictChance, 0.93
	r.Blocks.Scores = []privacy.BehaviourScore{chance}
	got = strings.Join(behaviourLines(plain, 200, r), "\n")
	require.Contains(t, got, "timing attack: "+privacy.VerdictChance)

	points := chance
	points.Verdict = privacy.VerdictPoints
	r.Txs.Scores = []privacy.BehaviourScore{points}
	got = strings.Join(behaviourLines(plain, 200, r), "\n")
	require.Contains(t, got, "timing attack: points at your wallet")
}
