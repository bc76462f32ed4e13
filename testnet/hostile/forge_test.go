package hostile

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/bip37"
)

// regtestChain mines n headers on top of the regtest genesis.
func regtestChain(t *testing.T, n int) []wire.BlockHeader {
	t.Helper()
	chain := []wire.BlockHeader{chaincfg.RegressionNetParams.GenesisBlock.Header}
	for i := 0; i < n; i++ {
		h, err := childOf(&chain[len(chain)-1], uint32(i))
		require.NoError(t, err)
		chain = append(chain, h)
	}
	return chain
}

func TestForgeHeader(t *testing.T) {
	chain := regtestChain(t, 20)
	parent := chain[len(chain)-1]
	now := parent.Timestamp.Add(time.Minute)
	for _, s := range []Scenario{HeaderBadPoW, HeaderBadBits, HeaderTimeTooOld, HeaderTimeTooNew, HeadersNotConnecting} {
		t.Run(string(s), func(t *testing.T) {
			h, err := forgeHeader(s, chain, now)
			require.NoError(t, err)
			connects := h.PrevBlock == parent.BlockHash()
			sameBits := h.Bits == parent.Bits
			afterMTP := h.Timestamp.After(medianTimePast(chain))
			notFuture := !h.Timestamp.After(now.Add(futureLimit))
			// Exactly one rule is broken.
			want := map[Scenario][4]bool{
				HeaderBadPoW:         {false, true, true, true},
				HeaderBadBits:        {true, false, true, true},
				HeaderTimeTooOld:     {true, true, false, true},
				HeaderTimeTooNew:     {true, true, true, false},
				HeadersNotConnecting: {true, true, true, true},
			}[s]
			got := [4]bool{powValid(&h), sameBits, afterMTP, notFuture}
			require.Equal(t, want, got, "pow, bits, mtp, future = %v, want %v", got, want)
			require.Equal(t, (s != HeadersNotConnecting), connects, "connects = %v", connects)
		})
	}
	_, err := forgeHeader(BadMerkleRoot, chain, now)
	require.ErrorIs(t, err, ErrCannotForge, "forgeHeader(non-header scenario) = %v, want ErrCannotForge", err)
	_, err = forgeHeader(HeaderBadPoW, nil, now)
	require.ErrorIs(t, err, ErrCannotForge, "forgeHeader(empty chain) = %v, want ErrCannotForge", err)
}

func TestForgeFork(t *testing.T) {
	chain := regtestChain(t, 10)
	fork, err := forgeFork(chain, 3, 9, false)
	require.NoError(t, err)
	require.Equal(t, chain[3].BlockHash(), fork[0].PrevBlock, "fork does not start at height 3")
	for i := range fork {
		require.True(t, powValid(&fork[i]), "honest fork header %d invalid", i)
		require.Equal(t, chain[0].Bits, fork[i].Bits, "honest fork header %d invalid", i)
		require.False(t, i > 0 && fork[i].PrevBlock != fork[i-1].BlockHash(), "fork header %d does not connect", i)
		require.NotEqual(t, chain[min(4+i, len(chain)-1)].BlockHash(), fork[i].BlockHash(), "fork header %d equals the honest one", i)
	}
	lie, err := forgeFork(chain, 3, 9, true)
	require.NoError(t, err)
	for i := range lie {
		require.False(t, powValid(&lie[i]), "lying fork header %d: pow valid %v, bits %x", i, powValid(&lie[i]), lie[i].Bits)
		require.NotEqual(t, chain[0].Bits, lie[i].Bits, "lying fork header %d: pow valid %v, bits %x", i, powValid(&lie[i]), lie[i].Bits)
	}
	_, err = forgeFork(chain, 11, 1, false)
	require.ErrorIs(t, err, ErrCannotForge, "fork above the tip = %v, want ErrCannotForge", err)
}

