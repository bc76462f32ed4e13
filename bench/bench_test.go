package main

import (
	"context"
	"errors"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
)

func TestCompareTruth(t *testing.T) {
	a := FoundTx{Txid: strings.Repeat("a", 64), Height: 5}
	b := FoundTx{Txid: strings.Repeat("b", 64), Height: 7}
	c := FoundTx{Txid: strings.Repeat("c", 64), Height: 9}
	tests := []struct {
		name  string
		found []FoundTx
		ok    bool
		want  string
	}{
		{"equal", []FoundTx{b, a}, true, ""},
		{"missing", []FoundTx{a}, false, "missing 1"},
		{"extra", []FoundTx{a, b, c}, false, "extra 1"},
		{"wrong height", []FoundTx{a, {Txid: b.Txid, Height: 8}}, false, "missing 1"},
		{"duplicate", []FoundTx{a, b, b}, false, "duplicates 1"},
	}
	for _, tc := range tests {
		ok, detail := compareTruth([]FoundTx{a, b}, tc.found)
		if ok != tc.ok || !strings.Contains(detail, tc.want) {
			t.Errorf("%s: got %v %q, want %v containing %q", tc.name, ok, detail, tc.ok, tc.want)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestParseBloomwatchJSON(t *testing.T) {
	out := []byte("progress line\n{\n  \"tip_height\": 12,\n  \"balance_sat\": 5,\n  \"txs\": [\n    {\"txid\": \"ab\", \"height\": 3, \"delta_sat\": 5}\n  ],\n  \"false_positives\": 2,\n  \"bytes_received\": 999,\n  \"timing\": {\"first_filter_ms\": 120.5, \"synced_ms\": 403.5}\n}\n")
	run, err := parseBloomwatchJSON(out)
	if err != nil {
		t.Fatal(err)
	}
	r := run.result
	if got := run.phases["p2p sync"]; got != 283 {
		t.Fatalf("p2p sync %v ms, want 283", got)
	}
	if r.TipHeight != 12 || r.FalsePositives != 2 || r.BytesReceived != 999 || len(r.Txs) != 1 || r.Txs[0] != (FoundTx{Txid: "ab", Height: 3}) {
		t.Fatalf("parsed %+v", r)
	}
	if _, err := parseBloomwatchJSON([]byte("no json")); !errors.Is(err, errNoSummary) {
		t.Fatalf("no JSON: %v", err)
	}
	if _, err := parseBloomwatchJSON([]byte(`{"tip_height": 1, "txs": []}`)); !errors.Is(err, errNoSummary) {
		t.Fatalf("fields absent: %v", err)
	}
}

func TestProcCPU(t *testing.T) {
	deadline := time.Now().Add(50 * time.Millisecond)
	for time.Now().Before(deadline) {
	}
	d, err := procCPU(os.Getpid())
	if err != nil || d <= 0 {
		t.Fatalf("procCPU = %v, %v", d, err)
	}
	if _, err := procCPU(1 << 30); err == nil {
		t.Fatal("no error for a missing pid")
	}
}

func TestGenerateHeadersPassMinimalChecks(t *testing.T) {
	params := &chaincfg.RegressionNetParams
	hdrs := generateHeaders(params, 300)
	if err := minimalHeaderChecks(params, hdrs); err != nil {
		t.Fatal(err)
	}
	hdrs[100].Nonce++
	if err := minimalHeaderChecks(params, hdrs); err == nil {
		t.Fatal("tampered chain passed")
	}
}

func TestScalePoints(t *testing.T) {
	cfg := &benchConfig{Txs: 10, Spend: 0.5, Seed: 1, ScaleBlocks: []int{500, 2000, 8000}, ScaleAddrs: []int{20, 200, 2000}}
	pts := scalePoints(cfg)
	if len(pts) != 5 {
		t.Fatalf("cross series: %d points %v", len(pts), pts)
	}
	cfg.ScaleGrid = true
	if pts := scalePoints(cfg); len(pts) != 9 {
		t.Fatalf("grid: %d points", len(pts))
	}
}

// TestRunMeasuredRSSIsTheChilds checks that a client's peak RSS is its own,
// not the (large) bench's: the spawn helper keeps Linux from folding the
// parent's hiwater RSS into the child's ru_maxrss.
func TestRunMeasuredRSSIsTheChilds(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	spawn, err := buildSpawn(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	env := &benchEnv{spawn: spawn, tmp: dir, log: io.Discard}
	ballast := make([]byte, 96<<20) // make the parent big
	for i := range ballast {
		ballast[i] = 1
	}
	small, out, err := runMeasured(ctx, env, nil, nil, "/bin/sh", "-c", "echo hi")
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != "hi\n" {
		t.Fatalf("stdout %q", out)
	}
	big, _, err := runMeasured(ctx, env, nil, nil, "/bin/sh", "-c", `x=$(head -c 40000000 /dev/zero | tr '\0' a); echo ${#x}`)
	if err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(ballast)
	if small.MaxRSS > 16<<20 {
		t.Fatalf("sh reported %d MiB: the parent's RSS leaked into the child's", small.MaxRSS>>20)
	}
	if big.MaxRSS < 40<<20 || big.Wall <= 0 || big.CPU <= 0 {
		t.Fatalf("big child: %+v", big)
	}
	if _, _, err := runMeasured(ctx, env, nil, nil, "/bin/sh", "-c", "exit 3"); err == nil {
		t.Fatal("failing child reported no error")
	}
}
