package bip37

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// tamperFixture returns a verified merkleblock over a 10-tx block with
// transactions 2, 3 and 9 matched, and the number of flag bits it uses.
func tamperFixture(t *testing.T) (*wire.MsgBlock, *wire.MsgMerkleBlock, int) {
	t.Helper()
	block := syntheticBlock(10, rand.New(rand.NewPCG(5, 6)))
	mb := BuildMerkleBlock(block, func(i int, _ *wire.MsgTx) bool { return i == 2 || i == 3 || i == 9 })
	_, _, err := VerifyMerkleBlock(mb)
	require.NoError(t, err)
	x := extractor{numTxs: mb.Transactions, hashes: mb.Hashes, flags: mb.Flags, numBits: uint64(len(mb.Flags)) * 8}
	x.traverse(treeHeight(mb.Transactions), 0)
	return block, mb, int(x.bitsUsed)
}

// TestTamperFlagBits flips every flag bit. Padding bits after the last
// used one are ignored, as in Core. A used bit either breaks the proof or,
// when it is the bit of a leaf whose hash the tree carries, only toggles
// whether that leaf counts as matched: BIP37 does not authenticate leaf
// flags, so a peer can add or drop such a sibling from the match set (the
// txid itself stays authentic). Callers must test the transactions they
// receive against their filter.
func TestTamperFlagBits(t *testing.T) {
	block, mb, used := tamperFixture(t)
	_, wantIdx, _ := VerifyMerkleBlock(mb)
	toggled := 0
	for bit := range len(mb.Flags) * 8 {
		c := cloneMerkleBlock(mb)
		c.Flags[bit/8] ^= 1 << (bit % 8)
		matches, indexes, err := VerifyMerkleBlock(c)
		if bit >= used {
			require.NoError(t, err, "padding bit %d: indexes %v", bit, indexes)
			require.True(t, slices.Equal(indexes, wantIdx), "padding bit %d: indexes %v, err %v", bit, indexes, err)
			continue
		}
		if err != nil {
			var me *MerkleError
			require.ErrorAs(t, err, &me, "flag bit %d: err = %v, want a MerkleError", bit, err)
			continue
		}
		diff := symmetricDifference(indexes, wantIdx)
		require.Len(t, diff, 1, "flag bit %d verified with indexes %v (want %v +/- one leaf)", bit, indexes, wantIdx)
		toggled++
		for i, idx := range indexes {
			require.Equal(t, block.Transactions[idx].TxHash(), matches[i], "flag bit %d: match %d is not the txid at %d", bit, i, idx)
		}
	}
	require.NotEqual(t, 0, toggled, "no leaf flag toggled a match; the fixture should carry sibling leaves")
}

// symmetricDifference returns the elements in exactly one of a and b.
func symmetricDifference(a, b []uint32) []uint32 {
	var out []uint32
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			out = append(out, x)
		}
	}
	return out
}

// TestTamperHashes flips one bit in each hash: the root must no longer
// match.
func TestTamperHashes(t *testing.T) {
	_, mb, _ := tamperFixture(t)
	for i := range mb.Hashes {
		for _, bit := range []int{0, 77, 255} {
			c := cloneMerkleBlock(mb)
			c.Hashes[i][bit/8] ^= 1 << (bit % 8)
			_, _, err := VerifyMerkleBlock(c)
			require.ErrorIs(t, err, ErrMerkleRootMismatch, "hash %d bit %d: err = %v, want ErrMerkleRootMismatch", i, bit, err)
		}
	}
}