// testBlock returns a block of n distinct transactions whose header
// commits to them.
func testBlock(n int) *wire.MsgBlock {
	b := &wire.MsgBlock{Header: chaincfg.RegressionNetParams.GenesisBlock.Header}
	for i := 0; i < n; i++ {
		tx := wire.NewMsgTx(2)
		prev := chainhash.DoubleHashH([]byte(fmt.Sprintf("prev %d", i)))
		tx.AddTxIn(wire.NewTxIn(wire.NewOutPoint(&prev, uint32(i)), nil, nil))
		tx.AddTxOut(wire.NewTxOut(int64(1000+i), []byte{0x51, byte(i), byte(i >> 8)}))
		b.Transactions = append(b.Transactions, tx)
	}
	var txids []*chainhash.Hash
	for _, tx := range b.Transactions {
		h := tx.TxHash()
		txids = append(txids, &h)
	}
	b.Header.MerkleRoot = merkleRoot(txids)
	return b
}

// merkleRoot computes a block merkle root the plain way.
func merkleRoot(level []*chainhash.Hash) chainhash.Hash {
	for len(level) > 1 {
		var up []*chainhash.Hash
		for i := 0; i < len(level); i += 2 {
			r := level[min(i+1, len(level)-1)]
			h := chainhash.DoubleHashH(append(level[i][:], r[:]...))
			up = append(up, &h)
		}
		level = up
	}
	return *level[0]
}

// matchEvery returns match flags with every k-th transaction matched.
func matchEvery(n, k int) []bool {
	m := make([]bool, n)
	for i := 0; i < n; i += k {
		m[i] = true
	}
	return m
}

func TestMerkleTampering(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5, 6, 7, 9, 12, 33} {
		block := testBlock(n)
		matched := matchEvery(n, 3)
		honest := func() *wire.MsgMerkleBlock {
			return bip37.BuildMerkleBlock(block, func(i int, _ *wire.MsgTx) bool { return matched[i] })
		}
		_, _, err := bip37.VerifyMerkleBlock(honest())
		require.NoError(t, err, "n=%d honest tree", n)
		cases := []struct {
			name   string
			tamper func(mb *wire.MsgMerkleBlock) (*wire.MsgMerkleBlock, error)
			want   bip37.MerkleReason
		}{
			{"flip", func(mb *wire.MsgMerkleBlock) (*wire.MsgMerkleBlock, error) { return mb, flipFirstHash(mb) }, bip37.ReasonMerkleRootMismatch},
			{"unused-hash", func(mb *wire.MsgMerkleBlock) (*wire.MsgMerkleBlock, error) { return mb, appendUnusedHash(mb) }, bip37.ReasonUnusedHashes},
			{"unused-bits", func(mb *wire.MsgMerkleBlock) (*wire.MsgMerkleBlock, error) { appendUnusedBits(mb); return mb, nil }, bip37.ReasonUnusedBits},
			{"duplicate", func(*wire.MsgMerkleBlock) (*wire.MsgMerkleBlock, error) { return duplicateTree(block, matched) }, bip37.ReasonDuplicateHash},
		}
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%s/n=%d", tc.name, n), func(t *testing.T) {
				mb, err := tc.tamper(honest())
				if errors.Is(err, ErrCannotForge) {
					require.False(t, tc.name == "duplicate" && n&(n-1) != 0, "duplicate tree refused for n=%d, which is not a power of two", n)
					return
				}
				require.NoError(t, err)
				require.False(t, tc.name == "duplicate" && n&(n-1) == 0, "duplicate tree built for power of two n=%d", n)
				_, _, err = bip37.VerifyMerkleBlock(mb)
				var me *bip37.MerkleError
				require.ErrorAs(t, err, &me, "verify = %v, want reason %v", err, tc.want)
				require.Equal(t, tc.want, me.Reason, "verify = %v, want reason %v", err, tc.want)
				if tc.name == "duplicate" {
					// The forgery keeps the root: only the duplicate check
					// catches it.
					root, _, _, _ := extractRootIgnoringDup(mb)
					require.Equal(t, block.Header.MerkleRoot, root, "duplicated tree root %v, header %v", root, block.Header.MerkleRoot)
				}
			})
		}
	}
}

