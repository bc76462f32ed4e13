package session_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg/chainhash"

	"github.com/bloomwatch/bloomwatch/session"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// Example is what a wallet developer writes to sync a watch-only wallet
// over BIP37: open (or create) the wallet of a data dir from an output
// descriptor, run a session against full nodes until it is at their tip,
// and read the summary. Here the full node is a regtest btcd that the
// testnet package starts on 127.0.0.1, with a chain paying a BIP84 account
// among other users' transactions.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// A local btcd and a chain with payments to the account (127.0.0.1 only).
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
		Blocks: 30, TxsPerBlock: 4, Keyring: key, Purpose: testnet.PurposeBIP84,
		WatchAddrs: 6, SpendFraction: 0.3, Seed: 7,
	})
	if err != nil {
		log.Fatal(err)
	}

	// The account as a descriptor: wpkh(tpub.../<0;1>/*), receive and
	// change branches. (The keyring hands out SLIP-132 vpubs; a
	// descriptor takes the plain BIP32 version.)
	vpub, err := key.Xpub(testnet.PurposeBIP84)
	if err != nil {
		log.Fatal(err)
	}
	acct, err := hdkeychain.NewKeyFromString(vpub)
	if err != nil {
		log.Fatal(err)
	}
	if acct, err = acct.CloneWithVersion(h.Params().HDPublicKeyID[:]); err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "session-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	w, _, err := session.OpenWallet(dir, wallet.CreateConfig{
		Network: "regtest", Birthday: truth.StartHeight + 1,
		Descriptors: []string{"wpkh(" + acct.String() + "/<0;1>/*)"},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()

	// Sync until the wallet is at the peer's tip; no UI, no driver.
	s, err := session.Run(ctx, session.Config{
		Wallet:      w,
		Node:        spv.Config{Connect: []string{h.Node().P2PAddr()}},
		UntilSynced: true,
		Stderr:      discard{},
	}, nil, nil)
	if err != nil {
		log.Fatal(err)
	}
	sum, err := s.Summary()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("at the tip:", sum.TipHeight == truth.TipHeight)
	fmt.Println("transactions = truth:", len(sum.Txs) == len(truth.Txs))
	fmt.Println("unspent outputs = truth:", len(sum.UTXOs) == len(truth.UTXOs))
	fmt.Println("balance = truth:", sum.BalanceSat == truth.Balance)
	// Output:
	// at the tip: true
	// transactions = truth: true
	// unspent outputs = truth: true
	// balance = truth: true
}

// discard swallows the session's log.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// Example_events is how a program follows a sync as it happens: take
// Session.Events between New and Start (every event from the first on),
// read them, and stop at the tip. Without a dashboard the channel is a
// subscription to the light node that queues without bound, so a slow
// reader never stalls the sync.
func Example_events() {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// A local btcd on 127.0.0.1 with a chain paying a BIP84 account.
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
		Blocks: 20, TxsPerBlock: 4, Keyring: key, Purpose: testnet.PurposeBIP84,
		WatchAddrs: 5, SpendFraction: 0.3, Seed: 11,
	})
	if err != nil {
		log.Fatal(err)
	}
	vpub, err := key.Xpub(testnet.PurposeBIP84)
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "session-events-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	w, _, err := session.OpenWallet(dir, wallet.CreateConfig{
		Network: "regtest", Birthday: truth.StartHeight + 1, Xpubs: []string{vpub},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()

	s, err := session.New(session.Config{Wallet: w, Node: spv.Config{Connect: []string{h.Node().P2PAddr()}}, Stderr: discard{}})
	if err != nil {
		log.Fatal(err)
	}
	events := s.Events() // before Start: no event is missed
	if err := s.Start(ctx); err != nil {
		log.Fatal(err)
	}
	filters, blocks := 0, 0
	ours := map[chainhash.Hash]bool{}
follow:
	for {
		select {
		case ev := <-events:
			switch ev := ev.(type) {
			case spv.FilterLoaded: // the filter a peer received, with its transcript record
				filters++
			case spv.BlockProcessed:
				blocks++
			case spv.MatchedTx:
				if ev.Relevant {
					ours[ev.Txid] = true
				}
			case spv.SyncDone:
				if ev.Height == truth.TipHeight {
					break follow
				}
			}
		case <-ctx.Done():
			log.Fatal(ctx.Err())
		}
	}
	if err := s.Stop(); err != nil {
		log.Fatal(err)
	}
	fmt.Println("filters sent:", filters > 0)
	fmt.Println("blocks processed:", blocks >= int(truth.TipHeight-truth.StartHeight))
	fmt.Println("wallet transactions seen = truth:", len(ours) == len(truth.Txs))
	// Output:
	// filters sent: true
	// blocks processed: true
	// wallet transactions seen = truth: true
}
