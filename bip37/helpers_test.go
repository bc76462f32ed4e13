package bip37

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// mustHex decodes a hex string or fails the test.
func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	require.NoError(t, err, "bad hex %q", s)
	return b
}

// mustHash parses a txid or block hash in display (byte-reversed) order,
// like Core's uint256S.
func mustHash(t testing.TB, s string) chainhash.Hash {
	t.Helper()
	h, err := chainhash.NewHashFromStr(s)
	require.NoError(t, err, "bad hash %q", s)
	return *h
}

// readHexFile returns the decoded contents of a testdata hex file.
func readHexFile(t testing.TB, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err, "read %s", name)
	return mustHex(t, strings.TrimSpace(string(raw)))
}

// loadTx decodes a serialized transaction from testdata, rejecting
// trailing bytes.
func loadTx(t testing.TB, name string) *wire.MsgTx {
	t.Helper()
	raw := readHexFile(t, name)
	r := bytes.NewReader(raw)
	var tx wire.MsgTx
	require.NoError(t, tx.Deserialize(r), "decode %s", name)
	require.Equal(t, 0, r.Len(), "%s: %d trailing bytes", name, r.Len())
	return &tx
}

// loadBlock decodes a block from testdata and checks its hash and merkle
// root, which also guards the re-typed hex against typos.
func loadBlock(t testing.TB, name, wantHash string) *wire.MsgBlock {
	t.Helper()
	raw := readHexFile(t, name)
	r := bytes.NewReader(raw)
	var block wire.MsgBlock
	require.NoError(t, block.Deserialize(r), "decode %s", name)
	require.Equal(t, 0, r.Len(), "%s: %d trailing bytes", name, r.Len())
	got := block.BlockHash()
	require.Equal(t, mustHash(t, wantHash), got, "%s: block hash %v, want %s", name, got, wantHash)
	root := blockchain.CalcMerkleRoot(btcutil.NewBlock(&block).Transactions(), false)
	require.Equal(t, block.Header.MerkleRoot, root, "%s: merkle root %v, header %v", name, root, block.Header.MerkleRoot)
	return &block
}

// The Core test blocks (src/test/bloom_tests.cpp, src/test/util/setup_common.cpp).
const (
	block13b8aFile = "block_13b8a_9tx.hex"
	block13b8aHash = "0000000000013b8ab2cd513b0261a14096412195a72a0c4827d229dcc7e0f7af"
	block5a4deFile = "block_5a4ded_4tx.hex"
	block5a4deHash = "000000005a4ded781e667e06ceefafb71410b511fe0d5adc3e5a27ecbec34ae6"
	blockDab01File = "block_dab013_1tx.hex"
	blockDab01Hash = "000000000000dab0130bbcc991d3d7ae6b81aa6f50a798888dfe62337458dc45"
	blockB731fFile = "block_b731f2_7tx.hex"
	blockB731fHash = "000000000000b731f2eef9e8c63173adfb07e41bd53eb0ef0a6b720d6cb6dea4"
)
