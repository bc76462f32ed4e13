package session_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/psbt"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"

	"github.com/bloomwatch/bloomwatch/session"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// sentMessages parses the bytes a client sent on one connection (v1
// transport) into its messages.
func sentMessages(t *testing.T, b []byte, params *chaincfg.Params) []wire.Message {
	t.Helper()
	r := bytes.NewReader(b)
	var out []wire.Message
	for {
		_, msg, _, err := wire.ReadMessageWithEncodingN(r, wire.ProtocolVersion, params.Net, wire.WitnessEncoding)
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return out
		}
		if err != nil {
			var me *wire.MessageError
			if errors.As(err, &me) {
				continue // a command this btcd does not know: skip it
			}
			t.Fatalf("parse the client's stream: %v", err)
		}
		out = append(out, msg)
	}
}

// carries reports whether msgs hold txid: a tx message of it or an inv
// announcing it.
func carries(msgs []wire.Message, txid chainhash.Hash) (tx, inv bool, filterload bool) {
	for _, m := range msgs {
		switch m := m.(type) {
		case *wire.MsgTx:
			tx = tx || m.TxHash() == txid
		case *wire.MsgInv:
			for _, iv := range m.InvList {
				inv = inv || iv.Hash == txid
			}
		case *wire.MsgFilterLoad:
			filterload = true
		}
	}
	return tx, inv, filterload
}

