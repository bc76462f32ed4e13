package bip37

import (
	"bytes"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

func TestParseTweak(t *testing.T) {
	for in, want := range map[string]uint32{"0": 0, "2147483649": 2147483649, "0x80000001": 0x80000001, "0XfF": 255, "010": 10, "4294967295": 1<<32 - 1} {
		got, err := ParseTweak(in)
		require.NoError(t, err, "ParseTweak(%q) = %d, %v; want %d", in, got, err, want)
		require.Equal(t, want, got, "ParseTweak(%q) = %d, %v; want %d", in, got, err, want)
	}
	for _, in := range []string{"", "-1", "0x1ffffffff", "4294967296", "seven", "0xg", "0x", "0o7", " 1"} {
		_, err := ParseTweak(in)
		require.Error(t, err, "ParseTweak(%q): %v", in, err)
		require.Contains(t, err.Error(), "want a decimal or 0x-hex uint32", "ParseTweak(%q): %v", in, err)
	}
}

func TestParseOutPoint(t *testing.T) {
	op := wire.OutPoint{Hash: chainhash.DoubleHashH([]byte("tx")), Index: 7}
	got, err := ParseOutPoint(op.String())
	require.NoError(t, err, "round trip of %s: %v", op, got)
	require.Equal(t, op, got, "round trip of %s: %v %v", op, got, err)
	zero := strings.Repeat("0", 64)
	for in, want := range map[string]string{
		zero:                                 "want TXID:INDEX",
		"00:1":                               "want TXID:INDEX",
		zero + ":-1":                         "bad index",
		zero + ":4294967296":                 "bad index",
		strings.Repeat("z", 64) + ":0":       "bad txid",
		strings.Repeat("0", 63) + "g:0":      "bad txid",
		zero + ":" + strings.Repeat("9", 30): "bad index",
	} {
		_, err := ParseOutPoint(in)
		require.Error(t, err, "ParseOutPoint(%q) = %v, want an error with %q", in, err, want)
		require.Contains(t, err.Error(), want, "ParseOutPoint(%q) = %v, want an error with %q", in, err, want)
		require.Contains(t, err.Error(), in, "ParseOutPoint(%q) = %v, want an error with %q", in, err, want)
	}
}

func TestDecodeMerkleBlock(t *testing.T) {
	block := &wire.MsgBlock{Header: wire.BlockHeader{Version: 1}}
	for i := range 3 {
		tx := wire.NewMsgTx(1)
		tx.AddTxOut(wire.NewTxOut(int64(i), []byte{0x51}))
		block.AddTransaction(tx)
	}
	mb := BuildMerkleBlock(block, func(i int, _ *wire.MsgTx) bool { return i == 1 })
	var b bytes.Buffer
	require.NoError(t, mb.BtcEncode(&b, wire.ProtocolVersion, wire.LatestEncoding))
	got, err := DecodeMerkleBlock(b.Bytes())
	require.NoError(t, err, "decode: %+v", got)
	require.Equal(t, uint32(3), got.Transactions, "decode: %+v %v", got, err)
	require.Equal(t, len(mb.Hashes), len(got.Hashes), "decode: %+v %v", got, err)
	_, err = DecodeMerkleBlock(append(b.Bytes(), 0, 0))
	require.EqualError(t, err, "2 trailing bytes after the message", "trailing bytes")
	_, err = DecodeMerkleBlock(b.Bytes()[:50])
	require.Error(t, err, "truncated")
	require.True(t, strings.HasPrefix(err.Error(), "decode: "), "truncated: %v", err)
}
