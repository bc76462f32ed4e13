package bip37

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/bloom"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// syntheticBlock returns a block of n distinct transactions (unique lock
// times, as Core's pmt tests use) with a correct merkle root.
func syntheticBlock(n int, rng *rand.Rand) *wire.MsgBlock {
	block := wire.NewMsgBlock(wire.NewBlockHeader(1, &chainhash.Hash{}, &chainhash.Hash{}, 0, 0))
	base := rng.Uint32()
	for i := range n {
		tx := wire.NewMsgTx(wire.TxVersion)
		tx.AddTxIn(wire.NewTxIn(&wire.OutPoint{Index: uint32(i)}, nil, nil))
		tx.AddTxOut(wire.NewTxOut(int64(i), []byte{0x51}))
		tx.LockTime = base + uint32(i)
		block.Transactions = append(block.Transactions, tx)
	}
	block.Header.MerkleRoot = blockchain.CalcMerkleRoot(btcutil.NewBlock(block).Transactions(), false)
	return block
}

// matchSet returns a random subset of [0, n) where each index is included
// with probability 1/2^shift, as a predicate and a sorted slice.
func matchSet(n int, shift uint, rng *rand.Rand) (func(int, *wire.MsgTx) bool, []int) {
	set := make([]bool, n)
	var idx []int
	for i := range n {
		if rng.Uint32()&(1<<shift-1) == 0 {
			set[i] = true
			idx = append(idx, i)
		}
	}
	return func(i int, _ *wire.MsgTx) bool { return set[i] }, idx
}

// TestPartialMerkleTreeCore is Core's pmt_test1: for several tree sizes and
// inclusion rates 1, 1/2, ..., 1/128 the tree must round trip through the
// wire format, respect Core's size bound, yield the matched txids in order,
// and break when any hash is damaged.
func TestPartialMerkleTreeCore(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, nTx := range []int{1, 4, 7, 17, 56, 100, 127, 256, 312, 513, 1000, 4095} {
		block := syntheticBlock(nTx, rng)
		height := 1
		for w := nTx; w > 1; w = (w + 1) / 2 {
			height++
		}
		for att := uint(1); att < 15; att++ {
			match, want := matchSet(nTx, att/2, rng)
			mb := BuildMerkleBlock(block, match)
			var buf bytes.Buffer
			require.NoError(t, mb.BtcEncode(&buf, wire.ProtocolVersion, wire.LatestEncoding))
			// Core's bound on the serialized tree (the 80-byte header is
			// not part of CPartialMerkleTree).
			n := min(nTx, 1+len(want)*height)
			size := buf.Len() - blockHeaderLen
			require.LessOrEqual(t, size, 10+(258*n+7)/8, "nTx %d att %d: tree is %d bytes, bound %d", nTx, att, size, 10+(258*n+7)/8)
			var decoded wire.MsgMerkleBlock
			require.NoError(t, decoded.BtcDecode(&buf, wire.ProtocolVersion, wire.LatestEncoding))
			matches, indexes, err := VerifyMerkleBlock(&decoded)
			require.NoError(t, err, "nTx %d att %d", nTx, att)
			require.Equal(t, len(want), len(matches), "nTx %d att %d: %d matches, want %d", nTx, att, len(matches), len(want))
			for i, w := range want {
				require.Equal(t, uint32(w), indexes[i], "nTx %d att %d: match %d is %v at %d", nTx, att, i, matches[i], indexes[i])
				require.Equal(t, block.Transactions[w].TxHash(), matches[i], "nTx %d att %d: match %d is %v at %d", nTx, att, i, matches[i], indexes[i])
			}
			for range 4 {
				damaged := cloneMerkleBlock(&decoded)
				h := damaged.Hashes[rng.IntN(len(damaged.Hashes))]
				bit := rng.IntN(256)
				h[bit>>3] ^= 1 << (bit & 7)
				root, _, _, err := ExtractMatches(damaged.Transactions, damaged.Hashes, damaged.Flags)
				require.False(t, err == nil && root == block.Header.MerkleRoot, "nTx %d att %d: damaged tree still authenticates", nTx, att)
			}
		}
	}
}

// blockHeaderLen is the serialized size of a block header.
const blockHeaderLen = 80

