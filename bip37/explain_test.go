package bip37

import (
	"bytes"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"pgregory.net/rapid"
)

// explainTx has a P2WPKH output, a second output pushing two items and an
// input with a scriptSig push.
func explainTx() *wire.MsgTx {
	tx := wire.NewMsgTx(2)
	tx.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: chainhash.Hash{7}, Index: 3}, append([]byte{4}, []byte("sig!")...), nil))
	tx.AddTxOut(wire.NewTxOut(1, append([]byte{0x00, 0x14}, bytes.Repeat([]byte{0xaa}, 20)...)))
	tx.AddTxOut(wire.NewTxOut(2, []byte{0x02, 0xbb, 0xbb, 0x03, 0xcc, 0xcc, 0xcc}))
	return tx
}

func TestExplainNamesTheMatchingPart(t *testing.T) {
	tx := explainTx()
	txid := tx.TxHash()
	op := serializeOutPoint(&tx.TxIn[0].PreviousOutPoint)
	cases := []struct {
		name  string
		elem  []byte
		kind  MatchKind
		index int
	}{
		{"txid", txid[:], MatchTxid, -1},
		{"first output push", bytes.Repeat([]byte{0xaa}, 20), MatchOutput, 0},
		{"second push of the second output", []byte{0xcc, 0xcc, 0xcc}, MatchOutput, 1},
		{"spent outpoint", op[:], MatchOutPoint, 0},
		{"scriptSig push", []byte("sig!"), MatchInputScript, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := NewFilter(10, 1e-6, 99, UpdateNone)
			if err != nil {
				t.Fatal(err)
			}
			f.Add(c.elem)
			m, ok := f.Explain(tx)
			if !ok || m.Kind != c.kind || m.Index != c.index || !bytes.Equal(m.Element, c.elem) {
				t.Fatalf("explain %+v %v, want %s at %d", m, ok, c.kind, c.index)
			}
			if len(m.Bits) != int(f.HashFuncs()) {
				t.Fatalf("%d bit positions, want k = %d", len(m.Bits), f.HashFuncs())
			}
			for _, b := range m.Bits {
				if uint64(b) >= f.NumBits() || f.Bits()[b/8]&(1<<(b%8)) == 0 {
					t.Fatalf("bit %d not set in the filter", b)
				}
			}
		})
	}
	empty, _ := NewFilter(10, 1e-6, 99, UpdateNone)
	if _, ok := empty.Explain(tx); ok {
		t.Fatal("an empty filter explained a match")
	}
	all, _ := NewFilterFromBits(nil, 0, 0, UpdateNone)
	if m, ok := all.Explain(tx); !ok || m.Kind != MatchAll {
		t.Fatalf("zero-length filter: %+v %v", m, ok)
	}
}

// TestExplainAgreesWithMatchTx checks on random filters and transactions
// that Explain matches exactly when MatchTx does.
func TestExplainAgreesWithMatchTx(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tx := explainTx()
		tx.TxOut[0].PkScript[2] = rapid.Byte().Draw(t, "b")
		bits := rapid.SliceOfN(rapid.Byte(), 1, 8).Draw(t, "bits")
		k := rapid.Uint32Range(1, 8).Draw(t, "k")
		f, err := NewFilterFromBits(bits, k, rapid.Uint32().Draw(t, "tweak"), UpdateNone)
		if err != nil {
			t.Fatal(err)
		}
		_, ok := f.Explain(tx)
		if ok != f.MatchTx(tx) {
			t.Fatalf("Explain %v, MatchTx %v", ok, f.MatchTx(tx))
		}
	})
}
