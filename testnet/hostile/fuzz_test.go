package hostile

import (
	"bytes"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/bip37"
)

// FuzzPeerTx decodes a `tx` message payload as a node reads it from a peer
// (witness encoding) and checks what BIP37 relevance promises about any
// transaction that decodes: the txid is the hash of the stripped
// serialization, re-encoding gives back the bytes read, a filter holding
// the txid, an input's previous outpoint, or a data push of a cleanly
// parsed output script matches it, and under BLOOM_UPDATE_ALL a match on
// an output's push adds that output's outpoint to the filter. The seed
// corpus (testdata/fuzz/FuzzPeerTx) holds real regtest transactions of
// every script kind the harness makes, segwit and legacy.
func FuzzPeerTx(f *testing.F) {
	f.Fuzz(func(t *testing.T, payload []byte) {
		var tx wire.MsgTx
		r := bytes.NewReader(payload)
		if err := tx.BtcDecode(r, wire.ProtocolVersion, wire.WitnessEncoding); err != nil {
			return
		}
		read := payload[:len(payload)-r.Len()]
		var enc, stripped bytes.Buffer
		require.NoError(t, tx.BtcEncode(&enc, wire.ProtocolVersion, wire.WitnessEncoding), "re-encode")
		require.True(t, bytes.Equal(enc.Bytes(), read), "re-encoding differs from the %d bytes read", len(read))
		require.NoError(t, tx.SerializeNoWitness(&stripped))
		txid := tx.TxHash()
		require.Equal(t, chainhash.DoubleHashH(stripped.Bytes()), txid, "txid is not the hash of the stripped serialization")

		newFilter := func(flags bip37.UpdateFlag) *bip37.Filter {
			f, err := bip37.NewFilter(4, 0.0001, 0x5eed, flags)
			require.NoError(t, err)
			return f
		}
		byTxid := newFilter(bip37.UpdateNone)
		byTxid.Add(txid[:])
		require.True(t, byTxid.MatchTx(&tx), "a filter holding the txid does not match")
		for i, in := range tx.TxIn {
			byPrev := newFilter(bip37.UpdateNone)
			byPrev.AddOutPoint(&in.PreviousOutPoint)
			require.True(t, byPrev.MatchTx(&tx), "a filter holding input %d's previous outpoint does not match", i)
		}
		for i, out := range tx.TxOut {
			push := firstPush(out.PkScript)
			if push == nil {
				continue
			}
			byPush := newFilter(bip37.UpdateAll)
			byPush.Add(push)
			require.True(t, byPush.MatchTxAndUpdate(&tx), "a filter holding output %d's push %x does not match", i, push)
			require.True(t, byPush.MatchesOutPoint(wire.NewOutPoint(&txid, uint32(i))), "UPDATE_ALL did not add outpoint %d after a match on its push", i)
		}
	})
}

// firstPush returns the first non-empty data push of script when the whole
// script parses, nil otherwise.
func firstPush(script []byte) []byte {
	var first []byte
	tok := txscript.MakeScriptTokenizer(0, script)
	for tok.Next() {
		if d := tok.Data(); len(d) > 0 && first == nil {
			first = d
		}
	}
	if tok.Err() != nil {
		return nil
	}
	return first
}
