package spv_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/watch/watchtest"
)

// exampleAddrs is how many receive addresses the example chain pays; the
// watcher watches as many receive and change addresses.
const exampleAddrs = 5

// Example syncs an in-memory watcher over BIP37 from a regtest btcd that
// the testnet package starts on 127.0.0.1, on a chain built from a fixed
// seed (payments to the watched addresses among other transactions, some
// of them spent later), and prints the height it synced to and its balance
// beside the chain's ground truth.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	h, err := testnet.New(ctx, testnet.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()
	key, err := testnet.NewKeyring(testnet.DemoSeed, h.Params())
	if err != nil {
		log.Fatal(err)
	}
	truth, err := h.BuildChain(ctx, testnet.ChainSpec{
		Blocks: 20, TxsPerBlock: 3, Keyring: key, WatchAddrs: exampleAddrs, SpendFraction: 0.4, Seed: 1,
	})
	if err != nil {
		log.Fatal(err)
	}

	// Watch the keyring's first P2WPKH receive and change scripts.
	var scripts [][]byte
	for branch := uint32(0); branch < 2; branch++ {
		for i := uint32(0); i < exampleAddrs; i++ {
			s, err := key.PkScript(testnet.PurposeBIP84, branch, i)
			if err != nil {
				log.Fatal(err)
			}
			scripts = append(scripts, s)
		}
	}
	w := watchtest.NewMemWatcher(truth.StartHeight+1, scripts...)

	dir, err := os.MkdirTemp("", "spv-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	network, err := netparams.Lookup("regtest")
	if err != nil {
		log.Fatal(err)
	}
	n, err := spv.New(spv.Config{
		Network: network, DataDir: dir, Watcher: w,
		Connect: []string{h.Node().P2PAddr()}, // 127.0.0.1 only
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := n.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer n.Stop()
	// WaitSynced returns once the watcher is at the best peer's tip; the
	// loop covers a peer that announced its tip before the last block.
	for n.Status().WatcherHeight < truth.TipHeight {
		if err := n.WaitSynced(ctx); err != nil {
			log.Fatal(err)
		}
		if n.Status().WatcherHeight < truth.TipHeight {
			time.Sleep(20 * time.Millisecond)
		}
	}

	fmt.Println("synced to height", n.Status().WatcherHeight)
	fmt.Println("balance", w.Balance(), "sat, the chain's truth", truth.Balance, "sat")
	// Output:
	// synced to height 452
	// balance 10444265 sat, the chain's truth 10444265 sat
}
