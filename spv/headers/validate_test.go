package headers

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/big"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// mainnetVector is one line of testdata/mainnet_0_10.txt.
type mainnetVector struct {
	header wire.BlockHeader
	height int32
	hash   chainhash.Hash
}

func loadMainnetVectors(t *testing.T) []mainnetVector {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "mainnet_0_10.txt"))
	require.NoError(t, err)
	defer f.Close()
	var out []mainnetVector
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		fields := strings.Fields(line)
		raw, err := hex.DecodeString(fields[0])
		require.NoError(t, err, "bad vector %q", line)
		require.Len(t, raw, headerLen, "bad vector %q: %v", line, err)
		height, _ := strconv.Atoi(fields[1])
		hash, err := chainhash.NewHashFromStr(fields[2])
		require.NoError(t, err)
		out = append(out, mainnetVector{decodeHeader(raw), int32(height), *hash})
	}
	return out
}

// TestMainnetFirstHeaders connects mainnet's headers 1..10 to a mainnet
// store and checks hashes, heights and chain work (0x0b000b000b at 10).
func TestMainnetFirstHeaders(t *testing.T) {
	vecs := loadMainnetVectors(t)
	require.Len(t, vecs, 11, "%d vectors, first %v", len(vecs), vecs[0].hash)
	require.Equal(t, *chaincfg.MainNetParams.GenesisHash, vecs[0].hash, "%d vectors, first %v", len(vecs), vecs[0].hash)
	s, _ := openTest(t, mustNet(t, "mainnet"))
	var hdrs []wire.BlockHeader
	for _, v := range vecs {
		got := v.header.BlockHash()
		require.Equal(t, v.hash, got, "height %d: decoded hash %v, want %v", v.height, got, v.hash)
		hdrs = append(hdrs, v.header)
	}
	// The genesis is known already and skipped.
	res, err := s.Connect(hdrs)
	require.NoError(t, err)
	require.Equal(t, 10, res.Accepted, "result %+v", res)
	require.True(t, res.NewTip, "result %+v", res)
	require.Nil(t, res.Reorg, "result %+v", res)
	hash, height := s.Tip()
	require.Equal(t, int32(10), height, "tip %v at %d", hash, height)
	require.Equal(t, vecs[10].hash, hash, "tip %v at %d", hash, height)
	want, _ := new(big.Int).SetString("b000b000b", 16)
	require.Equal(t, 0, s.TipWork().Cmp(want), "chain work %x, want %x", s.TipWork(), want)
	for _, v := range vecs {
		got, err := s.HashByHeight(v.height)
		require.NoError(t, err, "HashByHeight(%d) = %v", v.height, got)
		require.Equal(t, v.hash, got, "HashByHeight(%d) = %v, %v", v.height, got, err)
	}
	// A tampered header 5 (one bit of the merkle root) fails proof of
	// work, which at mainnet difficulty cannot be fixed by chance.
	bad := vecs[5].header
	bad.MerkleRoot[0] ^= 1
	bad.PrevBlock = vecs[4].hash
	_, err = s.Connect([]wire.BlockHeader{bad})
	require.ErrorIs(t, err, ErrBadPoW, "tampered header: %v", err)
}

