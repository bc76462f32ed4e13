package session_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/psbt"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/session"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/testnet/socks"
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
			require.NoError(t, err, "parse the client's stream")
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
	require.NoError(t, err)
	c, err := h.StartPeer(ctx)
	require.NoError(t, err)
	params := h.Params()
	key, start, w := paidDemoWallet(ctx, t, h, b, c)
	proxy, err := socks.Start(socks.Options{Record: true})
	require.NoError(t, err)
	defer proxy.Close()
	a := h.Node()
	s, err := session.New(session.Config{Wallet: w, PeerTimeout: time.Minute, Stderr: testWriter{t},
		Node: spv.Config{Connect: []string{a.P2PAddr(), b.P2PAddr(), c.P2PAddr()}, MaxPeers: 2, Proxy: proxy.Addr()}})
	require.NoError(t, err)
	require.NoError(t, s.Start(ctx))
	defer func() {
		require.NoError(t, s.Stop())
	}()
	// Both filter connections up (a v2 attempt that falls back to v1
	// takes a moment), so the record covers both.
	for len(s.Node().Peers()) < 2 {
		select {
		case <-ctx.Done():
			require.FailNow(t, fmt.Sprintf("filter peers: %v", s.Node().Peers()))
		case <-time.After(20 * time.Millisecond):
		}
	}
	require.NoError(t, s.Node().WaitSynced(ctx))
	to, err := btcutil.NewAddressWitnessPubKeyHash(make([]byte, 20), params)
	require.NoError(t, err)
	res, err := w.CreatePSBT(wallet.PSBTRequest{Outputs: []wallet.PSBTOutput{{Address: to.EncodeAddress(), Amount: 300_000}}, FeeRate: 2})
	require.NoError(t, err)
	require.NoError(t, key.SignPSBT(res.Packet))
	require.NoError(t, psbt.MaybeFinalizeAll(res.Packet))
	tx, err := psbt.Extract(res.Packet)
	require.NoError(t, err)
	require.NoError(t, w.CheckSpend(tx))
	txid := tx.TxHash()

	br, err := s.Broadcast(ctx, tx, spv.BroadcastOptions{})
	require.NoError(t, err)
	t.Logf("broadcast %v: sent to %s via %s, confirmed by %s after %v, %d bytes from the target",
		txid, br.SentTo, br.Via, br.ConfirmedBy, br.Elapsed, br.BytesReceived)
	// Two connection slots over three addresses: the filter peers are
	// two of them (a slot that reconnects moves on), the target the third.
	filterPeers := map[string]bool{}
	for _, p := range s.Node().Peers() {
		filterPeers[p.Addr] = true
	}
	require.False(t, br.AlsoFilterPeer, "sent to %s (filter peer too: %v), filter peers %v: want the node that is no filter peer", br.SentTo, br.AlsoFilterPeer, filterPeers)
	require.False(t, filterPeers[br.SentTo], "sent to %s (filter peer too: %v), filter peers %v: want the node that is no filter peer", br.SentTo, br.AlsoFilterPeer, filterPeers)
	require.Len(t, filterPeers, 2, "sent to %s (filter peer too: %v), filter peers %v: want the node that is no filter peer", br.SentTo, br.AlsoFilterPeer, filterPeers)
	require.NotEqual(t, br.SentTo, br.ConfirmedBy, "confirmed by %q (mined %v), want a relay by a filter peer", br.ConfirmedBy, br.Mined)
	require.True(t, filterPeers[br.ConfirmedBy], "confirmed by %q (mined %v), want a relay by a filter peer", br.ConfirmedBy, br.Mined)
	require.False(t, br.Mined, "confirmed by %q (mined %v), want a relay by a filter peer", br.ConfirmedBy, br.Mined)
	require.NotEqual(t, uint64(0), br.BytesReceived, "%d bytes from the target", br.BytesReceived)
	require.LessOrEqual(t, br.BytesReceived, uint64(spv.MaxBroadcastBytes), "%d bytes from the target", br.BytesReceived)
	pool, err := a.RPC().GetRawMempool()
	require.NoError(t, err)
	inPool := false
	for _, h := range pool {
		inPool = inPool || *h == txid
	}
	require.True(t, inPool, "%v is not in A's mempool (%d txs)", txid, len(pool))

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
			require.False(t, gotTx, "filter connection to %s carried the transaction (tx %v, inv %v)", conn.Dest, gotTx, gotInv)
			require.False(t, gotInv, "filter connection to %s carried the transaction (tx %v, inv %v)", conn.Dest, gotTx, gotInv)
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
		require.Equal(t, br.SentTo, conn.Dest, "the transaction went to %s (filter loaded %v, tx %v, inv %v), want only the broadcast connection to %s", conn.Dest, loaded, gotTx, gotInv, br.SentTo)
		require.False(t, loaded, "the transaction went to %s (filter loaded %v, tx %v, inv %v), want only the broadcast connection to %s", conn.Dest, loaded, gotTx, gotInv, br.SentTo)
		require.True(t, gotTx, "the transaction went to %s (filter loaded %v, tx %v, inv %v), want only the broadcast connection to %s", conn.Dest, loaded, gotTx, gotInv, br.SentTo)
		require.True(t, gotInv, "the transaction went to %s (filter loaded %v, tx %v, inv %v), want only the broadcast connection to %s", conn.Dest, loaded, gotTx, gotInv, br.SentTo)
		d, shared := users[conn.User]
		require.False(t, shared, "the broadcast connection's SOCKS username %q is %s's", conn.User, d)
		require.NotEqual(t, "", conn.User, "the broadcast connection's SOCKS username %q is %s's", conn.User, d)
	}
	require.Equal(t, 1, sent, "connections carrying the transaction: %d; filter connections seen through the proxy: %v", sent, users)
	require.GreaterOrEqual(t, len(users), 2, "connections carrying the transaction: %d; filter connections seen through the proxy: %v", sent, users)

	// The wallet shows it pending; a block confirms it.
	pending := func() (int32, bool) {
		txs, err := w.Txs()
		require.NoError(t, err)
		for _, s := range txs {
			if s.Txid == txid {
				return s.Height, true
			}
		}
		return 0, false
	}
	height, ok := pending()
	require.True(t, ok, "wallet: %v held %v at height %d, want pending", txid, ok, height)
	require.Equal(t, int32(-1), height, "wallet: %v held %v at height %d, want pending", txid, ok, height)
	bal, err := w.Balance()
	require.NoError(t, err)
	require.Equal(t, btcutil.Amount(1_000_000), bal.PendingSpent, "pending spent %v, want the coin", bal.PendingSpent)
	_, err = h.Mine(1)
	require.NoError(t, err)
	_, tip, err := a.BestBlock()
	require.NoError(t, err)
	for {
		if height, ok := pending(); ok && height == tip {
			break
		}
		select {
		case <-ctx.Done():
			require.FailNow(t, "the block never confirmed the transaction in the wallet")
		case <-time.After(50 * time.Millisecond):
		}
	}
	truth, err := testnet.ScanTruth(ctx, a, key, testnet.PurposeBIP84, start+1)
	require.NoError(t, err)
	bal, err = w.Balance()
	require.NoError(t, err)
	require.Equal(t, truth.Balance, int64(bal.Confirmed), "balance %+v, truth %d", bal, truth.Balance)
	require.Equal(t, btcutil.Amount(0), bal.PendingSpent, "balance %+v, truth %d", bal, truth.Balance)
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
	require.NoError(t, err)
	params := h.Params()
	key, _, w := paidDemoWallet(ctx, t, h, other)
	proxy, err := socks.Start(socks.Options{Record: true})
	require.NoError(t, err)
	defer proxy.Close()
	s, err := session.New(session.Config{Wallet: w, PeerTimeout: time.Minute, Stderr: testWriter{t},
		Node: spv.Config{Connect: []string{h.Node().P2PAddr(), other.P2PAddr()}, MaxPeers: 1, Proxy: proxy.Addr()}})
	require.NoError(t, err)
	require.NoError(t, s.Start(ctx))
	defer func() {
		require.NoError(t, s.Stop())
	}()
	require.NoError(t, s.Node().WaitSynced(ctx))
	to, err := btcutil.NewAddressWitnessPubKeyHash(make([]byte, 20), params)
	require.NoError(t, err)
	res, err := w.CreatePSBT(wallet.PSBTRequest{Outputs: []wallet.PSBTOutput{{Address: to.EncodeAddress(), Amount: 300_000}}, FeeRate: 2})
	require.NoError(t, err)
	require.NoError(t, key.SignPSBT(res.Packet))
	require.NoError(t, psbt.MaybeFinalizeAll(res.Packet))
	tx, err := psbt.Extract(res.Packet)
	require.NoError(t, err)
	br, err := s.Broadcast(ctx, tx, spv.BroadcastOptions{})
	require.NoError(t, err)
	require.Equal(t, "v2", br.Transport, "broadcast %+v: want a v2 connection to the node without the filter, relayed back by the other", br)
	require.False(t, br.AlsoFilterPeer, "broadcast %+v: want a v2 connection to the node without the filter, relayed back by the other", br)
	require.NotEqual(t, br.SentTo, br.ConfirmedBy, "broadcast %+v: want a v2 connection to the node without the filter, relayed back by the other", br)
	var raw bytes.Buffer
	require.NoError(t, tx.Serialize(&raw))
	// The transaction's outputs, serialized, are in no stream in clear.
	needle := raw.Bytes()[len(raw.Bytes())-40:]
	for _, conn := range proxy.Conns() {
		require.False(t, bytes.Contains(conn.Sent, needle), "the transaction left in clear on the connection to %s", conn.Dest)
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
	require.NoError(t, err)
	_, start, err := h.Node().BestBlock()
	require.NoError(t, err)
	addr, err := key.Address(testnet.PurposeBIP84, testnet.BranchExternal, 0)
	require.NoError(t, err)
	_, err = h.PayAddress(addr, 1_000_000)
	require.NoError(t, err)
	_, err = h.Mine(1)
	require.NoError(t, err)
	for _, n := range peers {
		require.NoError(t, n.WaitSynced(ctx, h.Node()))
	}
	vpub, err := key.Xpub(testnet.PurposeBIP84)
	require.NoError(t, err)
	w, err := wallet.Create(t.TempDir(), wallet.CreateConfig{Network: "regtest", Xpubs: []string{vpub}, Birthday: start + 1})
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Close() })
	return key, start, w
}
