package bip37

import (
	"bytes"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

func TestParseTweak(t *testing.T) {
	for in, want := range map[string]uint32{"0": 0, "2147483649": 2147483649, "0x80000001": 0x80000001, "0XfF": 255, "010": 10, "4294967295": 1<<32 - 1} {
		got, err := ParseTweak(in)
		if err != nil || got != want {
			t.Errorf("ParseTweak(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "0x1ffffffff", "4294967296", "seven", "0xg", "0x", "0o7", " 1"} {
		if _, err := ParseTweak(in); err == nil || !strings.Contains(err.Error(), "want a decimal or 0x-hex uint32") {
			t.Errorf("ParseTweak(%q): %v", in, err)
		}
	}
}

func TestParseOutPoint(t *testing.T) {
	op := wire.OutPoint{Hash: chainhash.DoubleHashH([]byte("tx")), Index: 7}
	got, err := ParseOutPoint(op.String())
	if err != nil || got != op {
		t.Fatalf("round trip of %s: %v %v", op, got, err)
	}
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
		if _, err := ParseOutPoint(in); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), in) {
			t.Errorf("ParseOutPoint(%q) = %v, want an error with %q", in, err, want)
		}
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
	if err := mb.BtcEncode(&b, wire.ProtocolVersion, wire.LatestEncoding); err != nil {
		t.Fatal(err)
	}
	got, err := DecodeMerkleBlock(b.Bytes())
	if err != nil || got.Transactions != 3 || len(got.Hashes) != len(mb.Hashes) {
		t.Fatalf("decode: %+v %v", got, err)
	}
	if _, err := DecodeMerkleBlock(append(b.Bytes(), 0, 0)); err == nil || err.Error() != "2 trailing bytes after the message" {
		t.Errorf("trailing bytes: %v", err)
	}
	if _, err := DecodeMerkleBlock(b.Bytes()[:50]); err == nil || !strings.HasPrefix(err.Error(), "decode: ") {
		t.Errorf("truncated: %v", err)
	}
}
