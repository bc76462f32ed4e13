package main

import (
	"bytes"
	"encoding/json"
	"github.com/stretchr/testify/require"
	"strings"
	"testing"
)

// cliCase is one command line and what it must produce.
type cliCase struct {
	name       string
	args       []string
	wantCode   int
	wantOut    string // exact stdout, when wantOutSub is empty
	wantOutSub []string
	wantErrSub string // substring of the single stderr line
}

// runCLI runs args through run(), which builds a fresh command tree.
func runCLI(t *testing.T, args []string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// checkCLI runs the table.
func checkCLI(t *testing.T, tests []cliCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tc.args)
			require.Equal(t, tc.wantCode, code, "exit %d, want %d (stdout %q, stderr %q)", code, tc.wantCode, out, errOut)
			if tc.wantCode != 0 {
				require.Equal(t, "", out, "stdout %q, want nothing on failure", out)
				require.Equal(t, 1, strings.Count(errOut, "\n"), "stderr %q, want one line containing %q", errOut, tc.wantErrSub)
				require.Contains(t, errOut, tc.wantErrSub, "stderr %q, want one line containing %q", errOut, tc.wantErrSub)
				return
			}
			require.Equal(t, "", errOut, "stderr %q, want nothing", errOut)
			require.False(t, len(tc.wantOutSub) == 0 && out != tc.wantOut, "stdout %q, want %q", out, tc.wantOut)
			for _, sub := range tc.wantOutSub {
				require.Contains(t, out, sub, "stdout %q lacks %q", out, sub)
			}
		})
	}
}

// Core's bloom_create_insert_serialize elements.
var coreElements = []string{
	"99108ad8ed9bb6274d3980bab5a85c048f0950c8",
	"b5a2c786d9ef4658287ced5914b37a1b4aa32eee",
	"b9300670b4c5366e95b2699e8b18bc75e5f729c5",
}

// withElements appends the Core elements to fixed arguments.
func withElements(args ...string) []string {
	return append(args, coreElements...)
}

// TestFilterBuild covers `filter build`.
func TestFilterBuild(t *testing.T) {
	checkCLI(t, []cliCase{
		{name: "core vector", args: withElements("filter", "build", "--n", "3", "--fp", "0.01", "--tweak", "0", "--flags", "all"),
			wantOut: "03614e9b050000000000000001\n"},
		{name: "n defaults to the element count", args: withElements("filter", "build", "--fp", "0.01", "--tweak", "0"),
			wantOut: "03614e9b050000000000000001\n"},
		{name: "hex tweak", args: withElements("filter", "build", "--fp", "0.01", "--tweak", "0x80000001"),
			wantOut: "03ce4299050000000100008001\n"},
		{name: "decimal tweak", args: withElements("filter", "build", "--fp", "0.01", "--tweak", "2147483649"),
			wantOut: "03ce4299050000000100008001\n"},
		{name: "uppercase hex element", args: []string{"filter", "build", "--fp", "0.01", "--flags", "none", "--n", "3",
			"99108AD8ED9BB6274D3980BAB5A85C048F0950C8", coreElements[1], coreElements[2]},
			wantOut: "03614e9b050000000000000000\n"},
		{name: "empty filter for n only", args: []string{"filter", "build", "--n", "3", "--fp", "0.01", "--flags", "p2pubkeyonly"},
			wantOut: "03000000050000000000000002\n"},
		{name: "bad hex", args: []string{"filter", "build", "--fp", "0.01", "zz"}, wantCode: 2, wantErrSub: "element 1: bad hex"},
		{name: "odd hex", args: []string{"filter", "build", "--fp", "0.01", "abc"}, wantCode: 2, wantErrSub: "element 1"},
		{name: "empty element", args: []string{"filter", "build", "--fp", "0.01", ""}, wantCode: 2, wantErrSub: "empty hex"},
		{name: "no elements no n", args: []string{"filter", "build"}, wantCode: 2, wantErrSub: "--n must be at least 1"},
		{name: "n zero", args: withElements("filter", "build", "--n", "0"), wantCode: 2, wantErrSub: "--n must be at least 1"},
		{name: "n negative", args: withElements("filter", "build", "--n", "-1"), wantCode: 2, wantErrSub: "--n"},
		{name: "n too large", args: withElements("filter", "build", "--n", "4294967296"), wantCode: 2, wantErrSub: "--n"},
		{name: "fp zero", args: withElements("filter", "build", "--fp", "0"), wantCode: 2, wantErrSub: "false-positive rate"},
		{name: "fp one", args: withElements("filter", "build", "--fp", "1"), wantCode: 2, wantErrSub: "false-positive rate"},
		{name: "fp NaN", args: withElements("filter", "build", "--fp", "NaN"), wantCode: 2, wantErrSub: "false-positive rate"},
		{name: "fp not a number", args: withElements("filter", "build", "--fp", "lots"), wantCode: 2, wantErrSub: "--fp"},
		{name: "tweak too large", args: withElements("filter", "build", "--tweak", "0x100000000"), wantCode: 2, wantErrSub: "--tweak"},
		{name: "tweak negative", args: withElements("filter", "build", "--tweak", "-1"), wantCode: 2, wantErrSub: "--tweak"},
		{name: "tweak octal-looking is decimal", args: withElements("filter", "build", "--fp", "0.01", "--tweak", "010"),
			wantOutSub: []string{"0a00000001\n"}},
		{name: "tweak bad hex", args: withElements("filter", "build", "--tweak", "0xg"), wantCode: 2, wantErrSub: "--tweak"},
		{name: "unknown flags", args: withElements("filter", "build", "--flags", "some"), wantCode: 2, wantErrSub: "unknown update flag"},
		{name: "unknown option", args: withElements("filter", "build", "--size", "3"), wantCode: 2, wantErrSub: "unknown flag"},
	})
}

