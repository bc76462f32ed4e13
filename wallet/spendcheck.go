package wallet

import (
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// Errors of CheckSpend, each inside an *InputError.
var (
	// ErrNotWalletCoin is returned for a transaction spending an output
	// that is not an unspent coin of the wallet.
	ErrNotWalletCoin = errors.New("wallet: spends a coin the wallet does not watch")
	// ErrTxNotFinal is returned for a transaction with an unsigned input.
	ErrTxNotFinal = errors.New("wallet: transaction not final")
	// ErrTxInvalid is returned for a transaction that is malformed or
	// whose scripts do not verify.
	ErrTxInvalid = errors.New("wallet: invalid transaction")
)

// CheckSpend checks a signed transaction before it is broadcast: it is
// well formed (btcd's sanity check), every input spends an unspent coin
// of the wallet (confirmed or not, also one a pending transaction
// spends: a replacement), and every input's scripts run with btcd's
// engine against the output it spends as the wallet stored it. The wallet
// never broadcasts what it cannot account for, and a transaction that
// would fail at every peer is refused here, before a peer sees it.
func (w *Wallet) CheckSpend(tx *wire.MsgTx) error {
	if tx == nil {
		return inputErr("transaction", "", fmt.Errorf("%w: none", ErrTxInvalid))
	}
	txid := tx.TxHash().String()
	if err := blockchain.CheckTransactionSanity(btcutil.NewTx(tx)); err != nil {
		return inputErr("transaction", txid, fmt.Errorf("%w: %v", ErrTxInvalid, err))
	}
	unlock, err := w.enter()
	if err != nil {
		return err
	}
	defer unlock()
	prevs := make([]*wire.TxOut, len(tx.TxIn))
	err = w.view(func(b readBuckets) error {
		for i, in := range tx.TxIn {
			op := in.PreviousOutPoint
			if _, ok := w.watch.outpoints[op]; !ok {
				return inputErr("transaction", txid, fmt.Errorf("%w: input %d spends %v, not an unspent coin of this wallet", ErrNotWalletCoin, i, op))
			}
			d, err := w.txStore.TxDetails(b.tm, &op.Hash)
			if err != nil || d == nil || int(op.Index) >= len(d.MsgTx.TxOut) {
				return fmt.Errorf("%w: coin %v: %v", ErrCorrupt, op, errOrMissing(err))
			}
			prevs[i] = d.MsgTx.TxOut[op.Index]
			if len(in.SignatureScript) == 0 && len(in.Witness) == 0 {
				return inputErr("transaction", txid, fmt.Errorf("%w: input %d is not signed", ErrTxNotFinal, i))
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	fetcher := txscript.NewMultiPrevOutFetcher(nil)
	for i, in := range tx.TxIn {
		fetcher.AddPrevOut(in.PreviousOutPoint, prevs[i])
	}
	hashes := txscript.NewTxSigHashes(tx, fetcher)
	for i := range tx.TxIn {
		vm, err := txscript.NewEngine(prevs[i].PkScript, tx, i, txscript.StandardVerifyFlags, nil, hashes, prevs[i].Value, fetcher)
		if err == nil {
			err = vm.Execute()
		}
		if err != nil {
			return inputErr("transaction", txid, fmt.Errorf("%w: input %d does not verify: %v", ErrTxInvalid, i, err))
		}
	}
	return nil
}
