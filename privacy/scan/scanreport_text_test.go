package scan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSyntheticReportWriteText(t *testing.T) {
	r := &SyntheticReport{Candidates: 1_000_000, Workers: 2, Seconds: 0.5, CPUSeconds: 0.9, PerSec: 2e6, PerSecPerCore: 1e6,
		Filters: []FilterLine{{Bytes: 1269, HashFuncs: 10, FPRate: 0.000512345, Matched: 510, Expected: 512.3, Sigma: 22.6}}}
	var b strings.Builder
	require.NoError(t, r.WriteText(&b))
	want := "scanned 1000000 synthetic candidates through 1 filter(s) in 0.50 s (0.90 s CPU): 2.0 M/s (1.0 M/s per core, 2 workers)\n" +
		"filter 0: 1269 bytes, k=10, fp rate 0.0005123: 510 matched, expected 512.3 +- 22.6\n"
	require.Equal(t, want, b.String(), "got\n%q\nwant\n%q", b.String(), want)
	r.Baseline = &Baseline{Candidates: 1000, ScanPerSec: 5e7, Bip37PerSec: 2e7, BtcutilPerSec: 1e7, ScanRatio: 5, Ratio: 2, Agree: true}
	b.Reset()
	require.NoError(t, r.WriteText(&b))
	for _, s := range []string{
		"baseline, one core, first 1000 candidates through filter 0, alternated: scan 50.0 M/s, bip37 Matches 20.0 M/s, btcutil/bloom 10.0 M/s; scan/btcutil ratio 5.00, Matches/btcutil ratio 2.00 (same matches: true)\n",
		"btcutil/bloom at its rate on 2 cores: 0.05 s for these 1000000 candidates (scan: 0.50 s)\n",
	} {
		require.Contains(t, b.String(), s, "missing %q in\n%s", s, b.String())
	}
}