// TestFilterBuildJSON checks the JSON fields of `filter build --json`.
func TestFilterBuildJSON(t *testing.T) {
	code, out, errOut := runCLI(t, withElements("filter", "build", "--json", "--fp", "0.01", "--tweak", "0x80000001", "--flags", "all"))
	require.Equal(t, 0, code, "exit %d, stderr %q", code, errOut)
	require.Equal(t, "", errOut, "exit %d, stderr %q", code, errOut)
	var got struct {
		Hex       string  `json:"hex"`
		Bytes     int     `json:"bytes"`
		HashFuncs uint32  `json:"hash_funcs"`
		Tweak     uint32  `json:"tweak"`
		Flags     string  `json:"flags"`
		Elements  uint32  `json:"elements"`
		FPRate    float64 `json:"fp_rate"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got), "bad JSON %q", out)
	// 3 bytes, k = 5, n = 3: f = (1 - e^(-15/24))^5 = 0.02168.
	require.Equal(t, "03ce4299050000000100008001", got.Hex, "JSON %+v", got)
	require.Equal(t, 3, got.Bytes, "JSON %+v", got)
	require.Equal(t, uint32(5), got.HashFuncs, "JSON %+v", got)
	require.Equal(t, uint32(2147483649), got.Tweak, "JSON %+v", got)
	require.Equal(t, "all", got.Flags, "JSON %+v", got)
	require.Equal(t, uint32(3), got.Elements, "JSON %+v", got)
	require.GreaterOrEqual(t, got.FPRate, 0.0216, "JSON %+v", got)
	require.LessOrEqual(t, got.FPRate, 0.0217, "JSON %+v", got)
}

// TestFilterMatch covers `filter match`.
func TestFilterMatch(t *testing.T) {
	const coreFilter = "03614e9b050000000000000001"
	const prevTx = "90c122d70786e899529d71dbeba91ba216982fb6ba58f3bdaab65e73b7e9260b"
	checkCLI(t, []cliCase{
		{name: "core elements", args: []string{"filter", "match", "--filter", coreFilter,
			coreElements[0], "19108ad8ed9bb6274d3980bab5a85c048f0950c8", coreElements[2]},
			wantOut: coreElements[0] + " match\n19108ad8ed9bb6274d3980bab5a85c048f0950c8 no-match\n" + coreElements[2] + " match\n"},
		{name: "outpoints", args: []string{"filter", "match", "--filter", coreFilter, "--outpoint", prevTx + ":0", "--outpoint", prevTx + ":1"},
			wantOut: prevTx + ":0 no-match\n" + prevTx + ":1 no-match\n"},
		{name: "empty filter matches everything", args: []string{"filter", "match", "--filter", "00000000000000000000", "00", "--outpoint", prevTx + ":7"},
			wantOut: "00 match\n" + prevTx + ":7 match\n"},
		{name: "missing filter", args: []string{"filter", "match", "00"}, wantCode: 2, wantErrSub: "--filter is required"},
		{name: "nothing to test", args: []string{"filter", "match", "--filter", coreFilter}, wantCode: 2, wantErrSub: "at least one"},
		{name: "bad filter hex", args: []string{"filter", "match", "--filter", "03614e9g", "00"}, wantCode: 2, wantErrSub: "bad hex"},
		{name: "trailing bytes", args: []string{"filter", "match", "--filter", coreFilter + "00", "00"}, wantCode: 2, wantErrSub: "trailing bytes"},
		{name: "truncated filter", args: []string{"filter", "match", "--filter", "03614e9b05", "00"}, wantCode: 2, wantErrSub: "malformed"},
		{name: "oversized filter", args: []string{"filter", "match", "--filter", "fda18c", "00"}, wantCode: 2, wantErrSub: "larger than 36000"},
		{name: "too many hash funcs", args: []string{"filter", "match", "--filter", "0100330000000000000000", "00"}, wantCode: 2, wantErrSub: "more than 50"},
		{name: "bad element", args: []string{"filter", "match", "--filter", coreFilter, "x"}, wantCode: 2, wantErrSub: "element 1"},
		{name: "outpoint without index", args: []string{"filter", "match", "--filter", coreFilter, "--outpoint", prevTx}, wantCode: 2, wantErrSub: "TXID:INDEX"},
		{name: "outpoint short txid", args: []string{"filter", "match", "--filter", coreFilter, "--outpoint", "abcd:0"}, wantCode: 2, wantErrSub: "64-digit"},
		{name: "outpoint bad txid", args: []string{"filter", "match", "--filter", coreFilter, "--outpoint", strings.Repeat("x", 64) + ":0"}, wantCode: 2, wantErrSub: "bad txid"},
		{name: "outpoint bad index", args: []string{"filter", "match", "--filter", coreFilter, "--outpoint", prevTx + ":-1"}, wantCode: 2, wantErrSub: "bad index"},
	})
}

// TestFilterMatchRoundTrip builds a filter with outpoint-shaped elements and
// checks that `filter match` finds them, in text and JSON.
func TestFilterMatchRoundTrip(t *testing.T) {
	// prevTx:0 serialized as Core does: txid bytes reversed, then LE index.
	const prevTx = "90c122d70786e899529d71dbeba91ba216982fb6ba58f3bdaab65e73b7e9260b"
	const serialized = "0b26e9b7735eb6aabdf358bab62f9816a21ba9ebdb719d5299e88607d722c190" + "00000000"
	code, out, errOut := runCLI(t, []string{"filter", "build", "--n", "10", "--fp", "0.000001", serialized})
	require.Equal(t, 0, code, "build: exit %d: %s", code, errOut)
	filter := strings.TrimSpace(out)
	code, out, errOut = runCLI(t, []string{"filter", "match", "--json", "--filter", filter,
		"--outpoint", prevTx + ":0", "--outpoint", prevTx + ":1", serialized})
	require.Equal(t, 0, code, "match: exit %d: %s", code, errOut)
	var got struct {
		Results []struct {
			Element  string `json:"element"`
			OutPoint string `json:"outpoint"`
			Match    bool   `json:"match"`
		} `json:"results"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got), "bad JSON %q", out)
	require.Len(t, got.Results, 3, "results %+v", got.Results)
	require.True(t, got.Results[0].Match, "results %+v", got.Results)
	require.Equal(t, serialized, got.Results[0].Element, "results %+v", got.Results)
	require.True(t, got.Results[1].Match, "results %+v", got.Results)
	require.Equal(t, prevTx+":0", got.Results[1].OutPoint, "results %+v", got.Results)
	require.False(t, got.Results[2].Match, "results %+v", got.Results)
}
