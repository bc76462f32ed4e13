package main

import (
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil/bloom"
	"github.com/btcsuite/btcd/wire"
)

func TestClientSpecs(t *testing.T) {
	for _, name := range clientNames() {
		s, err := lookupClient(name)
		if err != nil {
			t.Fatal(err)
		}
		if s.peers < 1 || s.doc == "" || (s.kind != kindBloomwatch && (s.xpub || len(s.args) > 0 || s.peers != 1)) {
			t.Errorf("%s: %+v", name, s)
		}
	}
	if _, err := lookupClient("bloomwatch-fast"); err == nil || !strings.Contains(err.Error(), "minimal-bwcap") {
		t.Fatalf("unknown client: %v", err)
	}
	if n := peersNeeded([]string{"bloomwatch", "minimal"}); n != 1 {
		t.Fatalf("one-peer clients need %d servers", n)
	}
	if n := peersNeeded([]string{"bloomwatch", "bloomwatch-check1"}); n != 2 {
		t.Fatalf("a cross-peer check needs %d servers", n)
	}
}

func TestScenarioFlags(t *testing.T) {
	cfg, err := parseBenchFlags([]string{"--scenarios", "all", "--dense-blocks", "7"})
	if err != nil {
		t.Fatal(err)
	}
	scs, err := scenarios(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(scs) != len(scenarioOrder) {
		t.Fatalf("all: %d scenarios", len(scs))
	}
	for _, sc := range scs {
		for _, c := range sc.clients {
			if _, err := lookupClient(c); err != nil {
				t.Errorf("%s: %v", sc.name, err)
			}
		}
		if (sc.name == scenarioDense || sc.name == scenarioChecks) && (sc.chain.Blocks != 7 || sc.chain.Txs != 2000) {
			t.Errorf("%s chain %v", sc.name, sc.chain)
		}
	}
	if _, err := parseBenchFlags([]string{"--scenarios", "addrs2000,bogus"}); err == nil {
		t.Fatal("unknown scenario accepted")
	}
	if _, err := parseBenchFlags([]string{"--clients", "bloomwatch,minimal-bwcap,bloomwatch-full1"}); err != nil {
		t.Fatal(err)
	}
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
	if len(got) != 3 {
		t.Fatalf("%d results: %+v", len(got), got)
	}
	if got[0].Met || math.Abs(got[0].Ratio-1.3) > 1e-9 || len(got[0].RoundRatios) != 2 || got[0].RoundMedian != 2 {
		t.Errorf("wall: %+v", got[0])
	}
	if !got[1].Met || !got[2].Met || got[2].Ratio != 1 {
		t.Errorf("cpu, bytes: %+v %+v", got[1], got[2])
	}
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
	if f == nil || f.Bytes != 100 || f.HashFuncs != 3 || f.EndFPRate != 0.2 || !f.Capped || f.Loads != 1 {
		t.Fatalf("median filter %+v", f)
	}
	if medianFilter("neutrino", runs) != nil {
		t.Fatal("a filter for a client without one")
	}
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
	if rep.Capped || rep.Bytes != 2396 || rep.HashFuncs != 13 || rep.LoadFPRate > 1e-15 || rep.EndFPRate > 1e-15 {
		t.Fatalf("small filter %+v", rep)
	}
	big := bloom.NewFilter(30000, 1, 1e-4, wire.BloomUpdateAll)
	for range 3000 {
		big.Add(elem())
	}
	rep = minimalFilterReport(big, 30000, 1e-4, 3000)
	if !rep.Capped || rep.Bytes != wire.MaxFilterLoadFilterSize || rep.HashFuncs != 6 {
		t.Fatalf("capped filter %+v", rep)
	}
	for range 6000 { // what UPDATE_ALL insertions would add
		big.Add(elem())
	}
	after := minimalFilterReport(big, 30000, 1e-4, 3000)
	if after.EndFPRate <= rep.EndFPRate || after.LoadFPRate != rep.LoadFPRate {
		t.Fatalf("end rate %v after insertions, %v before (load %v, %v)", after.EndFPRate, rep.EndFPRate, after.LoadFPRate, rep.LoadFPRate)
	}
}

func TestParseBloomwatchFilter(t *testing.T) {
	out := []byte(`{"tip_height": 3, "txs": [], "false_positives": 0, "bytes_received": 1, "spot_checks": 4, "omissions": 1,
"filter": {"bytes": 36000, "hash_funcs": 6, "elements": 15020, "capacity": 32768, "fp_rate": 0.0001, "predicted_fp_rate": 0.004,
"target_fp_rate": 0.0001, "capped": true, "loads": 2}}`)
	run, err := parseBloomwatchJSON(out)
	if err != nil {
		t.Fatal(err)
	}
	r := run.result
	want := FilterReport{Bytes: 36000, HashFuncs: 6, Capacity: 32768, Capped: true, Elements: 15020, TargetFPRate: 1e-4,
		LoadFPRate: 1e-4, EndFPRate: 0.004, Loads: 2}
	if r.Filter == nil || *r.Filter != want || r.SpotChecks != 4 || r.Omissions != 1 {
		t.Fatalf("parsed %+v filter %+v", r, r.Filter)
	}
}

func TestWriteSyncScript(t *testing.T) {
	dir := t.TempDir()
	path, err := writeSyncScript(dir, []string{"127.0.0.1:1", "127.0.0.1:2"}, []string{"sb1qa", "sb1qb"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || filepath.Dir(path) != dir {
		t.Fatal(path, err)
	}
	s := string(b)
	for _, want := range []string{"--connect 127.0.0.1:1 --connect 127.0.0.1:2", "--address sb1qa", "--address sb1qb", `"$@"`} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %q:\n%s", want, s)
		}
	}
}