// TestTamperStructure covers truncation, extension and the count checks,
// each with its typed error.
func TestTamperStructure(t *testing.T) {
	_, mb, _ := tamperFixture(t)
	extra := chainhash.Hash{0xee}
	tests := []struct {
		name   string
		mutate func(c *wire.MsgMerkleBlock)
		want   error
	}{
		{"drop last hash", func(c *wire.MsgMerkleBlock) { c.Hashes = c.Hashes[:len(c.Hashes)-1] }, ErrHashesExhausted},
		{"drop all hashes", func(c *wire.MsgMerkleBlock) { c.Hashes = nil }, ErrHashesExhausted},
		{"drop last flag byte", func(c *wire.MsgMerkleBlock) { c.Flags = c.Flags[:len(c.Flags)-1] }, ErrBitsExhausted},
		{"drop all flags", func(c *wire.MsgMerkleBlock) { c.Flags = nil }, ErrNotEnoughBits},
		{"append hash", func(c *wire.MsgMerkleBlock) { c.Hashes = append(c.Hashes, &extra) }, ErrUnusedHashes},
		{"append flag byte", func(c *wire.MsgMerkleBlock) { c.Flags = append(c.Flags, 0) }, ErrUnusedBits},
		{"zero transactions", func(c *wire.MsgMerkleBlock) { c.Transactions = 0 }, ErrNoTransactions},
		{"16667 transactions", func(c *wire.MsgMerkleBlock) { c.Transactions = MaxMerkleTxs + 1 }, ErrTooManyTransactions},
		{"max uint32 transactions", func(c *wire.MsgMerkleBlock) { c.Transactions = ^uint32(0) }, ErrTooManyTransactions},
		{"more hashes than transactions", func(c *wire.MsgMerkleBlock) { c.Transactions = uint32(len(c.Hashes) - 1) }, ErrTooManyHashes},
		{"fewer bits than hashes", func(c *wire.MsgMerkleBlock) {
			for len(c.Hashes) <= 8*len(c.Flags) {
				c.Hashes = append(c.Hashes, &extra)
			}
			c.Transactions = uint32(len(c.Hashes))
		}, ErrNotEnoughBits},
		{"nil hash", func(c *wire.MsgMerkleBlock) { c.Hashes[0] = nil }, ErrNilHash},
		{"one transaction fewer", func(c *wire.MsgMerkleBlock) { c.Transactions-- }, nil},
		{"one transaction more", func(c *wire.MsgMerkleBlock) { c.Transactions++ }, nil},
		{"other header", func(c *wire.MsgMerkleBlock) { c.Header.MerkleRoot[0] ^= 1 }, ErrMerkleRootMismatch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := cloneMerkleBlock(mb)
			tc.mutate(c)
			_, _, err := VerifyMerkleBlock(c)
			if tc.want == nil {
				// A changed tree shape must fail some check.
				var me *MerkleError
				require.ErrorAs(t, err, &me, "err = %v, want a MerkleError", err)
				return
			}
			require.ErrorIs(t, err, tc.want, "err = %v, want %v", err, tc.want)
			root, _, _, refOK := newRefPMT(c.Transactions, nonNil(c.Hashes), c.Flags).extract()
			require.False(t, tc.want != ErrMerkleRootMismatch && tc.want != ErrNilHash && refOK, "the reference accepts the tree (root %v)", root)
		})
	}
}

// nonNil drops nil hashes (the reference cannot represent them).
func nonNil(hashes []*chainhash.Hash) []*chainhash.Hash {
	var out []*chainhash.Hash
	for _, h := range hashes {
		if h != nil {
			out = append(out, h)
		}
	}
	return out
}

// TestDuplicateLastTransaction is CVE-2012-2459: a block whose last
// transaction is repeated has the same merkle root as the original, and a
// peer can prove the duplicate's inclusion unless identical siblings are
// rejected.
func TestDuplicateLastTransaction(t *testing.T) {
	for _, n := range []int{3, 5, 9, 11} {
		block := syntheticBlock(n, rand.New(rand.NewPCG(uint64(n), 7)))
		forged := *block
		forged.Transactions = append(slices.Clone(block.Transactions), block.Transactions[n-1])
		mb := BuildMerkleBlock(&forged, func(i int, _ *wire.MsgTx) bool { return i >= n-1 })
		require.Equal(t, block.Header.MerkleRoot, mb.Header.MerkleRoot, "fixture: roots differ")
		root, _, _, err := ExtractMatches(mb.Transactions, mb.Hashes, mb.Flags)
		require.ErrorIs(t, err, ErrDuplicateHash, "n %d: err = %v (root %v), want ErrDuplicateHash", n, err, root)
		// Matching only the original copy hides the duplicate from the
		// check at the leaves, but the inner node hashes still repeat.
		mb = BuildMerkleBlock(&forged, func(i int, _ *wire.MsgTx) bool { return i == n-1 })
		_, _, err = VerifyMerkleBlock(mb)
		require.ErrorIs(t, err, ErrDuplicateHash, "n %d, original copy matched", n)
	}
}
