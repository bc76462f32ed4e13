package testnet

import (
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// blockTxids returns the txids of a block.
func blockTxids(t *testing.T, h *Harness, hash *chainhash.Hash) map[chainhash.Hash]bool {
	t.Helper()
	b, err := h.Node().RPC().GetBlock(hash)
	require.NoError(t, err)
	ids := make(map[chainhash.Hash]bool, len(b.Transactions))
	for _, tx := range b.Transactions {
		ids[tx.TxHash()] = true
	}
	return ids
}

func TestHarnessPayNoiseSpend(t *testing.T) {
	h := NewT(t, Options{})
	params := h.Params()
	_, tip, err := h.Node().BestBlock()
	require.NoError(t, err)
	require.Equal(t, SegwitHeight(params), tip)
	require.Positive(t, h.FunderBalance())

	key, err := NewKeyring(DemoSeed, params)
	require.NoError(t, err)

	// One payment to each address type, then noise, in one block.
	var pays []*wire.MsgTx
	for i, purpose := range []uint32{PurposeBIP44, PurposeBIP49, PurposeBIP84} {
		addr, err := key.Address(purpose, BranchExternal, uint32(i))
		require.NoError(t, err)
		tx, err := h.PayAddress(addr, btcutil.Amount(100_000*(i+1)))
		require.NoError(t, err)
		pays = append(pays, tx)
	}
	noise, err := h.Noise(12)
	require.NoError(t, err)
	require.Len(t, noise, 12)
	kinds := make(map[txscript.ScriptClass]int)
	multi := 0
	for _, tx := range noise {
		if len(tx.TxOut) > 2 {
			multi++
		}
		for _, o := range tx.TxOut {
			kinds[txscript.GetScriptClass(o.PkScript)]++
		}
	}
	require.Positive(t, multi, "some noise txs have several outputs")
	for _, c := range []txscript.ScriptClass{txscript.PubKeyHashTy, txscript.WitnessV0PubKeyHashTy,
		txscript.ScriptHashTy, txscript.WitnessV1TaprootTy} {
		require.Positive(t, kinds[c], "noise pays %v", c)
	}

	hashes, err := h.Mine(1)
	require.NoError(t, err)
	ids := blockTxids(t, h, hashes[0])
	for _, tx := range append(pays, noise...) {
		require.True(t, ids[tx.TxHash()], "tx %s mined", tx.TxHash())
	}

	// Spend all three payments with the keyring, to one foreign output.
	var ops []wire.OutPoint
	var total int64
	for _, tx := range pays {
		ops = append(ops, wire.OutPoint{Hash: tx.TxHash(), Index: 0})
		total += tx.TxOut[0].Value
	}
	dest := RandomScript(h.rng, KindP2TR)
	_, err = h.Spend(key, ops, []*wire.TxOut{wire.NewTxOut(total, dest)})
	require.ErrorIs(t, err, ErrFeeTooLow)
	spend, err := h.Spend(key, ops, []*wire.TxOut{wire.NewTxOut(total-5_000, dest)})
	require.NoError(t, err)
	hashes, err = h.Mine(1)
	require.NoError(t, err)
	require.True(t, blockTxids(t, h, hashes[0])[spend.TxHash()])
	for _, op := range ops {
		res, err := h.Node().RPC().GetTxOut(&op.Hash, op.Index, true)
		require.NoError(t, err)
		require.Nil(t, res, "outpoint %v spent", op)
	}

	// A script the keyring does not own.
	noiseOp := wire.OutPoint{Hash: noise[0].TxHash(), Index: 0}
	_, err = h.Spend(key, []wire.OutPoint{noiseOp}, nil)
	require.ErrorIs(t, err, ErrUnknownKey)
}

func TestHarnessCloseLeavesNoProcess(t *testing.T) {
	h, err := New(t.Context(), Options{Bare: true})
	require.NoError(t, err)
	pid := h.Node().PID()
	_, tip, err := h.Node().BestBlock()
	require.NoError(t, err)
	require.Zero(t, tip)
	_, err = h.Pay([]*wire.TxOut{wire.NewTxOut(10_000, RandomScript(h.rng, KindP2WPKH))})
	require.ErrorIs(t, err, ErrInsufficientFunds)
	require.NoError(t, h.Close())
	requireGone(t, pid)
	require.NoError(t, h.Close())
	_, err = h.Mine(1)
	require.ErrorIs(t, err, ErrStopped)
}

// TestPayDropsPhantomCoins builds a NewTx that is never broadcast, so
// the funder believes in its change: Pay must drop that unknown coin and
// succeed with another.
func TestPayDropsPhantomCoins(t *testing.T) {
	h := NewT(t, Options{})
	// A real 1 BTC coin of the funder's, confirmed.
	small, err := h.PayAddress(h.FunderAddress(), btcutil.SatoshiPerBitcoin)
	require.NoError(t, err)
	_, err = h.Mine(1)
	require.NoError(t, err)
	script := RandomScript(h.rng, KindP2WPKH)
	ghost, err := h.NewTx([]*wire.TxOut{wire.NewTxOut(10_000, script)})
	require.NoError(t, err)
	// Leave the funder only the ghost's change (the largest coin) and
	// the 1 BTC coin.
	h.mu.Lock()
	for op := range h.f.coins {
		if op.Hash != ghost.TxHash() && op != (wire.OutPoint{Hash: small.TxHash(), Index: 0}) {
			delete(h.f.coins, op)
		}
	}
	require.Len(t, h.f.coins, 2)
	h.mu.Unlock()

	tx, err := h.Pay([]*wire.TxOut{wire.NewTxOut(20_000, script)})
	require.NoError(t, err)
	require.Equal(t, wire.OutPoint{Hash: small.TxHash(), Index: 0}, tx.TxIn[0].PreviousOutPoint)
	h.mu.Lock()
	for op := range h.f.coins {
		require.NotEqual(t, ghost.TxHash(), op.Hash, "ghost change forgotten")
	}
	h.mu.Unlock()
	hashes, err := h.Mine(1)
	require.NoError(t, err)
	require.True(t, blockTxids(t, h, hashes[0])[tx.TxHash()])
}
