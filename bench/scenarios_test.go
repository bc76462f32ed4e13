package main

import (
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/btcsuite/btcd/btcutil/bloom"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

func TestClientSpecs(t *testing.T) {
	for _, name := range clientNames() {
		s, err := lookupClient(name)
		require.NoError(t, err)
		require.GreaterOrEqual(t, s.peers, 1, "%s: %+v", name, s)
		require.NotEqual(t, "", s.doc, "%s: %+v", name, s)
		require.False(t, s.kind != kindBloomwatch && (s.xpub || len(s.args) > 0 || s.peers != 1), "%s: %+v", name, s)
	}
	_, err := lookupClient("bloomwatch-fast")
	require.Error(t, err, "unknown client: %v", err)
	require.Contains(t, err.Error(), "minimal-bwcap", "unknown client: %v", err)
	n := peersNeeded([]string{"bloomwatch", "minimal"})
	require.Equal(t, 1, n, "one-peer clients need %d servers", n)
	n = peersNeeded([]string{"bloomwatch", "bloomwatch-check1"})
	require.Equal(t, 2, n, "a cross-peer check needs %d servers", n)
}

func TestScenarioFlags(t *testing.T) {
	cfg, err := parseBenchFlags([]string{"--scenarios", "all", "--dense-blocks", "7"})
	require.NoError(t, err)
	scs, err := scenarios(cfg)
	require.NoError(t, err)
	require.Len(t, scs, len(scenarioOrder), "all: %d scenarios", len(scs))
	for _, sc := range scs {
		for _, c := range sc.clients {
			_, err := lookupClient(c)
			require.NoError(t, err, "%s", sc.name)
		}
		require.False(t, (sc.name == scenarioDense || sc.name == scenarioChecks) && (sc.chain.Blocks != 7 || sc.chain.Txs != 2000), "%s chain %v", sc.name, sc.chain)
	}
	_, err = parseBenchFlags([]string{"--scenarios", "addrs2000,bogus"})
	require.Error(t, err, "unknown scenario accepted")
	_, err = parseBenchFlags([]string{"--clients", "bloomwatch,minimal-bwcap,bloomwatch-full1"})
	require.NoError(t, err)
}

func TestEvalGoals(t *testing.T) {
	s := &SeriesReport{Medians: []Summary{
		{Client: "bloomwatch", Runs: 3, WallMS: 130, CPUMS: 160, Bytes: 10},
		{Client: "minimal", Runs: 3, WallMS: 100, CPUMS: 100, Bytes: 10},
	}, Runs: []RunRecord{
		{Client: "bloomwatch", Round: 1, WallMS: 300}, {Client: "minimal", Round: 1, WallMS: 100},
		{Client: "bloomwatch", Round: 2, WallMS: 100}, {Client: "minimal", Round: 2, WallMS: 100},
		{Client: "bloomwatch", Round: 3, WallMS: 120}, {Client: "minimal", Round: 3, Failed: true},
	}}
	got := evalGoals(s, []goal{
		{"bloomwatch", "minimal", metricWall, 1.2},
		{"bloomwatch", "minimal", metricCPU, 1.7},
		{"bloomwatch", "minimal", metricBytes, 0},
		{"bloomwatch", "neutrino", metricWall, 1.2}, // did not run: left out
	})
	require.Len(t, got, 3, "%d results: %+v", len(got), got)
	require.False(t, got[0].Met, "wall: %+v", got[0])
	require.InDelta(t, 1.3, got[0].Ratio, 1e-9, "wall: %+v", got[0])
	require.Len(t, got[0].RoundRatios, 2, "wall: %+v", got[0])
	require.Equal(t, float64(2), got[0].RoundMedian, "wall: %+v", got[0])
	require.True(t, got[1].Met, "cpu, bytes: %+v %+v", got[1], got[2])
	require.True(t, got[2].Met, "cpu, bytes: %+v %+v", got[1], got[2])
	require.Equal(t, float64(1), got[2].Ratio, "cpu, bytes: %+v %+v", got[1], got[2])
}

func TestMedianFilter(t *testing.T) {
	runs := []RunRecord{
		{Client: "minimal", Filter: &FilterReport{Bytes: 100, HashFuncs: 3, EndFPRate: 0.1, Loads: 1}},
		{Client: "minimal", Filter: &FilterReport{Bytes: 100, HashFuncs: 3, EndFPRate: 0.3, Loads: 1, Capped: true}},
		{Client: "minimal", Filter: &FilterReport{Bytes: 100, HashFuncs: 3, EndFPRate: 0.2, Loads: 1}},
		{Client: "minimal", Failed: true, Filter: &FilterReport{Bytes: 9}},
		{Client: "bloomwatch", Filter: &FilterReport{Bytes: 7}},
	}
	f := medianFilter("minimal", runs)
	require.NotNil(t, f, "median filter %+v", f)
	require.Equal(t, 100, f.Bytes, "median filter %+v", f)
	require.Equal(t, uint32(3), f.HashFuncs, "median filter %+v", f)
	require.Equal(t, 0.2, f.EndFPRate, "median filter %+v", f)
	require.True(t, f.Capped, "median filter %+v", f)
	require.Equal(t, 1, f.Loads, "median filter %+v", f)
	require.Nil(t, medianFilter("neutrino", runs), "a filter for a client without one")
}

// TestMinimalFilterReport checks the minimal loop's filter report against
// BIP37's sizing: 30,000 elements at 1e-4 exceed the cap, k follows the
// capped size, and the end rate grows with the mirror's insertions.
func TestMinimalFilterReport(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	elem := func() []byte {
		b := make([]byte, 20)
		r.Read(b)
		return b
	}
	small := bloom.NewFilter(1000, 1, 1e-4, wire.BloomUpdateAll)
	for range 20 {
		small.Add(elem())
	}
	rep := minimalFilterReport(small, 1000, 1e-4, 20)
	require.False(t, rep.Capped, "small filter %+v", rep)
	require.Equal(t, 2396, rep.Bytes, "small filter %+v", rep)
	require.Equal(t, uint32(13), rep.HashFuncs, "small filter %+v", rep)
	require.LessOrEqual(t, rep.LoadFPRate, 1e-15, "small filter %+v", rep)
	require.LessOrEqual(t, rep.EndFPRate, 1e-15, "small filter %+v", rep)
	big := bloom.NewFilter(30000, 1, 1e-4, wire.BloomUpdateAll)
	for range 3000 {
		big.Add(elem())
	}
	rep = minimalFilterReport(big, 30000, 1e-4, 3000)
	require.True(t, rep.Capped, "capped filter %+v", rep)
	require.Equal(t, wire.MaxFilterLoadFilterSize, rep.Bytes, "capped filter %+v", rep)
	require.Equal(t, uint32(6), rep.HashFuncs, "capped filter %+v", rep)
	for range 6000 { // what UPDATE_ALL insertions would add
		big.Add(elem())
	}
	after := minimalFilterReport(big, 30000, 1e-4, 3000)
	require.Greater(t, after.EndFPRate, rep.EndFPRate, "end rate %v after insertions, %v before (load %v, %v)", after.EndFPRate, rep.EndFPRate, after.LoadFPRate, rep.LoadFPRate)
	require.Equal(t, rep.LoadFPRate, after.LoadFPRate, "end rate %v after insertions, %v before (load %v, %v)", after.EndFPRate, rep.EndFPRate, after.LoadFPRate, rep.LoadFPRate)
}

func TestParseBloomwatchFilter(t *testing.T) {
	out := []byte(`{"tip_height": 3, "txs": [], "false_positives": 0, "bytes_received": 1, "spot_checks": 4, "omissions": 1,
"filter": {"bytes": 36000, "hash_funcs": 6, "elements": 15020, "capacity": 32768, "fp_rate": 0.0001, "predicted_fp_rate": 0.004,
"target_fp_rate": 0.0001, "capped": true, "loads": 2}}`)
	run, err := parseBloomwatchJSON(out)
	require.NoError(t, err)
	r := run.result
	want := FilterReport{Bytes: 36000, HashFuncs: 6, Capacity: 32768, Capped: true, Elements: 15020, TargetFPRate: 1e-4,
		LoadFPRate: 1e-4, EndFPRate: 0.004, Loads: 2}
	require.NotNil(t, r.Filter, "parsed %+v filter %+v", r, r.Filter)
	require.Equal(t, want, *r.Filter, "parsed %+v filter %+v", r, r.Filter)
	require.Equal(t, 4, r.SpotChecks, "parsed %+v filter %+v", r, r.Filter)
	require.Equal(t, 1, r.Omissions, "parsed %+v filter %+v", r, r.Filter)
}

func TestWriteSyncScript(t *testing.T) {
	dir := t.TempDir()
	path, err := writeSyncScript(dir, []string{"127.0.0.1:1", "127.0.0.1:2"}, []string{"sb1qa", "sb1qb"})
	require.NoError(t, err)
	b, err := os.ReadFile(path)
	require.NoError(t, err, path)
	require.Equal(t, dir, filepath.Dir(path), "%v %v", path, err)
	s := string(b)
	for _, want := range []string{"--connect 127.0.0.1:1 --connect 127.0.0.1:2", "--address sb1qa", "--address sb1qb", `"$@"`} {
		require.Contains(t, s, want, "script lacks %q:\n%s", want, s)
	}
}
