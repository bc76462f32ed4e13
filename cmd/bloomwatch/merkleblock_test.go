package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// coreMerkleBlock3 is the merkleblock of Core's merkle_block_3_and_serialize
// (block 000000000000dab0..., one transaction, matched).
const coreMerkleBlock3 = "0100000079cda856b143d9db2c1caff01d1aecc8630d30625d10e8b4b8b0000000000000b50cc069d6a3e33e3ff84a5c41d9d3febe7c770fdcc96b2c3ff60abe184f196367291b4d4c86041b8fa45d630100000001b50cc069d6a3e33e3ff84a5c41d9d3febe7c770fdcc96b2c3ff60abe184f19630101"

// syntheticMerkleBlock builds a merkleblock over five distinct transactions
// with the given ones matched, and lets the caller tamper with it before it
// is encoded to hex.
func syntheticMerkleBlock(t *testing.T, matched map[int]bool, tamper func(*wire.MsgMerkleBlock)) (string, []chainhash.Hash) {
	t.Helper()
	block := wire.NewMsgBlock(wire.NewBlockHeader(1, &chainhash.Hash{}, &chainhash.Hash{}, 0x207fffff, 0))
	var txids []chainhash.Hash
	for i := range 5 {
		tx := wire.NewMsgTx(wire.TxVersion)
		tx.AddTxIn(wire.NewTxIn(&wire.OutPoint{Index: uint32(i)}, nil, nil))
		tx.AddTxOut(wire.NewTxOut(int64(i), []byte{0x51}))
		block.Transactions = append(block.Transactions, tx)
		txids = append(txids, tx.TxHash())
	}
	// The root of the full tree is the root of a tree with everything matched.
	full := bip37.BuildMerkleBlock(block, func(int, *wire.MsgTx) bool { return true })
	block.Header.MerkleRoot = merkleRootOf(t, full)
	mb := bip37.BuildMerkleBlock(block, func(i int, _ *wire.MsgTx) bool { return matched[i] })
	if tamper != nil {
		tamper(mb)
	}
	var buf bytes.Buffer
	require.NoError(t, mb.BtcEncode(&buf, wire.ProtocolVersion, wire.LatestEncoding))
	return hex.EncodeToString(buf.Bytes()), txids
}

// merkleRootOf computes the root a partial tree commits to.
func merkleRootOf(t *testing.T, mb *wire.MsgMerkleBlock) chainhash.Hash {
	t.Helper()
	root, _, _, err := bip37.ExtractMatches(mb.Transactions, mb.Hashes, mb.Flags)
	require.NoError(t, err)
	return root
}

// TestMerkleblockVerify covers `merkleblock verify`.
func TestMerkleblockVerify(t *testing.T) {
	good, txids := syntheticMerkleBlock(t, map[int]bool{1: true, 4: true}, nil)
	goodHeaderHash := func() string {
		raw, _ := hex.DecodeString(good)
		var mb wire.MsgMerkleBlock
		require.NoError(t, mb.BtcDecode(bytes.NewReader(raw), wire.ProtocolVersion, wire.LatestEncoding))
		return mb.Header.BlockHash().String()
	}()
	extraByte, _ := syntheticMerkleBlock(t, map[int]bool{1: true}, func(mb *wire.MsgMerkleBlock) { mb.Flags = append(mb.Flags, 0) })
	wrongRoot, _ := syntheticMerkleBlock(t, map[int]bool{1: true}, func(mb *wire.MsgMerkleBlock) { mb.Header.MerkleRoot[0] ^= 1 })
	dupHash, _ := syntheticMerkleBlock(t, map[int]bool{1: true}, func(mb *wire.MsgMerkleBlock) { mb.Hashes = append(mb.Hashes, mb.Hashes[0]) })
	zeroTxs, _ := syntheticMerkleBlock(t, map[int]bool{1: true}, func(mb *wire.MsgMerkleBlock) { mb.Transactions = 0 })
	checkCLI(t, []cliCase{
		{name: "core merkle_block_3", args: []string{"merkleblock", "verify", coreMerkleBlock3},
			wantOut: "block 000000000000dab0130bbcc991d3d7ae6b81aa6f50a798888dfe62337458dc45\ntransactions 1\nmatched 1\n" +
				"0 63194f18be0af63f2c6bc9dc0f777cbefed3d9415c4af83f3ee3a3d669c00cb5\n"},
		{name: "synthetic two matches", args: []string{"merkleblock", "verify", good},
			wantOut: "block " + goodHeaderHash + "\ntransactions 5\nmatched 2\n1 " + txids[1].String() + "\n4 " + txids[4].String() + "\n"},
		{name: "unused flag byte", args: []string{"merkleblock", "verify", extraByte}, wantCode: 1, wantErrSub: "left flag bytes unused"},
		{name: "root mismatch", args: []string{"merkleblock", "verify", wrongRoot}, wantCode: 1, wantErrSub: "does not match the block header"},
		{name: "unused hash", args: []string{"merkleblock", "verify", dupHash}, wantCode: 1, wantErrSub: "left hashes unused"},
		{name: "zero transactions", args: []string{"merkleblock", "verify", zeroTxs}, wantCode: 1, wantErrSub: "no transactions"},
		{name: "trailing bytes", args: []string{"merkleblock", "verify", coreMerkleBlock3 + "00"}, wantCode: 2, wantErrSub: "trailing bytes"},
		{name: "truncated", args: []string{"merkleblock", "verify", coreMerkleBlock3[:100]}, wantCode: 2, wantErrSub: "decode"},
		{name: "bad hex", args: []string{"merkleblock", "verify", "0g"}, wantCode: 2, wantErrSub: "bad hex"},
		{name: "no payload", args: []string{"merkleblock", "verify"}, wantCode: 2, wantErrSub: "exactly one"},
		{name: "two payloads", args: []string{"merkleblock", "verify", coreMerkleBlock3, coreMerkleBlock3}, wantCode: 2, wantErrSub: "exactly one"},
	})
}

// TestMerkleblockVerifyJSON checks `merkleblock verify --json`.
func TestMerkleblockVerifyJSON(t *testing.T) {
	code, out, errOut := runCLI(t, []string{"merkleblock", "verify", "--json", coreMerkleBlock3})
	require.Equal(t, 0, code, "exit %d, stderr %q", code, errOut)
	require.Equal(t, "", errOut, "exit %d, stderr %q", code, errOut)
	var got struct {
		BlockHash    string `json:"block_hash"`
		MerkleRoot   string `json:"merkle_root"`
		Transactions uint32 `json:"transactions"`
		Matches      []struct {
			Index uint32 `json:"index"`
			Txid  string `json:"txid"`
		} `json:"matches"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got), "bad JSON %q", out)
	const tx0 = "63194f18be0af63f2c6bc9dc0f777cbefed3d9415c4af83f3ee3a3d669c00cb5"
	require.Equal(t, "000000000000dab0130bbcc991d3d7ae6b81aa6f50a798888dfe62337458dc45", got.BlockHash, "JSON %+v", got)
	require.Equal(t, tx0, got.MerkleRoot, "JSON %+v", got)
	require.Equal(t, uint32(1), got.Transactions, "JSON %+v", got)
	require.Len(t, got.Matches, 1, "JSON %+v", got)
	require.Equal(t, uint32(0), got.Matches[0].Index, "JSON %+v", got)
	require.Equal(t, tx0, got.Matches[0].Txid, "JSON %+v", got)
}