// TestMainnetBtcdTestdata validates mainnet's headers 0..14131 (seven
// retarget boundaries and the checkpoint at 11111) from btcd's test data,
// found through the module graph (go list -m -json) so that a btcd upgrade
// keeps it running. Outside CI it skips when the module is not downloaded;
// under CI=true a missing file fails the test.
func TestMainnetBtcdTestdata(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	missing := t.Skipf
	if os.Getenv("CI") != "" {
		missing = t.Fatalf
	}
	out, err := exec.Command("go", "list", "-m", "-json", "github.com/btcsuite/btcd").Output()
	if err != nil {
		missing("go list -m github.com/btcsuite/btcd: %v", err)
		return
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		missing("btcd module not in the module cache (go list -m -json: %v, dir %q)", err, mod.Dir)
		return
	}
	path := filepath.Join(mod.Dir, "blockchain", "testdata", "blk_0_to_14131.dat")
	raw, err := os.ReadFile(path)
	if err != nil {
		missing("btcd test data not available: %v", err)
		return
	}
	var hdrs []wire.BlockHeader
	for off := 0; off+8 <= len(raw); {
		if wire.BitcoinNet(uint32(raw[off])|uint32(raw[off+1])<<8|uint32(raw[off+2])<<16|uint32(raw[off+3])<<24) != wire.MainNet {
			break
		}
		l := int(uint32(raw[off+4]) | uint32(raw[off+5])<<8 | uint32(raw[off+6])<<16 | uint32(raw[off+7])<<24)
		hdrs = append(hdrs, decodeHeader(raw[off+8:off+8+headerLen]))
		off += 8 + l
	}
	require.Len(t, hdrs, 14132, "%d headers", len(hdrs))
	s, dir := openTest(t, mustNet(t, "mainnet"))
	for i := 1; i < len(hdrs); i += wire.MaxBlockHeadersPerMsg {
		end := min(i+wire.MaxBlockHeadersPerMsg, len(hdrs))
		_, err := s.Connect(hdrs[i:end])
		require.NoError(t, err)
	}
	_, height := s.Tip()
	require.Equal(t, int32(14131), height, "tip at %d", height)
	cp, _ := s.HashByHeight(11111)
	require.Equal(t, "0000000069e244f73d78e8fd29ba2fd2ed618bd6fa2ee92559f542fdb26e7c1d", cp.String(), "checkpoint height holds %v", cp)
	// Reopen: the file re-validates (hashes, links, proof of work).
	s.Close()
	s2, err := Open(dir, mustNet(t, "mainnet"))
	require.NoError(t, err)
	defer s2.Close()
	_, h := s2.Tip()
	require.Equal(t, int32(14131), h, "reopened tip at %d", h)
}

// linearView is a single chain of synthetic nodes (index = height - base).
type linearView struct {
	base  int32
	nodes []node
}

func (v *linearView) node(i int32) *node  { return &v.nodes[i] }
func (v *linearView) walkMemo() *walkMemo { return nil }
func (v *linearView) ancestor(i int32, height int32) int32 {
	return height - v.base
}

// syntheticPeriod builds the last interval nodes before a retarget: heights
// last-interval+1..last, timestamps rising from first to last, all bits.
func syntheticPeriod(interval, last int32, first, lastTime int64, bits uint32) *linearView {
	v := &linearView{base: last - interval + 1}
	for h := v.base; h <= last; h++ {
		k := int64(h - v.base)
		ts := first + (lastTime-first)*k/int64(interval-1)
		parent := h - v.base - 1
		if h == v.base {
			parent = noParent
		}
		v.nodes = append(v.nodes, node{height: h, parent: parent, bits: bits, time: uint32(ts)})
	}
	return v
}

// TestRetargetCoreVectors checks the retarget arithmetic on Bitcoin Core's
// pow_tests vectors (real mainnet periods) and btcd's agreement.
func TestRetargetCoreVectors(t *testing.T) {
	r, err := newRules(mustNet(t, "mainnet"))
	require.NoError(t, err)
	tests := []struct {
		name        string
		last        int32
		first, time int64
		bits, want  uint32
	}{
		{"first difficulty change at 32256", 32255, 1261130161, 1262152739, 0x1d00ffff, 0x1d00d86a},
		{"clamped to the pow limit", 2015, 1231006505, 1233061996, 0x1d00ffff, 0x1d00ffff},
		{"lower bound (factor 4 harder)", 68543, 1279008237, 1279297671, 0x1c05a3f4, 0x1c0168fd},
		{"upper bound (factor 4 easier)", 46367, 1263163443, 1269211443, 0x1c387f6f, 0x1d00e1fd},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := syntheticPeriod(2016, tc.last, tc.first, tc.time, tc.bits)
			tip := int32(len(v.nodes) - 1)
			got := r.requiredBits(v, tip, tc.time+600)
			require.Equal(t, tc.want, got, "required bits %08x, want %08x", got, tc.want)
			// btcd agrees: a child with these bits passes its
			// difficulty check and one with other bits does not.
			h := wire.BlockHeader{Version: 1, Timestamp: time.Unix(tc.time+600, 0), Bits: got}
			require.NoError(t, blockchain.CheckBlockHeaderContext(&h, btcdNode{v, tip}, blockchain.BFNone,
				btcdChain{r}, true), "btcd rejects %08x", got)
			h.Bits = got - 1
			err := blockchain.CheckBlockHeaderContext(&h, btcdNode{v, tip}, blockchain.BFNone,
				btcdChain{r}, true)
			require.Error(t, err, "btcd accepts other bits")
		})
	}
}

