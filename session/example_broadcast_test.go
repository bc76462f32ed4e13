package session_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/psbt"

	"github.com/bloomwatch/bloomwatch/session"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// ExampleSession_Broadcast spends from a watch-only wallet with an
// external signer: build a PSBT from the wallet (CreatePSBT), have it
// signed elsewhere (here the testnet keyring stands for the hardware
// signer), and broadcast it through the session without naming the
// wallet: it goes over a fresh connection to a node that holds no filter
// of the wallet, and the filter peer relays it back, so the wallet shows
// it pending. The nodes are two regtest btcd on 127.0.0.1.
func ExampleSession_Broadcast() {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	h, err := testnet.New(ctx, testnet.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()
	other, err := h.StartPeer(ctx) // a second node, connected to the first
	if err != nil {
		log.Fatal(err)
	}
	key, err := testnet.NewKeyring(testnet.DemoSeed, h.Params())
	if err != nil {
		log.Fatal(err)
	}
	_, start, err := h.Node().BestBlock()
	if err != nil {
		log.Fatal(err)
	}
	addr, err := key.Address(testnet.PurposeBIP84, testnet.BranchExternal, 0)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := h.PayAddress(addr, 1_000_000); err != nil {
		log.Fatal(err)
	}
	if _, err := h.Mine(1); err != nil {
		log.Fatal(err)
	}
	if err := other.WaitSynced(ctx, h.Node()); err != nil {
		log.Fatal(err)
	}

	dir, err := os.MkdirTemp("", "session-broadcast-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	vpub, err := key.Xpub(testnet.PurposeBIP84)
	if err != nil {
		log.Fatal(err)
	}
	w, err := wallet.Create(dir, wallet.CreateConfig{Network: "regtest", Xpubs: []string{vpub}, Birthday: start + 1})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()
	// One filter peer (MaxPeers 1): the first node; the second is known
	// but holds no filter.
	s, err := session.New(session.Config{Wallet: w, Stderr: os.Stderr, LogLevel: slog.LevelError,
		Node: spv.Config{MaxPeers: 1, Connect: []string{h.Node().P2PAddr(), other.P2PAddr()}}})
	if err != nil {
		log.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer s.Stop()
	if err := s.Node().WaitSynced(ctx); err != nil {
		log.Fatal(err)
	}

	payee, _ := btcutil.NewAddressWitnessPubKeyHash(make([]byte, 20), h.Params())
	p, err := w.CreatePSBT(wallet.PSBTRequest{
		Outputs: []wallet.PSBTOutput{{Address: payee.EncodeAddress(), Amount: 300_000}}, FeeRate: 2,
	})
	if err != nil {
		log.Fatal(err)
	}
	// The external signer signs; finalizing and extracting give the
	// transaction.
	if err := key.SignPSBT(p.Packet); err != nil {
		log.Fatal(err)
	}
	if err := psbt.MaybeFinalizeAll(p.Packet); err != nil {
		log.Fatal(err)
	}
	tx, err := psbt.Extract(p.Packet)
	if err != nil {
		log.Fatal(err)
	}

	res, err := s.Broadcast(ctx, tx, spv.BroadcastOptions{})
	if err != nil {
		log.Fatal(err)
	}
	// (Which node is the filter peer depends on which connected first.)
	fmt.Println("sent to the node without the filter:", !res.AlsoFilterPeer)
	fmt.Println("relayed back by the filter peer:", res.ConfirmedBy != "" && res.ConfirmedBy != res.SentTo)
	txs, err := w.Txs()
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range txs {
		if t.Txid == tx.TxHash() {
			fmt.Println("wallet: pending", t.Height == -1, "delta", t.Delta, "sat")
		}
	}
	// Output:
	// sent to the node without the filter: true
	// relayed back by the filter peer: true
	// wallet: pending true delta -300282 sat
}