// TestBroadcastReachesFilterPeersOnlyByRelay runs a session of a BIP84
// wallet with two filter peers (btcd A and B) of three given, every
// connection through a SOCKS5 proxy on 127.0.0.1 that records what the
// client sends to each node; builds a PSBT from the wallet, signs it with
// the keyring as a hardware signer would and broadcasts it. The
// broadcast goes to the third node C over a connection of its own (its
// own SOCKS username, so its own Tor circuit) that loads no filter; the
// streams to A and B carry no tx and no inv of it (they saw it only by
// relay), the one to C carries it and no filterload; a filter peer other
// than C relays it back, A's mempool holds it, the wallet shows it
// pending, and the next block confirms it with the balance the chain
// says.
func TestBroadcastReachesFilterPeersOnlyByRelay(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three btcd")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	h := testnet.NewT(t, testnet.Options{})
	b, err := h.StartPeer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c, err := h.StartPeer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	params := h.Params()
	key, start, w := paidDemoWallet(ctx, t, h, b, c)
	proxy, err := testnet.StartSOCKS(testnet.SOCKSOptions{Record: true})
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	a := h.Node()
	s, err := session.New(session.Config{Wallet: w, PeerTimeout: time.Minute, Stderr: testWriter{t},
		Node: spv.Config{Connect: []string{a.P2PAddr(), b.P2PAddr(), c.P2PAddr()}, MaxPeers: 2, Proxy: proxy.Addr()}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	}()
	// Both filter connections up (a v2 attempt that falls back to v1
	// takes a moment), so the record covers both.
	for len(s.Node().Peers()) < 2 {
		select {
		case <-ctx.Done():
			t.Fatalf("filter peers: %v", s.Node().Peers())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := s.Node().WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	to, err := btcutil.NewAddressWitnessPubKeyHash(make([]byte, 20), params)
	if err != nil {
		t.Fatal(err)
	}
	res, err := w.CreatePSBT(wallet.PSBTRequest{Outputs: []wallet.PSBTOutput{{Address: to.EncodeAddress(), Amount: 300_000}}, FeeRate: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := key.SignPSBT(res.Packet); err != nil {
		t.Fatal(err)
	}
	if err := psbt.MaybeFinalizeAll(res.Packet); err != nil {
		t.Fatal(err)
	}
	tx, err := psbt.Extract(res.Packet)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.CheckSpend(tx); err != nil {
		t.Fatal(err)
	}
	txid := tx.TxHash()

	br, err := s.Broadcast(ctx, tx, spv.BroadcastOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("broadcast %v: sent to %s via %s, confirmed by %s after %v, %d bytes from the target",
		txid, br.SentTo, br.Via, br.ConfirmedBy, br.Elapsed, br.BytesReceived)
	// Two connection slots over three addresses: the filter peers are
	// two of them (a slot that reconnects moves on), the target the third.
	filterPeers := map[string]bool{}
	for _, p := range s.Node().Peers() {
		filterPeers[p.Addr] = true
	}
	if br.AlsoFilterPeer || filterPeers[br.SentTo] || len(filterPeers) != 2 {
		t.Fatalf("sent to %s (filter peer too: %v), filter peers %v: want the node that is no filter peer", br.SentTo, br.AlsoFilterPeer, filterPeers)
	}
	if br.ConfirmedBy == br.SentTo || !filterPeers[br.ConfirmedBy] || br.Mined {
		t.Fatalf("confirmed by %q (mined %v), want a relay by a filter peer", br.ConfirmedBy, br.Mined)
	}
	if br.BytesReceived == 0 || br.BytesReceived > spv.MaxBroadcastBytes {
		t.Fatalf("%d bytes from the target", br.BytesReceived)
	}
	pool, err := a.RPC().GetRawMempool()
	if err != nil {
		t.Fatal(err)
	}
	inPool := false
	for _, h := range pool {
		inPool = inPool || *h == txid
	}
	if !inPool {
		t.Fatalf("%v is not in A's mempool (%d txs)", txid, len(pool))
	}

	// What each node saw from the client, from the proxy's record.
	users := map[string]string{}
	for _, conn := range proxy.Conns() {
		if conn.Err != "" {
			continue
		}
		msgs := sentMessages(t, conn.Sent, params)
		gotTx, gotInv, loaded := carries(msgs, txid)
		if loaded {
			// A filter connection: the node never sends it the
			// transaction, its peer learns of it by relay only.
			if gotTx || gotInv {
				t.Errorf("filter connection to %s carried the transaction (tx %v, inv %v)", conn.Dest, gotTx, gotInv)
			}
			users[conn.User] = conn.Dest
		}
	}
	sent := 0
	for _, conn := range proxy.Conns() {
		gotTx, gotInv, loaded := carries(sentMessages(t, conn.Sent, params), txid)
		if !gotTx && !gotInv {
			continue
		}
		sent++
		if conn.Dest != br.SentTo || loaded || !gotTx || !gotInv {
			t.Errorf("the transaction went to %s (filter loaded %v, tx %v, inv %v), want only the broadcast connection to %s",
				conn.Dest, loaded, gotTx, gotInv, br.SentTo)
		}
		if d, shared := users[conn.User]; shared || conn.User == "" {
			t.Errorf("the broadcast connection's SOCKS username %q is %s's", conn.User, d)
		}
	}
	if sent != 1 || len(users) < 2 {
		t.Fatalf("connections carrying the transaction: %d; filter connections seen through the proxy: %v", sent, users)
	}

	// The wallet shows it pending; a block confirms it.
	pending := func() (int32, bool) {
		txs, err := w.Txs()
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range txs {
			if s.Txid == txid {
				return s.Height, true
			}
		}
		return 0, false
	}
	if height, ok := pending(); !ok || height != -1 {
		t.Fatalf("wallet: %v held %v at height %d, want pending", txid, ok, height)
	}
	bal, err := w.Balance()
	if err != nil {
		t.Fatal(err)
	}
	if bal.PendingSpent != 1_000_000 {
		t.Fatalf("pending spent %v, want the coin", bal.PendingSpent)
	}
	if _, err := h.Mine(1); err != nil {
		t.Fatal(err)
	}
	_, tip, err := a.BestBlock()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if height, ok := pending(); ok && height == tip {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the block never confirmed the transaction in the wallet")
		case <-time.After(50 * time.Millisecond):
		}
	}
	truth, err := testnet.ScanTruth(ctx, a, key, testnet.PurposeBIP84, start+1)
	if err != nil {
		t.Fatal(err)
	}
	bal, err = w.Balance()
	if err != nil {
		t.Fatal(err)
	}
	if int64(bal.Confirmed) != truth.Balance || bal.PendingSpent != 0 {
		t.Fatalf("balance %+v, truth %d", bal, truth.Balance)
	}
}

// TestBroadcastOverV2 runs the broadcast against btcd speaking BIP324
// (--v2transport): the broadcast connection follows the node's transport
// policy (auto: v2 with explicit peers), so it is encrypted, and the
// transaction's bytes appear nowhere in what the client sent through the
// recording proxy, while the filter peer still relays it back.
func TestBroadcastOverV2(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two btcd")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	h := testnet.NewT(t, testnet.Options{Args: []string{"--v2transport"}})
	other, err := h.StartPeer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	params := h.Params()
	key, _, w := paidDemoWallet(ctx, t, h, other)
	proxy, err := testnet.StartSOCKS(testnet.SOCKSOptions{Record: true})
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	s, err := session.New(session.Config{Wallet: w, PeerTimeout: time.Minute, Stderr: testWriter{t},
		Node: spv.Config{Connect: []string{h.Node().P2PAddr(), other.P2PAddr()}, MaxPeers: 1, Proxy: proxy.Addr()}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	}()
	if err := s.Node().WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	to, err := btcutil.NewAddressWitnessPubKeyHash(make([]byte, 20), params)
	if err != nil {
		t.Fatal(err)
	}
	res, err := w.CreatePSBT(wallet.PSBTRequest{Outputs: []wallet.PSBTOutput{{Address: to.EncodeAddress(), Amount: 300_000}}, FeeRate: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := key.SignPSBT(res.Packet); err != nil {
		t.Fatal(err)
	}
	if err := psbt.MaybeFinalizeAll(res.Packet); err != nil {
		t.Fatal(err)
	}
	tx, err := psbt.Extract(res.Packet)
	if err != nil {
		t.Fatal(err)
	}
	br, err := s.Broadcast(ctx, tx, spv.BroadcastOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if br.Transport != "v2" || br.AlsoFilterPeer || br.ConfirmedBy == br.SentTo {
		t.Fatalf("broadcast %+v: want a v2 connection to the node without the filter, relayed back by the other", br)
	}
	var raw bytes.Buffer
	if err := tx.Serialize(&raw); err != nil {
		t.Fatal(err)
	}
	// The transaction's outputs, serialized, are in no stream in clear.
	needle := raw.Bytes()[len(raw.Bytes())-40:]
	for _, conn := range proxy.Conns() {
		if bytes.Contains(conn.Sent, needle) {
			t.Errorf("the transaction left in clear on the connection to %s", conn.Dest)
		}
	}
	t.Logf("broadcast over %s to %s, relayed back by %s after %v", br.Transport, br.SentTo, br.ConfirmedBy, br.Elapsed)
}

// paidDemoWallet pays 1,000,000 sat to the demo keyring's first BIP84
// receive address in a new block, waits until the peers have it, and
// creates the watch-only wallet of that account with its birthday just
// above the height before the payment (closed at cleanup). It returns the
// keyring (the signer), that height and the wallet.
func paidDemoWallet(ctx context.Context, t *testing.T, h *testnet.Harness, peers ...*testnet.Node) (*testnet.Keyring, int32, *wallet.Wallet) {
	t.Helper()
	key, err := testnet.NewKeyring(testnet.DemoSeed, h.Params())
	if err != nil {
		t.Fatal(err)
	}
	_, start, err := h.Node().BestBlock()
	if err != nil {
		t.Fatal(err)
	}
	addr, err := key.Address(testnet.PurposeBIP84, testnet.BranchExternal, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.PayAddress(addr, 1_000_000); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Mine(1); err != nil {
		t.Fatal(err)
	}
	for _, n := range peers {
		if err := n.WaitSynced(ctx, h.Node()); err != nil {
			t.Fatal(err)
		}
	}
	vpub, err := key.Xpub(testnet.PurposeBIP84)
	if err != nil {
		t.Fatal(err)
	}
	w, err := wallet.Create(t.TempDir(), wallet.CreateConfig{Network: "regtest", Xpubs: []string{vpub}, Birthday: start + 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return key, start, w
}
