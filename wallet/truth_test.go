package wallet

import (
	"testing"

	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// TestTruthElements checks the wallet's truth for `privacy analyze
// --truth`: the element of every used address, once, in watch order, with
// the height of its first confirmed payment; no unused address (in the
// filter, on no chain); a payment seen only in the mempool gives no
// height.
func TestTruthElements(t *testing.T) {
	w, keys := newRegtestWallet(t)
	f := &txFactory{}
	chain := newTestChain(f, 100)
	fund := f.tx(nil, output{keys.p2wpkh(extBranch, 0), 100_000})
	mustApply(t, w, chain.add(fund).filtered())
	chain.add() // an empty block
	again := f.tx(nil, output{keys.p2wpkh(extBranch, 3), 5_000}, output{keys.p2wpkh(extBranch, 0), 1_000})
	spend := f.tx([]wire.OutPoint{op(fund, 0)}, output{foreignScript(3), 60_000}, output{keys.p2wpkh(intBranch, 0), 39_000})
	for _, b := range chain.blocks[1:] {
		mustApply(t, w, b.filtered())
	}
	mustApply(t, w, chain.add(again, spend).filtered())
	_, err := w.ApplyMempoolTx(f.tx(nil, output{keys.p2wpkh(extBranch, 5), 2_000}))
	require.NoError(t, err)

	truth, err := w.TruthElements()
	require.NoError(t, err)
	push := func(script []byte) []byte {
		pushes, err := txscript.PushedData(script)
		require.NoError(t, err)
		return pushes[len(pushes)-1] // after OP_0
	}
	want := []TruthElement{
		{Element: push(keys.p2wpkh(extBranch, 0)), Address: scriptAddress(t, keys.p2wpkh(extBranch, 0)), FirstHeight: 100},
		{Element: push(keys.p2wpkh(extBranch, 3)), Address: scriptAddress(t, keys.p2wpkh(extBranch, 3)), FirstHeight: 102},
		{Element: push(keys.p2wpkh(extBranch, 5)), Address: scriptAddress(t, keys.p2wpkh(extBranch, 5)), FirstHeight: -1},
		{Element: push(keys.p2wpkh(intBranch, 0)), Address: scriptAddress(t, keys.p2wpkh(intBranch, 0)), FirstHeight: 102},
	}
	require.Equal(t, want, truth)
	counts, err := w.AddressCounts()
	require.NoError(t, err)
	require.Equal(t, counts.Used(), len(truth), "the truth is the used addresses: the meter's N")
	require.Greater(t, counts.Derived, len(truth))
}
