package wallet_test

import (
	"fmt"
	"log"
	"os"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"

	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// ExampleWallet_CreatePSBT builds an unsigned transaction for a hardware
// signer: a watch-only BIP84 wallet (the keyring's vpub) that received
// 0.01 BTC pays 0.0025 BTC at 2 sat/vB. The input carries the output it
// spends, the previous transaction and its key's derivation; the change
// goes to the first change address, recorded as handed out.
func ExampleWallet_CreatePSBT() {
	dir, err := os.MkdirTemp("", "wallet-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	params := &chaincfg.RegressionNetParams
	keys, err := testnet.NewKeyring(testnet.DemoSeed, params)
	if err != nil {
		log.Fatal(err)
	}
	vpub, err := keys.Xpub(testnet.PurposeBIP84)
	if err != nil {
		log.Fatal(err)
	}
	w, err := wallet.Create(dir, wallet.CreateConfig{Network: "regtest", Xpubs: []string{vpub}})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()

	// A block paying 0.01 BTC to the first receive address, as a light
	// node would hand it to the wallet.
	info, err := w.Receive(wallet.ReceiveOptions{})
	if err != nil {
		log.Fatal(err)
	}
	addr, _ := btcutil.DecodeAddress(info.Address, params)
	script, _ := txscript.PayToAddrScript(addr)
	pay := wire.NewMsgTx(2)
	pay.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: chainhash.Hash{1}}, nil, nil))
	pay.AddTxOut(wire.NewTxOut(1_000_000, script))
	c := &leakChain{}
	if _, err := w.ApplyBlock(c.mine([]*wire.MsgTx{pay})); err != nil {
		log.Fatal(err)
	}

	// Pay a P2WPKH address of someone else.
	to, _ := btcutil.NewAddressWitnessPubKeyHash(make([]byte, 20), params)
	res, err := w.CreatePSBT(wallet.PSBTRequest{
		Outputs: []wallet.PSBTOutput{{Address: to.EncodeAddress(), Amount: 250_000}},
		FeeRate: 2,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d input of %s, fee %d sat for %d vB\n", len(res.Inputs), res.Inputs[0].Amount, res.Fee, res.VSize)
	for _, o := range res.Outputs {
		if o.Change {
			fmt.Printf("change %s to change address %d\n", o.Amount, o.Index)
		}
	}
	in := res.Packet.Inputs[0]
	fmt.Printf("input: witness UTXO %t, previous transaction %t, key path %v\n",
		in.WitnessUtxo != nil, in.NonWitnessUtxo != nil, in.Bip32Derivation[0].Bip32Path)
	// Output:
	// 1 input of 0.01000000 BTC, fee 282 sat for 141 vB
	// change 0.00749718 BTC to change address 0
	// input: witness UTXO true, previous transaction true, key path [0 0]
}
