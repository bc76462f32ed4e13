package main

import (
	"context"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/stretchr/testify/require"
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
		require.Equal(t, tc.ok, ok, "%s: got %v %q, want %v containing %q", tc.name, ok, detail, tc.ok, tc.want)
		require.Contains(t, detail, tc.want, "%s: got %v %q, want %v containing %q", tc.name, ok, detail, tc.ok, tc.want)
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		got := median(tc.in)
		require.Equal(t, tc.want, got, "median(%v) = %v, want %v", tc.in, got, tc.want)
	}
}

func TestParseBloomwatchJSON(t *testing.T) {
	out := []byte("progress line\n{\n  \"tip_height\": 12,\n  \"balance_sat\": 5,\n  \"txs\": [\n    {\"txid\": \"ab\", \"height\": 3, \"delta_sat\": 5}\n  ],\n  \"false_positives\": 2,\n  \"bytes_received\": 999,\n  \"timing\": {\"first_filter_ms\": 120.5, \"synced_ms\": 403.5}\n}\n")
	run, err := parseBloomwatchJSON(out)
	require.NoError(t, err)
	r := run.result
	got := run.phases["p2p sync"]
	require.Equal(t, float64(283), got, "p2p sync %v ms, want 283", got)
	require.Equal(t, int32(12), r.TipHeight, "parsed %+v", r)
	require.Equal(t, 2, r.FalsePositives, "parsed %+v", r)
	require.Equal(t, uint64(999), r.BytesReceived, "parsed %+v", r)
	require.Len(t, r.Txs, 1, "parsed %+v", r)
	require.Equal(t, (FoundTx{Txid: "ab", Height: 3}), r.Txs[0], "parsed %+v", r)
	_, err = parseBloomwatchJSON([]byte("no json"))
	require.ErrorIs(t, err, errNoSummary, "no JSON: %v", err)
	_, err = parseBloomwatchJSON([]byte(`{"tip_height": 1, "txs": []}`))
	require.ErrorIs(t, err, errNoSummary, "fields absent: %v", err)
}

func TestProcCPU(t *testing.T) {
	deadline := time.Now().Add(50 * time.Millisecond)
	for time.Now().Before(deadline) {
	}
	d, err := procCPU(os.Getpid())
	require.NoError(t, err, "procCPU = %v", d)
	require.Greater(t, d, time.Duration(0), "procCPU = %v, %v", d, err)
	_, err = procCPU(1 << 30)
	require.Error(t, err, "no error for a missing pid")
}

func TestGenerateHeadersPassMinimalChecks(t *testing.T) {
	params := &chaincfg.RegressionNetParams
	hdrs := generateHeaders(params, 300)
	require.NoError(t, minimalHeaderChecks(params, hdrs))
	hdrs[100].Nonce++
	err := minimalHeaderChecks(params, hdrs)
	require.Error(t, err, "tampered chain passed")
}

func TestScalePoints(t *testing.T) {
	cfg := &benchConfig{Txs: 10, Spend: 0.5, Seed: 1, ScaleBlocks: []int{500, 2000, 8000}, ScaleAddrs: []int{20, 200, 2000}}
	pts := scalePoints(cfg)
	require.Len(t, pts, 5, "cross series: %d points %v", len(pts), pts)
	cfg.ScaleGrid = true
	pts = scalePoints(cfg)
	require.Len(t, pts, 9, "grid: %d points", len(pts))
}

// TestRunMeasuredRSSIsTheChilds checks that a client's peak RSS is its own,
// not the (large) bench's: the spawn helper keeps Linux from folding the
// parent's hiwater RSS into the child's ru_maxrss.
func TestRunMeasuredRSSIsTheChilds(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	spawn, err := buildSpawn(ctx, dir)
	require.NoError(t, err)
	env := &benchEnv{spawn: spawn, tmp: dir, log: io.Discard}
	ballast := make([]byte, 96<<20) // make the parent big
	for i := range ballast {
		ballast[i] = 1
	}
	small, out, err := runMeasured(ctx, env, nil, nil, "/bin/sh", "-c", "echo hi")
	require.NoError(t, err)
	require.Equal(t, "hi\n", string(out), "stdout %q", out)
	big, _, err := runMeasured(ctx, env, nil, nil, "/bin/sh", "-c", `x=$(head -c 40000000 /dev/zero | tr '\0' a); echo ${#x}`)
	require.NoError(t, err)
	runtime.KeepAlive(ballast)
	require.LessOrEqual(t, small.MaxRSS, int64(16<<20), "sh reported %d MiB: the parent's RSS leaked into the child's", small.MaxRSS>>20)
	require.GreaterOrEqual(t, big.MaxRSS, int64(40<<20), "big child: %+v", big)
	require.Greater(t, big.Wall, time.Duration(0), "big child: %+v", big)
	require.Greater(t, big.CPU, time.Duration(0), "big child: %+v", big)
	_, _, err = runMeasured(ctx, env, nil, nil, "/bin/sh", "-c", "exit 3")
	require.Error(t, err, "failing child reported no error")
}
