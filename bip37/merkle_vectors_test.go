package bip37

import (
	"bytes"
	"encoding/hex"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// match is one expected matched transaction: its index and txid.
type match struct {
	index int
	txid  string
}

// checkFiltered runs FilterBlock, checks the matched indexes and txids,
// and verifies the merkleblock, as Core's merkle_block_* tests do.
func checkFiltered(t *testing.T, f *Filter, block *wire.MsgBlock, want []match) *wire.MsgMerkleBlock {
	t.Helper()
	mb, indexes := FilterBlock(f, block)
	require.Equal(t, block.BlockHash(), mb.Header.BlockHash(), "merkleblock header hash %v, block %v", mb.Header.BlockHash(), block.BlockHash())
	require.Equal(t, len(want), len(indexes), "matched %v, want %v", indexes, want)
	matches, positions, err := VerifyMerkleBlock(mb)
	require.NoError(t, err, "VerifyMerkleBlock")
	require.Equal(t, len(want), len(matches), "verified %d matches at %v, want %d", len(matches), positions, len(want))
	require.Equal(t, len(want), len(positions), "verified %d matches at %v, want %d", len(matches), positions, len(want))
	for i, w := range want {
		txid := mustHash(t, w.txid)
		require.Equal(t, w.index, indexes[i], "match %d: index %d txid %v, want %d %s", i, indexes[i], block.Transactions[indexes[i]].TxHash(), w.index, w.txid)
		require.Equal(t, txid, block.Transactions[indexes[i]].TxHash(), "match %d: index %d txid %v, want %d %s", i, indexes[i], block.Transactions[indexes[i]].TxHash(), w.index, w.txid)
		require.Equal(t, txid, matches[i], "verified match %d: %v at %d, want %s at %d", i, matches[i], positions[i], w.txid, w.index)
		require.Equal(t, uint32(w.index), positions[i], "verified match %d: %v at %d, want %s at %d", i, matches[i], positions[i], w.txid, w.index)
	}
	return mb
}

// newVectorFilter is the filter Core's merkle tests use.
func newVectorFilter(t *testing.T, flags UpdateFlag) *Filter {
	t.Helper()
	f, err := NewFilter(10, 0.000001, 0, flags)
	require.NoError(t, err)
	return f
}

// addTxid inserts a txid given in display order.
func addTxid(t *testing.T, f *Filter, s string) {
	t.Helper()
	h := mustHash(t, s)
	f.Add(h[:])
}

// TestMerkleBlock1 is Core's merkle_block_1 on block 13b8a (9 txs).
func TestMerkleBlock1(t *testing.T) {
	block := loadBlock(t, block13b8aFile, block13b8aHash)
	f := newVectorFilter(t, UpdateAll)
	addTxid(t, f, "74d681e0e03bafa802c8aa084379aa98d9fcd632ddc2ed9782b586ec87451f20")
	checkFiltered(t, f, block, []match{{8, "74d681e0e03bafa802c8aa084379aa98d9fcd632ddc2ed9782b586ec87451f20"}})
	addTxid(t, f, "dd1fd2a6fc16404faf339881a90adbde7f4f728691ac62e8f168809cdfae1053")
	checkFiltered(t, f, block, []match{
		{7, "dd1fd2a6fc16404faf339881a90adbde7f4f728691ac62e8f168809cdfae1053"},
		{8, "74d681e0e03bafa802c8aa084379aa98d9fcd632ddc2ed9782b586ec87451f20"},
	})
}

// TestMerkleBlock2 is Core's merkle_block_2 and
// merkle_block_2_with_update_none on block 5a4ded (4 txs): matching the
// pubkey of tx 1's output pulls in tx 2, which spends it, only under
// UPDATE_ALL.
func TestMerkleBlock2(t *testing.T) {
	const (
		tx0    = "e980fe9f792d014e73b95203dc1335c5f9ce19ac537a419e6df5b47aecb93b70"
		tx1    = "28204cad1d7fc1d199e8ef4fa22f182de6258a3eaafe1bbe56ebdcacd3069a5f"
		tx2    = "6b0f8a73a56c04b519f1883e8aafda643ba61a30bd1439969df21bea5f4e27e2"
		tx3    = "3c1d7e82342158e4109df2e0b6348b6e84e403d8b4046d7007663ace63cddb23"
		pubKey = "044a656f065871a353f216ca26cef8dde2f03e8c16202d2e8ad769f02032cb86a5eb5e56842e92e19141d60a01928f8dd2c875a390f67c1f6c94cfc617c0ea45af"
	)
	tests := []struct {
		name  string
		flags UpdateFlag
		want  []match
	}{
		{"update all", UpdateAll, []match{{0, tx0}, {1, tx1}, {2, tx2}, {3, tx3}}},
		{"update none", UpdateNone, []match{{0, tx0}, {1, tx1}, {3, tx3}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			block := loadBlock(t, block5a4deFile, block5a4deHash)
			f := newVectorFilter(t, tc.flags)
			addTxid(t, f, tx0)
			checkFiltered(t, f, block, []match{{0, tx0}})
			f.Add(mustHex(t, pubKey))
			checkFiltered(t, f, block, tc.want)
		})
	}
}

// TestMerkleBlock3 is Core's merkle_block_3_and_serialize (1 tx), which
// also fixes the merkleblock's serialization.
func TestMerkleBlock3(t *testing.T) {
	const tx0 = "63194f18be0af63f2c6bc9dc0f777cbefed3d9415c4af83f3ee3a3d669c00cb5"
	block := loadBlock(t, blockDab01File, blockDab01Hash)
	f := newVectorFilter(t, UpdateAll)
	addTxid(t, f, tx0)
	mb := checkFiltered(t, f, block, []match{{0, tx0}})
	var buf bytes.Buffer
	require.NoError(t, mb.BtcEncode(&buf, wire.ProtocolVersion, wire.LatestEncoding))
	const want = "0100000079cda856b143d9db2c1caff01d1aecc8630d30625d10e8b4b8b0000000000000b50cc069d6a3e33e3ff84a5c41d9d3febe7c770fdcc96b2c3ff60abe184f196367291b4d4c86041b8fa45d630100000001b50cc069d6a3e33e3ff84a5c41d9d3febe7c770fdcc96b2c3ff60abe184f19630101"
	got := hex.EncodeToString(buf.Bytes())
	require.Equal(t, want, got, "serialized merkleblock\n got %s\nwant %s", got, want)
}

// TestMerkleBlock4 is Core's merkle_block_4, merkle_block_4_test_p2pubkey_only
// and merkle_block_4_test_update_none on block b731f2 (7 txs).
func TestMerkleBlock4(t *testing.T) {
	const (
		tx3       = "02981fa052f0481dbc5868f4fc2166035a10f27a03cfd2de67326471df5bc041"
		tx6       = "0a2a92f0bda4727d0a13eaddf4dd9ac6b5c61a1429e6b2b818f19b15df0ac154"
		coinbase  = "147caa76786596590baa4e98f5d9f48b86c7765e489f7a6ff3360fe5c674360b"
		genPubKey = "04eaafc2314def4ca98ac970241bcab022b9c1e1f4ea423a20f134c876f2c01ec0f0dd5b2e86e7168cefe0d81113c3807420ce13ad1357231a2252247d97a46a91"
		tx3Output = "b6efd80d99179f4f4ff6f4dd0a007d018c385d21"
	)
	t.Run("txids", func(t *testing.T) {
		block := loadBlock(t, blockB731fFile, blockB731fHash)
		f := newVectorFilter(t, UpdateAll)
		addTxid(t, f, tx6)
		checkFiltered(t, f, block, []match{{6, tx6}})
		addTxid(t, f, tx3)
		checkFiltered(t, f, block, []match{{3, tx3}, {6, tx6}})
	})
	tests := []struct {
		name          string
		flags         UpdateFlag
		wantCoinbase  bool // the P2PK coinbase output's outpoint was inserted
		wantTx3Output bool // the P2PKH output's outpoint was inserted
	}{
		{"p2pubkey only", UpdateP2PubKeyOnly, true, false},
		{"update none", UpdateNone, false, false},
		{"update all", UpdateAll, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			block := loadBlock(t, blockB731fFile, blockB731fHash)
			f := newVectorFilter(t, tc.flags)
			f.Add(mustHex(t, genPubKey))
			f.Add(mustHex(t, tx3Output))
			FilterBlock(f, block)
			got := f.MatchesOutPoint(&wire.OutPoint{Hash: mustHash(t, coinbase)})
			require.Equal(t, tc.wantCoinbase, got, "coinbase outpoint in filter = %v, want %v", got, tc.wantCoinbase)
			got = f.MatchesOutPoint(&wire.OutPoint{Hash: mustHash(t, tx3)})
			require.Equal(t, tc.wantTx3Output, got, "tx 3 outpoint in filter = %v, want %v", got, tc.wantTx3Output)
		})
	}
}

