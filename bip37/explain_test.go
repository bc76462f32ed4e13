package bip37

import (
	"bytes"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
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
			require.NoError(t, err)
			f.Add(c.elem)
			m, ok := f.Explain(tx)
			require.True(t, ok, "explain %+v %v, want %s at %d", m, ok, c.kind, c.index)
			require.Equal(t, c.kind, m.Kind, "explain %+v %v, want %s at %d", m, ok, c.kind, c.index)
			require.Equal(t, c.index, m.Index, "explain %+v %v, want %s at %d", m, ok, c.kind, c.index)
			require.Equal(t, c.elem, m.Element, "explain %+v %v, want %s at %d", m, ok, c.kind, c.index)
			require.Equal(t, int(f.HashFuncs()), len(m.Bits), "%d bit positions, want k = %d", len(m.Bits), f.HashFuncs())
			for _, b := range m.Bits {
				require.Less(t, uint64(b), f.NumBits(), "bit %d not set in the filter", b)
				require.NotEqual(t, byte(0), f.Bits()[b/8]&(1<<(b%8)), "bit %d not set in the filter", b)
			}
		})
	}
	empty, _ := NewFilter(10, 1e-6, 99, UpdateNone)
	_, ok := empty.Explain(tx)
	require.False(t, ok, "an empty filter explained a match")
	all, _ := NewFilterFromBits(nil, 0, 0, UpdateNone)
	m, ok := all.Explain(tx)
	require.True(t, ok, "zero-length filter: %+v %v", m, ok)
	require.Equal(t, MatchAll, m.Kind, "zero-length filter: %+v %v", m, ok)
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
		require.NoError(t, err)
		_, ok := f.Explain(tx)
		require.Equal(t, f.MatchTx(tx), ok, "Explain %v, MatchTx %v", ok, f.MatchTx(tx))
	})
}
