package headers

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// fuzzBase is a deterministic regtest chain: the first 20 headers are in the
// store before each fuzz input, the rest are material for seeds.
var fuzzBase = sync.OnceValue(func() []wire.BlockHeader {
	net, _ := lookupForFuzz()
	g := net.Params.GenesisBlock.Header
	v := &scratchView{base: genesisView{net.Params.GenesisBlock.Header}}
	r, _ := newRules(net)
	return extend(r, v, 0, g, 30, 600, 1)
})

// genesisView is a chainView holding only a genesis header.
type genesisView struct{ h wire.BlockHeader }

func (g genesisView) node(int32) *node {
	return &node{hash: g.h.BlockHash(), parent: noParent, bits: g.h.Bits,
		time: uint32(g.h.Timestamp.Unix())}
}
func (g genesisView) ancestor(int32, int32) int32 { return 0 }
func (g genesisView) walkMemo() *walkMemo         { return nil }

// serialize concatenates wire-serialized headers.
func serialize(hdrs []wire.BlockHeader) []byte {
	var buf bytes.Buffer
	for i := range hdrs {
		hdrs[i].Serialize(&buf)
	}
	return buf.Bytes()
}

// fuzzSeeds are the named seed inputs, also kept as files in
// testdata/fuzz/FuzzConnect.
func fuzzSeeds() map[string][]byte {
	base := fuzzBase()
	s := map[string][]byte{
		"empty":       nil,
		"extend":      serialize(base[20:25]),
		"known":       serialize(base[15:20]),
		"overlap":     serialize(base[18:30]),
		"gap":         serialize(base[22:26]),
		"truncated":   serialize(base[20:23])[:200],
		"garbage":     bytes.Repeat([]byte{0xa5}, 240),
		"fork":        nil,
		"bad-pow":     nil,
		"time-at-mtp": nil,
	}
	// A fork from height 15 that becomes best after 6 blocks.
	r, _ := newRules(mustNetNoT("regtest"))
	sv := &scratchView{base: &linearView{base: 0, nodes: chainNodes(base)}}
	s["fork"] = serialize(extend(r, sv, 15, base[14], 6, 600, 2))
	bad := base[20]
	unsolve(&bad)
	s["bad-pow"] = serialize([]wire.BlockHeader{bad})
	early := base[20]
	early.Timestamp = base[14].Timestamp
	solve(&early)
	s["time-at-mtp"] = serialize([]wire.BlockHeader{early})
	return s
}

// chainNodes returns the nodes of genesis + hdrs as a linear view.
func chainNodes(hdrs []wire.BlockHeader) []node {
	net := mustNetNoT("regtest")
	g := net.Params.GenesisBlock.Header
	out := []node{{hash: g.BlockHash(), parent: noParent, bits: g.Bits, time: uint32(g.Timestamp.Unix())}}
	for i := range hdrs {
		out = append(out, node{hash: hdrs[i].BlockHash(), parent: int32(i), height: int32(i + 1),
			bits: hdrs[i].Bits, time: uint32(hdrs[i].Timestamp.Unix())})
	}
	return out
}

// TestFuzzSeedFiles checks that the seed corpus files are the current
// seeds (BLOOMWATCH_UPDATE_FUZZ_SEEDS=1 rewrites them).
func TestFuzzSeedFiles(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzConnect")
	update := os.Getenv("BLOOMWATCH_UPDATE_FUZZ_SEEDS") == "1"
	for name, data := range fuzzSeeds() {
		want := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data)
		path := filepath.Join(dir, name)
		if update {
			require.NoError(t, os.MkdirAll(dir, 0o755))
			require.NoError(t, os.WriteFile(path, []byte(want), 0o644))
			continue
		}
		got, err := os.ReadFile(path)
		require.NoError(t, err, "%v (run with BLOOMWATCH_UPDATE_FUZZ_SEEDS=1)", err)
		require.Equal(t, want, string(got), "%s is stale (run with BLOOMWATCH_UPDATE_FUZZ_SEEDS=1)", path)
	}
}

// FuzzConnect feeds arbitrary bytes, read as a batch of wire headers, to a
// store holding a 20-header chain: Connect must not panic, must fail only
// with a *ValidationError, and must leave a consistent store that reopens
// to the same state.
func FuzzConnect(f *testing.F) {
	for _, data := range fuzzSeeds() {
		f.Add(data)
	}
	base := fuzzBase()
	net := mustNetNoT("regtest")
	// A template file holding genesis and base[:20], copied for each
	// input (creating it each time would cost three fsyncs).
	tmplDir := f.TempDir()
	tmpl, err := Open(tmplDir, net, WithClock(fixedClock))
	require.NoError(f, err)
	_, err = tmpl.Connect(base[:20])
	require.NoError(f, err)
	tmpl.Close()
	tmplBytes, err := os.ReadFile(filepath.Join(tmplDir, FileName))
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, data []byte) {
		var hdrs []wire.BlockHeader
		r := bytes.NewReader(data)
		for r.Len() > 0 && len(hdrs) < 200 {
			var h wire.BlockHeader
			if err := h.Deserialize(r); err != nil {
				break
			}
			hdrs = append(hdrs, h)
		}
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, FileName), tmplBytes, 0o600))
		s, err := Open(dir, net, WithClock(fixedClock))
		require.NoError(t, err)
		defer s.Close()
		_, h := s.Tip()
		require.Equal(t, int32(20), h, "template tip %d", h)
		beforeWork := s.TipWork()
		beforeCount := s.Count()

		res, err := s.Connect(hdrs)
		var verr *ValidationError
		require.False(t, err != nil && !errors.As(err, &verr), "error %v is not a *ValidationError", err)
		require.False(t, verr != nil && (verr.Index < 0 || verr.Index >= len(hdrs) || errName(verr.Err) == verr.Err.Error()), "validation error %+v", verr)
		require.GreaterOrEqual(t, res.Accepted, 0, "accepted %d of %d, count %d -> %d", res.Accepted, len(hdrs), beforeCount, s.Count())
		require.LessOrEqual(t, res.Accepted, len(hdrs), "accepted %d of %d, count %d -> %d", res.Accepted, len(hdrs), beforeCount, s.Count())
		require.Equal(t, beforeCount+res.Accepted, s.Count(), "accepted %d of %d, count %d -> %d", res.Accepted, len(hdrs), beforeCount, s.Count())
		c := s.TipWork().Cmp(beforeWork)
		require.GreaterOrEqual(t, c, 0, "work %v -> %v, NewTip %v", beforeWork, s.TipWork(), res.NewTip)
		require.Equal(t, res.NewTip, (c > 0), "work %v -> %v, NewTip %v", beforeWork, s.TipWork(), res.NewTip)
		tip, height := s.Tip()
		for h := int32(0); h <= height; h++ {
			hdr, err := s.HeaderByHeight(h)
			require.NoError(t, err)
			require.False(t, h == height && hdr.BlockHash() != tip, "tip header mismatch")
		}
		require.NoError(t, s.Verify(), "stored headers fail re-validation")
		s.Close()
		s2, err := Open(dir, net, WithClock(fixedClock))
		require.NoError(t, err, "reopen")
		defer s2.Close()
		t2, h2 := s2.Tip()
		require.Equal(t, tip, t2, "reopened %v@%d, was %v@%d", t2, h2, tip, height)
		require.Equal(t, height, h2, "reopened %v@%d, was %v@%d", t2, h2, tip, height)
		require.Equal(t, s.Count(), s2.Count(), "reopened %v@%d, was %v@%d", t2, h2, tip, height)
	})
}