// cloneMerkleBlock deep-copies a merkleblock.
func cloneMerkleBlock(mb *wire.MsgMerkleBlock) *wire.MsgMerkleBlock {
	c := *mb
	c.Hashes = make([]*chainhash.Hash, len(mb.Hashes))
	for i, h := range mb.Hashes {
		hc := *h
		c.Hashes[i] = &hc
	}
	c.Flags = append([]byte(nil), mb.Flags...)
	return &c
}

// TestPartialMerkleTreeMalleability is Core's pmt_malleability: twelve
// txids whose last four repeat 9, 10, 9, 10 give identical sibling subtrees.
func TestPartialMerkleTreeMalleability(t *testing.T) {
	var txids []chainhash.Hash
	for _, v := range []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 9, 10} {
		var h chainhash.Hash
		h[0] = v
		txids = append(txids, h)
	}
	matched := []bool{false, false, false, false, false, false, false, false, false, true, true, false}
	mb := buildMerkleBlock(&wire.BlockHeader{}, txids, matched)
	_, _, _, err := ExtractMatches(mb.Transactions, mb.Hashes, mb.Flags)
	require.ErrorIs(t, err, ErrDuplicateHash, "err = %v, want ErrDuplicateHash", err)
}

// TestMerkleRoundTripBtcutil builds merkleblocks for random blocks of 1 to
// 3000 transactions with btcutil's NewMerkleBlock and with BuildMerkleBlock:
// the two must serialize identically and verify to exactly the matched
// txids.
func TestMerkleRoundTripBtcutil(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	sizes := []int{1, 2, 3, 2999, 3000}
	for range 25 {
		sizes = append(sizes, 1+rng.IntN(3000))
	}
	for _, n := range sizes {
		block := syntheticBlock(n, rng)
		_, want := matchSet(n, uint(rng.IntN(8)), rng)
		// btcutil can only select transactions through a filter: load
		// the wanted txids into a tight filter and take what it matched,
		// which includes any false positive.
		bf, err := NewFilter(uint32(len(want)+1), 1e-7, rng.Uint32(), UpdateNone)
		require.NoError(t, err)
		for _, i := range want {
			h := block.Transactions[i].TxHash()
			bf.Add(h[:])
		}
		theirs, theirIdx := bloomNewMerkleBlock(block, bf)
		for _, i := range want {
			require.True(t, slices.Contains(theirIdx, uint32(i)), "n %d: btcutil missed tx %d", n, i)
		}
		ours := BuildMerkleBlock(block, func(i int, _ *wire.MsgTx) bool { return slices.Contains(theirIdx, uint32(i)) })
		a, b := encodeMerkleBlock(t, ours), encodeMerkleBlock(t, theirs)
		require.Equal(t, b, a, "n %d: serializations differ (%d vs %d bytes)", n, len(a), len(b))
		for name, mb := range map[string]*wire.MsgMerkleBlock{"ours": ours, "btcutil": theirs} {
			matches, indexes, err := VerifyMerkleBlock(mb)
			require.NoError(t, err, "n %d %s", n, name)
			require.True(t, slices.Equal(indexes, theirIdx), "n %d %s: indexes %v, want %v", n, name, indexes, theirIdx)
			for i, idx := range indexes {
				require.Equal(t, block.Transactions[idx].TxHash(), matches[i], "n %d %s: match %d is not tx %d", n, name, i, idx)
			}
		}
	}
}

// encodeMerkleBlock returns the wire encoding of mb.
func encodeMerkleBlock(t *testing.T, mb *wire.MsgMerkleBlock) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, mb.BtcEncode(&buf, wire.ProtocolVersion, wire.LatestEncoding))
	return buf.Bytes()
}

