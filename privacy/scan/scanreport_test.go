package scan

import (
	"context"
	"math"
	"testing"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/element"
)

func TestRunSynthetic(t *testing.T) {
	f := bitcoinjFilter(t)
	for _, pubKeys := range []bool{false, true} {
		u := Synthetic{Seed: 1, Count: 1_000_000, PubKeys: pubKeys}
		rep, err := RunSynthetic(context.Background(), SyntheticConfig{
			Universe: u, Filters: []*bip37.Filter{f, f}, Workers: 2, Baseline: 30_000,
		})
		if err != nil {
			t.Fatal(err)
		}
		want := scanAll(t, element.Stream(u), Config{Filters: []*bip37.Filter{f}})
		if rep.Candidates != u.Count || rep.Workers != 2 || len(rep.Filters) != 2 || rep.Filters[1].Matched != want.AnyCounts[0] {
			t.Fatalf("pubkeys %v: report %+v, scan matched %d", pubKeys, rep, want.AnyCounts[0])
		}
		line := rep.Filters[0]
		if line.Bytes != f.Size() || line.HashFuncs != f.HashFuncs() || math.Abs(float64(line.Matched)-line.Expected) > 5*line.Sigma {
			t.Errorf("pubkeys %v: filter line %+v", pubKeys, line)
		}
		bl := rep.Baseline
		if bl == nil || bl.Candidates != 30_000 || !bl.Agree || bl.ScanPerSec <= 0 || bl.BtcutilPerSec <= 0 {
			t.Errorf("pubkeys %v: baseline %+v", pubKeys, bl)
		}
	}
	if _, err := RunSynthetic(context.Background(), SyntheticConfig{Universe: Synthetic{Count: 1}}); err == nil {
		t.Error("a scan without filters did not fail")
	}
}