// extractRootIgnoringDup recomputes the root of a merkleblock's tree from
// all its leaves (every leaf of a fully matched duplicate is present), the
// way a verifier without the CVE-2012-2459 check would.
func extractRootIgnoringDup(mb *wire.MsgMerkleBlock) (chainhash.Hash, int, int, error) {
	// Rebuild from the fake block's txids: the hostile tree lists matched
	// leaves; recompute bottom-up over numTxs leaves using the builder's
	// own definition, which ExtractMatches follows apart from the check.
	_, matches, _, err := bip37.ExtractMatches(mb.Transactions, mb.Hashes, mb.Flags)
	return rootFromFlags(mb), len(matches), 0, err
}

// rootFromFlags walks the tree like ExtractMatches without the duplicate
// check.
func rootFromFlags(mb *wire.MsgMerkleBlock) chainhash.Hash {
	bit, hash := 0, 0
	width := func(h uint) uint32 { return (mb.Transactions + (1 << h) - 1) >> h }
	height := uint(0)
	for width(height) > 1 {
		height++
	}
	var walk func(h uint, pos uint32) chainhash.Hash
	walk = func(h uint, pos uint32) chainhash.Hash {
		parent := mb.Flags[bit/8]&(1<<(bit%8)) != 0
		bit++
		if h == 0 || !parent {
			r := *mb.Hashes[hash]
			hash++
			return r
		}
		l := walk(h-1, pos*2)
		r := l
		if pos*2+1 < width(h-1) {
			r = walk(h-1, pos*2+1)
		}
		return chainhash.DoubleHashH(append(l[:], r[:]...))
	}
	return walk(height, 0)
}

func TestScenarios(t *testing.T) {
	all := Scenarios()
	require.Equal(t, Honest, all[0], "Scenarios() = %v", all)
	require.Len(t, all, len(scenarios), "Scenarios() = %v", all)
	for _, s := range all {
		got, err := ParseScenario(string(s))
		require.NoError(t, err, "ParseScenario(%q) = %v", s, got)
		require.Equal(t, s, got, "ParseScenario(%q) = %v, %v", s, got, err)
		require.NotEqual(t, Reaction(""), s.Expected(), "%s has no expectation or summary", s)
		require.NotEqual(t, "", s.Summary(), "%s has no expectation or summary", s)
	}
	_, err := ParseScenario("nice")
	require.ErrorIs(t, err, ErrUnknownScenario, "ParseScenario(nice) = %v, want ErrUnknownScenario", err)
}

// TestRewriteWitness: the rewritten transaction keeps its txid and carries
// WitnessPubKey, a valid compressed key, on every input.
func TestRewriteWitness(t *testing.T) {
	tx := wire.NewMsgTx(2)
	tx.AddTxIn(wire.NewTxIn(&wire.OutPoint{Index: 1}, []byte{0x51}, nil))
	tx.AddTxIn(wire.NewTxIn(&wire.OutPoint{Index: 2}, nil, wire.TxWitness{{1}, {2}}))
	tx.AddTxOut(wire.NewTxOut(5, []byte{0x51}))
	got := rewriteWitness(tx)
	require.Equal(t, tx.TxHash(), got.TxHash(), "txid %v (was %v), wtxid changed %v", got.TxHash(), tx.TxHash(), got.WitnessHash() != tx.WitnessHash())
	require.NotEqual(t, tx.WitnessHash(), got.WitnessHash(), "txid %v (was %v), wtxid changed %v", got.TxHash(), tx.TxHash(), got.WitnessHash() != tx.WitnessHash())
	_, err := btcec.ParsePubKey(WitnessPubKey)
	require.NoError(t, err, "WitnessPubKey")
	for i, in := range got.TxIn {
		require.Len(t, in.Witness, 2, "input %d witness %x", i, in.Witness)
		require.Equal(t, WitnessPubKey, in.Witness[1], "input %d witness %x", i, in.Witness)
	}
	require.Len(t, tx.TxIn[1].Witness[1], 1, "the original was changed")
}