// TestRequiredBitsMidPeriod checks the non-retarget paths on constructed
// contexts: mainnet keeps the parent's bits; testnet3 and testnet4 allow
// the limit after 20 minutes and otherwise walk back past min-difficulty
// blocks; regtest always wants the limit.
func TestRequiredBitsMidPeriod(t *testing.T) {
	const hard = 0x1c05a3f4
	v := syntheticPeriod(10, 109, 1_600_000_000, 1_600_005_400, hard)
	// Heights 108 and 109 used the exception.
	v.nodes[8].bits, v.nodes[9].bits = 0x1d00ffff, 0x1d00ffff
	tip := int32(9)
	parentTime := int64(v.nodes[9].time)
	tests := []struct {
		net  string
		t    int64
		want uint32
	}{
		{"mainnet", parentTime + 600, 0x1d00ffff}, // the parent's bits
		{"mainnet", parentTime + 5000, 0x1d00ffff},
		{"testnet3", parentTime + 1200, hard}, // exactly 20 min: no exception
		{"testnet3", parentTime + 1201, 0x1d00ffff},
		{"testnet4", parentTime + 600, hard},
		{"testnet4", parentTime + 1201, 0x1d00ffff},
		{"regtest", parentTime + 600, 0x207fffff},
	}
	for _, tc := range tests {
		r, err := newRules(mustNet(t, tc.net))
		require.NoError(t, err)
		// Height 110 is not a retarget height of 2016-block networks.
		got := r.requiredBits(v, tip, tc.t)
		require.Equal(t, tc.want, got, "%s at +%d s: %08x, want %08x", tc.net, tc.t-parentTime, got, tc.want)
	}
}

// TestBIP94Retarget builds, on constructed contexts, a testnet period whose
// last block used the 20-minute exception: testnet3 retargets from those
// minimum-difficulty bits (its known flaw), testnet4 from the first block's.
func TestBIP94Retarget(t *testing.T) {
	const real = 0x1c05a3f4
	v := syntheticPeriod(2016, 4031, 1_700_000_000, 1_700_000_000+14*24*3600, real)
	v.nodes[2015].bits = 0x1d00ffff // the last block used the exception
	tip := int32(2015)
	t3, _ := newRules(mustNet(t, "testnet3"))
	t4, _ := newRules(mustNet(t, "testnet4"))
	ts := int64(v.nodes[2015].time) + 600
	got := t3.requiredBits(v, tip, ts)
	require.Equal(t, uint32(0x1d00ffff), got, "testnet3 retarget %08x, want the limit (from the last block's bits)", got)
	// The period took exactly the target timespan, so BIP94 keeps the
	// first block's target.
	got = t4.requiredBits(v, tip, ts)
	require.Equal(t, uint32(real), got, "testnet4 retarget %08x, want %08x", got, real)
	// btcd agrees with both: v0.25.0 implements BIP94 for testnet4.
	got = t3.requiredBits(v, tip, ts)
	require.Equal(t, btcdRequired(t, t3, v, tip, ts), got, "testnet3 differs from btcd")
	got = t4.requiredBits(v, tip, ts)
	require.Equal(t, btcdRequired(t, t4, v, tip, ts), got, "testnet4 differs from btcd's BIP94")
}

// btcdRequired finds btcd's required bits by trying ours and reading its
// error message when they differ.
func btcdRequired(t *testing.T, r *rules, v chainView, parent int32, ts int64) uint32 {
	t.Helper()
	bits := r.requiredBits(v, parent, ts)
	h := wire.BlockHeader{Version: 4, Timestamp: time.Unix(ts, 0), Bits: bits}
	err := blockchain.CheckBlockHeaderContext(&h, btcdNode{v, parent}, blockchain.BFNone, btcdChain{r}, true)
	if err == nil {
		return bits
	}
	t.Logf("btcd: %v", err)
	return 0
}

