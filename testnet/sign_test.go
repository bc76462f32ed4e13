package testnet

import (
	"math"
	"math/rand"
	"testing"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// verifyTx runs every input of tx through btcd's script engine with all
// the standard verification flags.
func verifyTx(t *testing.T, tx *wire.MsgTx, ins []prevOut) {
	t.Helper()
	fetcher := txscript.NewMultiPrevOutFetcher(nil)
	for _, in := range ins {
		fetcher.AddPrevOut(in.op, wire.NewTxOut(in.value, in.script))
	}
	hashes := txscript.NewTxSigHashes(tx, fetcher)
	for i, in := range ins {
		vm, err := txscript.NewEngine(in.script, tx, i, txscript.StandardVerifyFlags, nil, hashes, in.value, fetcher)
		require.NoError(t, err)
		require.NoError(t, vm.Execute(), "input %d (%s)", i, txscript.GetScriptClass(in.script))
	}
}

// TestSignTxAllKinds signs a transaction spending one output of each
// keyring address type and the funder's, checks it with the script
// engine, and checks that estimateVsize bounds the real vsize.
func TestSignTxAllKinds(t *testing.T) {
	params := &chaincfg.RegressionNetParams
	key, err := NewKeyring(DemoSeed, params)
	require.NoError(t, err)
	f, err := newFunder(params)
	require.NoError(t, err)
	tx := wire.NewMsgTx(wire.TxVersion)
	var ins []prevOut
	var scripts [][]byte
	for i, purpose := range []uint32{PurposeBIP44, PurposeBIP49, PurposeBIP84, PurposeBIP86} {
		script, err := key.PkScript(purpose, BranchExternal, uint32(i))
		require.NoError(t, err)
		priv, err := key.PrivKey(purpose, BranchExternal, uint32(i))
		require.NoError(t, err)
		op := wire.OutPoint{Hash: chainhash.Hash{byte(i + 1)}, Index: uint32(i)}
		ins = append(ins, prevOut{op: op, value: int64(10_000 * (i + 1)), script: script, key: priv})
		scripts = append(scripts, script)
	}
	op := wire.OutPoint{Hash: chainhash.Hash{9}}
	ins = append(ins, prevOut{op: op, value: 77_777, script: f.script, key: funderPriv()})
	scripts = append(scripts, f.script)
	for _, in := range ins {
		tx.AddTxIn(wire.NewTxIn(&in.op, nil, nil))
	}
	r := rand.New(rand.NewSource(1))
	for _, kind := range NoiseKinds {
		tx.AddTxOut(wire.NewTxOut(1_000, RandomScript(r, kind)))
	}
	require.NoError(t, signTx(tx, ins))
	verifyTx(t, tx, ins)
	require.GreaterOrEqual(t, estimateVsize(scripts, tx.TxOut), vsize(tx))
	require.Less(t, estimateVsize(scripts, tx.TxOut), vsize(tx)+10, "estimate stays tight")

	// A tampered output breaks every signature.
	tx.TxOut[0].Value++
	fetcher := txscript.NewMultiPrevOutFetcher(nil)
	for _, in := range ins {
		fetcher.AddPrevOut(in.op, wire.NewTxOut(in.value, in.script))
	}
	vm, err := txscript.NewEngine(ins[0].script, tx, 0, txscript.StandardVerifyFlags, nil, txscript.NewTxSigHashes(tx, fetcher), ins[0].value, fetcher)
	require.NoError(t, err)
	require.Error(t, vm.Execute())
}

// TestRandomScriptKinds checks each kind's class and that scripts differ.
func TestRandomScriptKinds(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	want := map[string]txscript.ScriptClass{
		KindP2PKH: txscript.PubKeyHashTy, KindP2WPKH: txscript.WitnessV0PubKeyHashTy,
		KindP2SH: txscript.ScriptHashTy, KindP2TR: txscript.WitnessV1TaprootTy,
	}
	for kind, class := range want {
		a, b := RandomScript(r, kind), RandomScript(r, kind)
		require.Equal(t, class, txscript.GetScriptClass(a), kind)
		require.NotEqual(t, a, b)
	}
}

// TestFunderCoins covers coin selection, coinbase maturity, change,
// unapply and double-spend construction without a node.
func TestFunderCoins(t *testing.T) {
	params := &chaincfg.RegressionNetParams
	f, err := newFunder(params)
	require.NoError(t, err)
	out := []*wire.TxOut{wire.NewTxOut(50_000, RandomScript(rand.New(rand.NewSource(1)), KindP2PKH))}
	_, err = f.build(out)
	require.ErrorIs(t, err, ErrInsufficientFunds)

	// A coinbase at height 1 matures when the next block is at 101.
	cb := wire.NewMsgTx(wire.TxVersion)
	cb.AddTxIn(wire.NewTxIn(&wire.OutPoint{Index: wire.MaxPrevOutIndex}, nil, nil))
	cb.AddTxOut(wire.NewTxOut(5_000_000_000, f.script))
	f.applyBlock(&wire.MsgBlock{Transactions: []*wire.MsgTx{cb}}, 1)
	f.tip = 99
	require.Zero(t, f.balance())
	_, err = f.build(out)
	require.ErrorIs(t, err, ErrInsufficientFunds)
	f.tip = 100
	require.Equal(t, int64(5_000_000_000), f.balance())

	tx, err := f.build(out)
	require.NoError(t, err)
	require.Len(t, tx.TxOut, 2, "payment and change")
	fee := 5_000_000_000 - 50_000 - tx.TxOut[1].Value
	require.GreaterOrEqual(t, fee, FeeRate*vsize(tx))
	require.Len(t, f.coins, 1, "only the change is left")
	verifyTx(t, tx, []prevOut{{op: tx.TxIn[0].PreviousOutPoint, value: 5_000_000_000, script: f.script, key: funderPriv()}})

	ds, err := f.conflict(tx, []*wire.TxOut{wire.NewTxOut(1_000_000, out[0].PkScript)})
	require.NoError(t, err)
	require.Equal(t, tx.TxIn[0].PreviousOutPoint, ds.TxIn[0].PreviousOutPoint)
	require.NotEqual(t, tx.TxHash(), ds.TxHash())

	// A child spending tx's change; undone newest first, only the
	// coinbase is left.
	child, err := f.build(out)
	require.NoError(t, err)
	require.Equal(t, tx.TxHash(), child.TxIn[0].PreviousOutPoint.Hash)
	f.unapply(child)
	f.unapply(tx)
	require.Len(t, f.coins, 1)
	_, ok := f.coins[tx.TxIn[0].PreviousOutPoint]
	require.True(t, ok, "coinbase is a coin again")
}

// TestPlanProperties checks BuildChain's plan for any spec: counts,
// first payments in index order, spends strictly after their payments.
func TestPlanProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		spec := ChainSpec{
			Blocks:          rapid.IntRange(1, 300).Draw(rt, "blocks"),
			WatchAddrs:      rapid.IntRange(0, 40).Draw(rt, "addrs"),
			PaymentsPerAddr: rapid.IntRange(1, 4).Draw(rt, "per"),
			SpendFraction:   rapid.Float64Range(0, 1).Draw(rt, "frac"),
		}
		r := rand.New(rand.NewSource(rapid.Int64().Draw(rt, "seed")))
		pays := plan(&spec, r)
		require.Len(rt, pays, spec.WatchAddrs*spec.PaymentsPerAddr, "%d payments, want %d", len(pays), spec.WatchAddrs*spec.PaymentsPerAddr)
		count := map[uint32]int{}
		next := uint32(0)
		spends, prevBlock := 0, 0
		for _, p := range pays {
			require.GreaterOrEqual(rt, p.block, prevBlock, "payment block %d out of order or range", p.block)
			require.Less(rt, p.block, spec.Blocks, "payment block %d out of order or range", p.block)
			prevBlock = p.block
			if count[p.addr] == 0 {
				require.Equal(rt, next, p.addr, "first payment to %d before %d", p.addr, next)
				next++
			}
			count[p.addr]++
			if p.spend >= 0 {
				spends++
				require.Greater(rt, p.spend, p.block, "spend at %d of a payment at %d", p.spend, p.block)
				require.Less(rt, p.spend, spec.Blocks, "spend at %d of a payment at %d", p.spend, p.block)
			}
		}
		for a, c := range count {
			require.Equal(rt, spec.PaymentsPerAddr, c, "address %d paid %d times", a, c)
		}
		spendable := 0
		for _, p := range pays {
			if p.block < spec.Blocks-1 {
				spendable++
			}
		}
		want := min(int(math.Round(float64(len(pays))*spec.SpendFraction)), spendable)
		require.Equal(rt, want, spends, "%d spends of %d payments (%d spendable) at fraction %v, want %d", spends, len(pays), spendable, spec.SpendFraction, want)
	})
}