// TestMerkleBlockFromTxids is Core's merkleblock_construct_from_txids_found
// and _not_found on block 13b8a, through BuildMerkleBlock.
func TestMerkleBlockFromTxids(t *testing.T) {
	tests := []struct {
		name  string
		txids []string
		want  []match
	}{
		{"found", []string{
			"74d681e0e03bafa802c8aa084379aa98d9fcd632ddc2ed9782b586ec87451f20",
			"f9fc751cb7dc372406a9f8d738d5e6f8f63bab71986a39cf36ee70ee17036d07",
		}, []match{
			{1, "f9fc751cb7dc372406a9f8d738d5e6f8f63bab71986a39cf36ee70ee17036d07"},
			{8, "74d681e0e03bafa802c8aa084379aa98d9fcd632ddc2ed9782b586ec87451f20"},
		}},
		{"not found", []string{"c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			block := loadBlock(t, block13b8aFile, block13b8aHash)
			set := map[chainhash.Hash]bool{}
			for _, s := range tc.txids {
				set[mustHash(t, s)] = true
			}
			mb := BuildMerkleBlock(block, func(_ int, tx *wire.MsgTx) bool { return set[tx.TxHash()] })
			matches, indexes, err := VerifyMerkleBlock(mb)
			require.NoError(t, err)
			require.Equal(t, len(tc.want), len(matches), "matches %v, want %v", matches, tc.want)
			for i, w := range tc.want {
				require.Equal(t, mustHash(t, w.txid), matches[i], "match %d: %v at %d, want %s at %d", i, matches[i], indexes[i], w.txid, w.index)
				require.Equal(t, uint32(w.index), indexes[i], "match %d: %v at %d, want %s at %d", i, matches[i], indexes[i], w.txid, w.index)
			}
		})
	}
}