// TestFilterBlockMatchesBuild checks that FilterBlock equals
// BuildMerkleBlock over the indexes it reports.
func TestFilterBlockMatchesBuild(t *testing.T) {
	block := loadBlock(t, block13b8aFile, block13b8aHash)
	f := newVectorFilter(t, UpdateAll)
	addTxid(t, f, "74d681e0e03bafa802c8aa084379aa98d9fcd632ddc2ed9782b586ec87451f20")
	addTxid(t, f, "f9fc751cb7dc372406a9f8d738d5e6f8f63bab71986a39cf36ee70ee17036d07")
	mb, indexes := FilterBlock(f, block)
	require.True(t, slices.Equal(indexes, []int{1, 8}), "indexes %v", indexes)
	rebuilt := BuildMerkleBlock(block, func(i int, _ *wire.MsgTx) bool { return slices.Contains(indexes, i) })
	require.Equal(t, encodeMerkleBlock(t, rebuilt), encodeMerkleBlock(t, mb), "FilterBlock and BuildMerkleBlock disagree")
	empty := BuildMerkleBlock(wire.NewMsgBlock(&block.Header), func(int, *wire.MsgTx) bool { return true })
	require.Equal(t, uint32(0), empty.Transactions, "empty block: %+v", empty)
	require.Equal(t, 0, len(empty.Hashes), "empty block: %+v", empty)
	require.Equal(t, 0, len(empty.Flags), "empty block: %+v", empty)
	_, _, err := VerifyMerkleBlock(empty)
	require.ErrorIs(t, err, ErrNoTransactions, "empty block verifies: %v", err)
}

// TestMerkleErrorType checks MerkleError's message, Is and As.
func TestMerkleErrorType(t *testing.T) {
	_, _, _, err := ExtractMatches(0, nil, nil)
	var me *MerkleError
	require.ErrorAs(t, err, &me, "err %v is not a MerkleError with ReasonNoTransactions", err)
	require.Equal(t, ReasonNoTransactions, me.Reason, "err %v is not a MerkleError with ReasonNoTransactions", err)
	require.ErrorIs(t, err, ErrNoTransactions, "Is matches the wrong sentinel")
	require.NotErrorIs(t, err, ErrTooManyHashes, "Is matches the wrong sentinel")
	require.Contains(t, err.Error(), "no transactions", "message %q", err.Error())
	require.Contains(t, err.Error(), "0 transactions", "message %q", err.Error())
	got := MerkleReason(200).Sentinel()
	require.Error(t, got, "unknown reason sentinel %v", got)
	require.NotErrorIs(t, got, ErrNoTransactions, "unknown reason sentinel %v", got)
	_, _, err = VerifyMerkleBlock(nil)
	require.ErrorIs(t, err, ErrNilMessage, "nil merkleblock")
}

// bloomNewMerkleBlock runs btcutil's NewMerkleBlock with a btcutil copy of
// f (UpdateNone keeps the copy's matches independent of update order).
func bloomNewMerkleBlock(block *wire.MsgBlock, f *Filter) (*wire.MsgMerkleBlock, []uint32) {
	return bloom.NewMerkleBlock(btcutil.NewBlock(block), bloom.LoadFilter(f.MsgFilterLoad()))
}

// TestUnderstatedCountAuthenticates documents a property of BIP37 that
// Bitcoin Core shares: the transaction count of a merkleblock is not
// committed to by the merkle root. A peer that claims a 2-transaction block
// has 1 transaction and sends the root as its only hash, with no match,
// passes verification with no matches at all: it hides the block's matches.
// Only asking a second peer (spv's spot checks) can reveal it; a claimed
// match at such a "leaf" names an inner node, for which no transaction
// message can be sent (except a 64-byte transaction, which spv refuses).
func TestUnderstatedCountAuthenticates(t *testing.T) {
	block := syntheticBlock(2, rand.New(rand.NewPCG(1, 2)))
	honest := BuildMerkleBlock(block, func(int, *wire.MsgTx) bool { return true })
	m, _, err := VerifyMerkleBlock(honest)
	require.NoError(t, err, "honest merkleblock")
	require.Len(t, m, 2, "honest merkleblock")
	root := block.Header.MerkleRoot
	forged := &wire.MsgMerkleBlock{Header: block.Header, Transactions: 1, Hashes: []*chainhash.Hash{&root}, Flags: []byte{0}}
	m, idx, err := VerifyMerkleBlock(forged)
	require.NoError(t, err, "understated count: %d matches, %v; want it to verify with none (the known BIP37 property)", len(m), err)
	require.Equal(t, 0, len(m), "understated count: %d matches, %v; want it to verify with none (the known BIP37 property)", len(m), err)
	require.Equal(t, 0, len(idx), "understated count: %d matches, %v; want it to verify with none (the known BIP37 property)", len(m), err)
}
