package testnet_test

import (
	"context"
	"fmt"
	"log"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"

	"github.com/bloomwatch/bloomwatch/testnet"
)

// Example shows a harness session: a regtest btcd on 127.0.0.1, a payment
// to the demo wallet, noise, a reorg that double-spends the payment, and a
// scenario chain with its truth.
func Example() {
	ctx := context.Background()
	h, err := testnet.New(ctx, testnet.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()

	key, err := testnet.NewKeyring(testnet.DemoSeed, h.Params())
	if err != nil {
		log.Fatal(err)
	}
	addr, _ := key.Address(testnet.PurposeBIP84, testnet.BranchExternal, 0)
	if _, err := h.PayAddress(addr, 250_000); err != nil {
		log.Fatal(err)
	}
	if _, err := h.Noise(5); err != nil {
		log.Fatal(err)
	}
	if _, err := h.Mine(1); err != nil {
		log.Fatal(err)
	}

	// A payment that a one-block reorg replaces with a double spend.
	script, _ := txscript.PayToAddrScript(addr)
	pay, _ := h.NewTx([]*wire.TxOut{wire.NewTxOut(btcutil.SatoshiPerBitcoin, script)})
	other := testnet.RandomScript(nil, testnet.KindP2TR)
	ds, _ := h.DoubleSpend(pay, []*wire.TxOut{wire.NewTxOut(50_000, other)})
	res, err := h.Reorg(ctx, 1, testnet.ReorgOptions{OrphanTxs: []*wire.MsgTx{pay}, WinnerTxs: []*wire.MsgTx{ds}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("orphaned", len(res.Orphaned), "new", len(res.New))

	truth, err := h.BuildChain(ctx, testnet.ChainSpec{
		Blocks: 20, TxsPerBlock: 3, Keyring: key, WatchAddrs: 5, SpendFraction: 0.4, Seed: 1,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("wallet txs", len(truth.Txs), "addresses", len(truth.Addresses))
	// Output:
	// orphaned 1 new 2
	// wallet txs 7 addresses 7
}