// TestDifferentialBtcd mines random chains on several rule families and, at
// every position, compares this package's verdict with btcd's
// CheckBlockHeaderSanity + CheckBlockHeaderContext on the real header and on
// mutations of it (other bits, a timestamp at or below the median time past,
// an old version, a future timestamp, an unsolved nonce, a timestamp 600
// and 601 s before the parent's). btcd v0.25.0 implements BIP94
// (EnforceBIP94: the retarget from the period's first block, the timewarp
// bound), so testnet4's rules are compared too.
func TestDifferentialBtcd(t *testing.T) {
	nets := []*netparams.Network{
		mustNet(t, "regtest"),
		mustNet(t, "simnet"),
		easyNet("retarget", netparams.RulesMainnet, 16, false, 0x7e570001, nil),
		easyNet("mindiff", netparams.RulesTestnet3, 16, true, 0x7e570002, nil),
		bip94Net(easyNet("bip94", netparams.RulesTestnet4, 16, true, 0x7e570003, nil)),
	}
	for _, net := range nets {
		t.Run(net.Name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(len(net.Name)), 7))
			s, _ := openTest(t, net)
			compared := 0
			verdicts := map[string]int{}
			for round := 0; round < 12; round++ {
				s.mu.RLock()
				tip := s.tipIndex()
				tipHdr := s.tipHdr
				s.mu.RUnlock()
				hdrs := randomChain(s, tip, tipHdr, 16, rng)
				for i := range hdrs {
					// Compare on the header and its mutations
					// before connecting it.
					s.mu.RLock()
					parent, _ := s.index.lookup(&s.nodes, &hdrs[i].PrevBlock)
					for _, m := range mutations(&hdrs[i], s, parent) {
						ours := ourVerdict(s.rules, s, &m, parent, testNow)
						theirs := btcdVerdict(s.rules, s, &m, parent, testNow)
						if !errors.Is(ours, theirs) && !(ours == nil && theirs == nil) {
							s.mu.RUnlock()
							require.ErrorIs(t, ours, theirs, "height %d header %+v: ours %v, btcd %v",
								s.nodes.at(parent).height+1, m, ours, theirs)
						}
						compared++
						verdicts[errName(ours)]++
					}
					s.mu.RUnlock()
					_, err := s.Connect(hdrs[i : i+1])
					require.NoError(t, err)
				}
			}
			t.Logf("%d verdicts compared: %v", compared, verdicts)
			// Every rule was exercised, accepting and rejecting.
			for _, k := range []string{"ok", "ErrBadBits", "ErrBelowPowLimit", "ErrTimeTooOld",
				"ErrTimeTooNew", "ErrBadPoW"} {
				require.NotEqual(t, 0, verdicts[k], "no verdict %s", k)
			}
			require.False(t, net.Params.BIP0034Height == 0 && verdicts["ErrBadVersion"] == 0, "no verdict ErrBadVersion")
			require.False(t, net.Params.EnforceBIP94 && verdicts["ErrTimewarp"] == 0, "no verdict ErrTimewarp")
			s.mu.RLock()
			distinct := map[uint32]bool{}
			for _, i := range s.best {
				distinct[s.nodes.at(i).bits] = true
			}
			s.mu.RUnlock()
			t.Logf("%d distinct bits on the best chain", len(distinct))
			require.False(t, s.rules.interval < 100 && len(distinct) < 3, "difficulty barely moved: %d distinct bits", len(distinct))
		})
	}
}

// randomChain mines n headers on tip with random spacing (sometimes
// backwards in time, sometimes over 20 minutes), keeping the difficulty
// within a few doublings of the limit so that mining stays cheap.
func randomChain(s *Store, tip int32, tipHdr wire.BlockHeader, n int, rng *rand.Rand) []wire.BlockHeader {
	s.mu.RLock()
	defer s.mu.RUnlock()
	sv := &scratchView{base: s}
	prev, ph := tip, tipHdr
	out := make([]wire.BlockHeader, 0, n)
	limit := s.rules.powLimit
	for i := 0; i < n; i++ {
		pn := sv.node(prev)
		var spacing int64
		switch target := blockchain.CompactToBig(pn.bits); {
		case new(big.Int).Mul(target, big.NewInt(64)).Cmp(limit) < 0:
			spacing = 3000 // too hard: slow down
		default:
			spacing = rng.Int64N(1600) - 200
		}
		ts := max(int64(pn.time)+spacing, medianTimePast(sv, prev)+1)
		bits := s.rules.requiredBits(sv, prev, ts)
		h := child(&ph, ts, bits, uint32(rng.Uint32()), pn.height+1)
		out = append(out, h)
		prev = sv.add(node{hash: h.BlockHash(), parent: prev, height: pn.height + 1,
			bits: bits, time: uint32(ts)})
		ph = h
	}
	return out
}

