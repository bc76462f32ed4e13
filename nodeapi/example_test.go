package nodeapi_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/btcsuite/btcd/chaincfg"

	"github.com/bloomwatch/bloomwatch/nodeapi"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// Example is a client of a running node: given the data dir of a `bloomwatch
// sync` (or `bloomwatch demo`), Dial reads the address and the cookie the
// node wrote there and checks it answers; the client then reads the
// balance and hands out a receive address from the node's wallet. Here the
// node's side is a Server on a fresh regtest wallet, as sync starts it.
func Example() {
	ctx := context.Background()

	// The node's side: what `bloomwatch sync` does once its node runs.
	dir, err := os.MkdirTemp("", "nodeapi-example-*")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	key, err := testnet.NewKeyring(testnet.DemoSeed, &chaincfg.RegressionNetParams)
	if err != nil {
		log.Fatal(err)
	}
	vpub, err := key.Xpub(testnet.PurposeBIP84)
	if err != nil {
		log.Fatal(err)
	}
	w, err := wallet.Create(dir, wallet.CreateConfig{Network: "regtest", Xpubs: []string{vpub}})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()
	srv, err := nodeapi.Start(nodeapi.Config{Wallet: w})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	// The client's side: everything it needs is the data dir.
	c, err := nodeapi.Dial(ctx, dir)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	bal, err := c.Balance(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s wallet, synced to height %d, confirmed %d sat\n", bal.Network, bal.SyncedHeight, int64(bal.Balance.Confirmed))
	addr, err := c.Receive(ctx, wallet.ReceiveOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("pay", addr.Address, "(index", addr.Index, "of", addr.From+")")

	// Any method by name, as docs/API.md lists them.
	var st nodeapi.StatusInfo
	if err := c.Call(ctx, nodeapi.MethodStatus, nil, &st); err != nil {
		log.Fatal(err)
	}
	fmt.Println("methods:", st.Methods)
	// Output:
	// regtest wallet, synced to height -1, confirmed 0 sat
	// pay bcrt1qu6dhascr59kr7qzmtf8lg6qrg6f46yzq9ztcxg (index 0 of m/84'/1'/0)
	// methods: [status wallet.addresses wallet.balance wallet.psbt wallet.receive wallet.stats wallet.truth wallet.txs wallet.utxos]
}
