package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/require"
)

// cpuProfile builds a CPU profile of samples, each a stack of function
// names (leaf first) and its milliseconds.
func cpuProfile(t *testing.T, samples []struct {
	stack []string
	ms    int64
}) []byte {
	t.Helper()
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     10_000_000,
	}
	funcs := map[string]*profile.Function{}
	for _, s := range samples {
		var locs []*profile.Location
		for _, name := range s.stack {
			f, ok := funcs[name]
			if !ok {
				f = &profile.Function{ID: uint64(len(funcs) + 1), Name: name}
				funcs[name] = f
				p.Function = append(p.Function, f)
			}
			loc := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: f}}}
			p.Location = append(p.Location, loc)
			locs = append(locs, loc)
		}
		p.Sample = append(p.Sample, &profile.Sample{Location: locs, Value: []int64{1, s.ms * 1_000_000}})
	}
	var b bytes.Buffer
	require.NoError(t, p.Write(&b))
	return b.Bytes()
}

// TestSplitProfileClaimsEachSampleOnce splits a profile whose stacks
// name several parts' code: each sample counts once, in the first part
// that names one of its frames (a wallet call into bbolt is persisting,
// a GC worker is GC whatever it scans), and the parts sum to the whole.
func TestSplitProfileClaimsEachSampleOnce(t *testing.T) {
	raw := cpuProfile(t, []struct {
		stack []string
		ms    int64
	}{
		{[]string{"go.etcd.io/bbolt.(*Cursor).search", "github.com/bloomwatch/bloomwatch/wallet.(*Wallet).storeTx", "github.com/bloomwatch/bloomwatch/spv.(*manager).deliver"}, 30},
		{[]string{"github.com/btcsuite/btcwallet/wtxmgr.(*Store).AddCredit", "github.com/bloomwatch/bloomwatch/wallet.(*Wallet).ApplyBlock"}, 20},
		{[]string{"github.com/bloomwatch/bloomwatch/wallet.(*Wallet).judge", "github.com/bloomwatch/bloomwatch/spv.(*manager).deliver"}, 7},
		{[]string{"github.com/decred/dcrd/dcrec/secp256k1/v4.ScalarBaseMultNonConst", "github.com/bloomwatch/bloomwatch/wallet.(*childDeriver).derive"}, 11},
		{[]string{"runtime.scanobject", "runtime.gcDrain", "runtime.gcBgMarkWorker"}, 5},
		{[]string{"github.com/btcsuite/btcd/wire.(*MsgTx).BtcDecode", "github.com/btcsuite/btcd/peer.(*Peer).readMessage", "github.com/btcsuite/btcd/peer.(*Peer).inHandler"}, 13},
		{[]string{"github.com/bloomwatch/bloomwatch/bip37.(*Filter).Matches", "main.runMinimal"}, 3},
		{[]string{"main.runMinimal"}, 2},
		{[]string{"encoding/json.appendIndent", "main.writeJSON"}, 4},
		{[]string{"runtime.futex", "runtime.findRunnable", "runtime.schedule"}, 6},
	})
	got, err := splitProfile(bytes.NewReader(raw))
	require.NoError(t, err)
	want := map[string]float64{
		"persisting (bbolt, walletdb, wtxmgr, waddrmgr)":   50,
		"wallet logic (judging, caches, records)":          7,
		"key derivation (secp256k1, HMAC-SHA512)":          11,
		"GC and scavenging":                                5,
		"reading and decoding messages":                    13,
		"filters and merkle proofs (bip37, btcutil/bloom)": 3,
		"node logic (spv, the minimal loop)":               2,
		"session, node API, summary, JSON":                 4,
		otherPart:                                          6,
	}
	require.Equal(t, want, got)
	for name := range got {
		require.Contains(t, partNames(), name)
	}
}

// TestCPUSplitFilesAndDifference averages each client's runs and prints
// the difference from the base client by part, with each part's share of
// the whole difference.
func TestCPUSplitFilesAndDifference(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, stack []string, ms int64) {
		raw := cpuProfile(t, []struct {
			stack []string
			ms    int64
		}{{stack, ms}, {[]string{"github.com/btcsuite/btcd/peer.(*Peer).inHandler"}, 10}})
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), raw, 0o644))
	}
	bbolt := []string{"go.etcd.io/bbolt.(*Tx).Commit"}
	write("bloomwatch.1.pprof", bbolt, 20)
	write("bloomwatch.2.pprof", bbolt, 40)
	write("minimal.1.pprof", []string{"main.runMinimal"}, 5)
	splits, err := splitFiles([]string{filepath.Join(dir, "bloomwatch.1.pprof"), filepath.Join(dir, "bloomwatch.2.pprof"), filepath.Join(dir, "minimal.1.pprof")})
	require.NoError(t, err)
	require.Len(t, splits, 2)
	require.Equal(t, "bloomwatch", splits[0].client)
	require.Equal(t, 2, splits[0].runs)
	require.Equal(t, 30.0, splits[0].ms["persisting (bbolt, walletdb, wtxmgr, waddrmgr)"])
	require.Equal(t, 10.0, splits[0].ms["reading and decoding messages"])

	var out bytes.Buffer
	printCPUSplit(&out, splits, "minimal")
	var persist, all string
	for _, line := range strings.Split(out.String(), "\n") {
		switch {
		case strings.HasPrefix(line, "persisting"):
			persist = line
		case strings.HasPrefix(line, "all samples"):
			all = line
		}
	}
	// bloomwatch 40 ms a run, minimal 15: the 25 ms difference is 30 ms
	// more persisting and 5 ms less node logic.
	require.Regexp(t, `\s30\s+0\s+\+30 \(120%\)$`, persist)
	require.Regexp(t, `\s40\s+15\s+\+25 \(100%\)$`, all)
}

// TestTrimCommonPrefix names --cpu-profiles groups by client: the chain's
// stem they share goes, up to its last '-', and names sharing only part
// of a word keep it.
func TestTrimCommonPrefix(t *testing.T) {
	splits := []cpuSplit{{client: "b2000-t10-a20-s1-bloomwatch"}, {client: "b2000-t10-a20-s1-bloomwatch-xpub"}, {client: "b2000-t10-a20-s1-minimal"}}
	trimCommonPrefix(splits)
	require.Equal(t, []string{"bloomwatch", "bloomwatch-xpub", "minimal"}, []string{splits[0].client, splits[1].client, splits[2].client})
	same := []cpuSplit{{client: "list"}, {client: "listing"}}
	trimCommonPrefix(same)
	require.Equal(t, "list", same[0].client)
	require.Equal(t, "listing", same[1].client)
}
