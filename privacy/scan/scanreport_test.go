package scan

import (
	"context"
	"testing"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/stretchr/testify/require"
)

func TestRunSynthetic(t *testing.T) {
	f := bitcoinjFilter(t)
	for _, pubKeys := range []bool{false, true} {
		u := Synthetic{Seed: 1, Count: 1_000_000, PubKeys: pubKeys}
		rep, err := RunSynthetic(context.Background(), SyntheticConfig{
			Universe: u, Filters: []*bip37.Filter{f, f}, Workers: 2, Baseline: 30_000,
		})
		require.NoError(t, err)
		want := scanAll(t, element.Stream(u), Config{Filters: []*bip37.Filter{f}})
		require.Equal(t, u.Count, rep.Candidates, "pubkeys %v: report %+v, scan matched %d", pubKeys, rep, want.AnyCounts[0])
		require.Equal(t, 2, rep.Workers, "pubkeys %v: report %+v, scan matched %d", pubKeys, rep, want.AnyCounts[0])
		require.Len(t, rep.Filters, 2, "pubkeys %v: report %+v, scan matched %d", pubKeys, rep, want.AnyCounts[0])
		require.Equal(t, want.AnyCounts[0], rep.Filters[1].Matched, "pubkeys %v: report %+v, scan matched %d", pubKeys, rep, want.AnyCounts[0])
		line := rep.Filters[0]
		require.Equal(t, f.Size(), line.Bytes, "pubkeys %v: filter line %+v", pubKeys, line)
		require.Equal(t, f.HashFuncs(), line.HashFuncs, "pubkeys %v: filter line %+v", pubKeys, line)
		require.InDelta(t, line.Expected, float64(line.Matched), 5*line.Sigma, "pubkeys %v: filter line %+v", pubKeys, line)
		bl := rep.Baseline
		require.NotNil(t, bl, "pubkeys %v: baseline %+v", pubKeys, bl)
		require.Equal(t, uint64(30_000), bl.Candidates, "pubkeys %v: baseline %+v", pubKeys, bl)
		require.True(t, bl.Agree, "pubkeys %v: baseline %+v", pubKeys, bl)
		require.Greater(t, bl.ScanPerSec, float64(0), "pubkeys %v: baseline %+v", pubKeys, bl)
		require.Greater(t, bl.BtcutilPerSec, float64(0), "pubkeys %v: baseline %+v", pubKeys, bl)
	}
	_, err := RunSynthetic(context.Background(), SyntheticConfig{Universe: Synthetic{Count: 1}})
	require.Error(t, err, "a scan without filters did not fail")
}