// mutations returns h and variants of it that break one rule each.
func mutations(h *wire.BlockHeader, v chainView, parent int32) []wire.BlockHeader {
	out := []wire.BlockHeader{*h}
	add := func(f func(m *wire.BlockHeader), solved bool) {
		m := *h
		f(&m)
		if solved {
			solve(&m)
		}
		out = append(out, m)
	}
	mtp := medianTimePast(v, parent)
	add(func(m *wire.BlockHeader) { m.Bits = h.Bits - 1 }, true)
	add(func(m *wire.BlockHeader) { m.Bits = 0x207fffff }, true)
	add(func(m *wire.BlockHeader) { m.Bits = 0x2100ffff }, false)
	add(func(m *wire.BlockHeader) { m.Timestamp = time.Unix(mtp, 0) }, true)
	add(func(m *wire.BlockHeader) { m.Timestamp = time.Unix(mtp+1, 0) }, true)
	add(func(m *wire.BlockHeader) { m.Timestamp = h.Timestamp.Add(25 * time.Minute) }, true)
	add(func(m *wire.BlockHeader) { m.Version = 1 }, true)
	add(func(m *wire.BlockHeader) { m.Timestamp = testNow.Add(2*time.Hour + time.Second) }, true)
	add(func(m *wire.BlockHeader) { m.Timestamp = testNow.Add(2 * time.Hour) }, true)
	add(func(m *wire.BlockHeader) { unsolve(m) }, false)
	// BIP94's bound on a period's first block: 600 s before its parent
	// is the earliest allowed.
	pt := int64(v.node(parent).time)
	add(func(m *wire.BlockHeader) { m.Timestamp = time.Unix(pt-601, 0) }, true)
	add(func(m *wire.BlockHeader) { m.Timestamp = time.Unix(pt-600, 0) }, true)
	return out
}

// errName names a verdict for the tallies.
func errName(err error) string {
	for _, e := range []struct {
		name string
		err  error
	}{
		{"ErrBadBits", ErrBadBits}, {"ErrBelowPowLimit", ErrBelowPowLimit},
		{"ErrTimeTooOld", ErrTimeTooOld}, {"ErrTimeTooNew", ErrTimeTooNew},
		{"ErrBadPoW", ErrBadPoW}, {"ErrBadVersion", ErrBadVersion},
		{"ErrCheckpoint", ErrCheckpoint}, {"ErrTimewarp", ErrTimewarp},
		{"ErrNotConnecting", ErrNotConnecting},
	} {
		if errors.Is(err, e.err) {
			return e.name
		}
	}
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// memoView is a tree of synthetic nodes with a walk memo.
type memoView struct {
	nodes []node
	memo  walkMemo
}

func (v *memoView) node(i int32) *node                   { return &v.nodes[i] }
func (v *memoView) walkMemo() *walkMemo                  { return &v.memo }
func (v *memoView) ancestor(i int32, height int32) int32 { panic("unused") }

// TestMedianTimePastMemo checks medianTimePast with its memo against the
// plain definition (the sorted timestamps of a node and its 10 parents) on
// random trees whose timestamps often go backwards, asked in chain order
// (the memo's case), in tree order and at random.
func TestMedianTimePastMemo(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	want := func(v *memoView, i int32) int64 {
		var ts []int64
		for ; i != noParent && len(ts) < medianTimeBlocks; i = v.nodes[i].parent {
			ts = append(ts, int64(v.nodes[i].time))
		}
		slices.Sort(ts)
		return ts[len(ts)/2]
	}
	for round := 0; round < 20; round++ {
		v := &memoView{nodes: []node{{parent: noParent, time: 1000}}}
		for i := 1; i < 3000; i++ {
			p := int32(i - 1)
			if rng.IntN(10) == 0 { // a branch from a recent node
				p = int32(max(0, i-1-rng.IntN(30)))
			}
			tm := int64(v.nodes[p].time) + int64(rng.IntN(1200)) - 300
			if round%2 == 1 { // mostly equal and falling timestamps
				tm = int64(v.nodes[p].time) + int64(rng.IntN(3)) - 1
			}
			v.nodes = append(v.nodes, node{parent: p, height: v.nodes[p].height + 1, time: uint32(max(tm, 0))})
		}
		order := make([]int32, len(v.nodes))
		for i := range order {
			order[i] = int32(i)
		}
		if round%4 >= 2 {
			rng.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
		}
		for _, i := range order {
			got, w := medianTimePast(v, i), want(v, i)
			require.Equal(t, w, got, "round %d node %d: median time past %d, want %d", round, i, got, w)
		}
	}
}
