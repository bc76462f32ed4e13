package experiments

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/filterpolicy"
	"github.com/bloomwatch/bloomwatch/privacy/stats"
)

// TestPublishedFigureReadings pins the readings of published figures
// that docs/RESEARCH.md and docs/PRIVACY-MODEL.md state: Nick's 1.27 is
// his rounded rate squared times 60e6 (1.279, printed as 1.27); the
// formula's P(no false positive) at N = 20 is 0.626 over the
// single-filter experiment's 3e7 addresses and 0.598 over 33 M; Nick's
// 2.66e-8 equals |P| phi^4 at |P| = 56.7 M; RAPPOR's epsilon 28.56 is
// per key, 571 for the whole 20-key wallet at f = 0.5.
func TestPublishedFigureReadings(t *testing.T) {
	require.InDelta(t, 1.279, 0.000146*0.000146*60e6, 5e-4, "Nick's 1.27: 0.000146^2 x 60e6")
	f := bitcoinjRate(20)
	require.InDelta(t, 0.626, stats.ProbNoFalsePositive(f, 3e7-20), 5e-4, "P(no FP) at N = 20, |A| = 3e7")
	require.InDelta(t, 0.598, stats.ProbNoFalsePositive(f, 33e6-20), 5e-4, "P(no FP) at N = 20, |A| = 33 M")
	require.InDelta(t, 56.7e6, nickImpliedUniverse(), 0.05e6, "|P| with |P| phi^4 = 2.66e-8")
	_, k := filterpolicy.FilterSize(rapporKeys, rapporRate)
	require.InDelta(t, 28.56, rapporEpsilon(0.5, k), 5e-3, "per-key epsilon at f = 0.5")
	require.InDelta(t, 571.3, rapporWalletEpsilon(0.5, k, rapporKeys), 0.05, "the 20-key wallet's epsilon at f = 0.5")
	require.False(t, math.IsNaN(f))
}
