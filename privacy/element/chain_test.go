package element_test

import (
	"context"
	"slices"
	"testing"

	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/internal/synth"
	"github.com/bloomwatch/bloomwatch/privacy/internal/testkit"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

func TestOutputCandidates(t *testing.T) {
	k1, k2 := testkit.NewKey(1), testkit.NewKey(2)
	multisig, _ := txscript.NewScriptBuilder().AddOp(txscript.OP_1).AddData(k1.PubKey).AddData(k2.PubKey).
		AddOp(txscript.OP_2).AddOp(txscript.OP_CHECKMULTISIG).Script()
	p2pk, _ := txscript.NewScriptBuilder().AddData(k1.PubKey).AddOp(txscript.OP_CHECKSIG).Script()
	p2wpkh, _ := txscript.NewScriptBuilder().AddOp(txscript.OP_0).AddData(k1.Hash160).Script()
	p2sh, _ := txscript.NewScriptBuilder().AddOp(txscript.OP_HASH160).AddData(k2.Hash160).AddOp(txscript.OP_EQUAL).Script()
	nulldata, _ := txscript.NewScriptBuilder().AddOp(txscript.OP_RETURN).AddData([]byte("hello")).Script()
	tests := []struct {
		name   string
		script []byte
		want   [][][]byte
	}{
		{"p2pkh", synth.P2PKH(k1.Hash160), [][][]byte{{k1.Hash160}}},
		{"p2wpkh shares the hash160", p2wpkh, [][][]byte{{k1.Hash160}}},
		{"p2sh", p2sh, [][][]byte{{k2.Hash160}}},
		{"p2pk keyed by hash160", p2pk, [][][]byte{{k1.Hash160, k1.PubKey}}},
		{"bare multisig: every key", multisig, [][][]byte{{k1.Hash160, k1.PubKey}, {k2.Hash160, k2.PubKey}}},
		{"null data pays no one", nulldata, nil},
		{"garbage", []byte{0x4c}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := element.OutputCandidates(tc.script)
			require.Len(t, got, len(tc.want), "got %d candidates, want %d", len(got), len(tc.want))
			for i := range got {
				require.True(t, got[i].Equal(element.Candidate{Forms: tc.want[i]}), "candidate %d = %x, want %x", i, got[i].Forms, tc.want[i])
			}
		})
	}
	require.Equal(t, btcutil.Hash160(k1.PubKey), k1.Hash160, "synthetic key hash is not hash160(pubkey)")
}

func TestChainUniverse(t *testing.T) {
	a, b, c := testkit.NewKey(1), testkit.NewKey(2), testkit.NewKey(3)
	var ch testkit.Chain
	fund := testkit.Pay(nil, nil, a, b)
	ch.Block(fund)
	// a spends, revealing its public key; the output pays c and b again.
	spend := testkit.Pay([]wire.OutPoint{{Hash: fund.TxHash(), Index: 0}}, []testkit.Key{a}, c, b)
	ch.Block(spend)
	u, err := element.ChainUniverse(context.Background(), ch.Blocks, -1)
	require.NoError(t, err)
	want := []element.Candidate{{Forms: [][]byte{a.Hash160, a.PubKey}}, {Forms: [][]byte{b.Hash160}}, {Forms: [][]byte{c.Hash160}, FirstSeen: 1}}
	require.Len(t, u, len(want), "universe %d candidates, want %d (coinbase OP_TRUE pays no one)", len(u), len(want))
	for i := range want {
		require.True(t, u[i].Equal(want[i]), "candidate %d = %x, want %x", i, u[i].Forms, want[i].Forms)
	}
	upTo0, err := element.ChainUniverse(context.Background(), ch.Blocks, 0)
	require.NoError(t, err, "up to height 0: %v", upTo0)
	require.Len(t, upTo0, 2, "up to height 0: %v, %v", upTo0, err)
	require.Len(t, upTo0[0].Forms, 1, "up to height 0: %v, %v", upTo0, err)
	_, err = (element.MemChain{}).BlockAt(0)
	require.ErrorIs(t, err, element.ErrChain, "err = %v, want ErrChain", err)
}

func TestWalletTxs(t *testing.T) {
	w, change, stranger := testkit.NewKey(50), testkit.NewKey(51), testkit.NewKey(52)
	var ch testkit.Chain
	fund := testkit.Pay(nil, nil, w)
	ch.Block(fund, testkit.Pay(nil, nil, stranger))
	// The wallet spends w's output to the stranger with change; the
	// stranger then spends what it was paid, which is not the wallet's.
	spend := testkit.Pay([]wire.OutPoint{{Hash: fund.TxHash()}}, []testkit.Key{w}, stranger, change)
	ch.Block(spend)
	ch.Block(testkit.Pay([]wire.OutPoint{{Hash: spend.TxHash()}}, []testkit.Key{stranger}, stranger))
	truth := element.NewSetFromCandidates([]element.Candidate{{Forms: [][]byte{w.Hash160}}, {Forms: [][]byte{change.Hash160}}})
	wt := element.NewWalletTxs(truth)
	want := [][]bool{{false, true, false}, {false, true}, {false, false}}
	for h, b := range ch.Blocks {
		got := wt.Block(b)
		require.True(t, slices.Equal(got, want[h]), "block %d: %v, want %v", h, got, want[h])
	}
	require.True(t, wt.PaysWallet(synth.P2PKH(w.Hash160)), "PaysWallet does not tell the wallet's script from a stranger's")
	require.False(t, wt.PaysWallet(synth.P2PKH(stranger.Hash160)), "PaysWallet does not tell the wallet's script from a stranger's")
	got := element.NewWalletTxs(nil).Block(ch.Blocks[0])
	require.False(t, slices.Contains(got, true), "no truth marked %v", got)
}
