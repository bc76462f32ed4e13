package session_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/psbt"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/session"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// broadcastCaseTimeout bounds each broadcast of these tests: long enough
// for btcd's relay (a trickle of up to 10 s per hop), short enough that
// the failure before the fixes (a wait to the end) does not take 90 s.
const broadcastCaseTimeout = 45 * time.Second

// startBroadcastSession starts a session of w on connect (two filter
// slots: the first two addresses) and waits until it is synced.
func startBroadcastSession(ctx context.Context, t *testing.T, w *wallet.Wallet, connect ...string) *session.Session {
	t.Helper()
	s, err := session.New(session.Config{Wallet: w, PeerTimeout: time.Minute, Stderr: testWriter{t},
		Node: spv.Config{Connect: connect, MaxPeers: 2}})
	require.NoError(t, err)
	require.NoError(t, s.Start(ctx))
	t.Cleanup(func() {
		require.NoError(t, s.Stop())
	})
	for len(s.Node().Peers()) < min(2, len(connect)) {
		select {
		case <-ctx.Done():
			require.FailNow(t, fmt.Sprintf("filter peers: %v", s.Node().Peers()))
		case <-time.After(20 * time.Millisecond):
		}
	}
	require.NoError(t, s.Node().WaitSynced(ctx))
	return s
}

// signedSpend builds a PSBT of w paying (or, with sweep, sweeping) to a
// foreign address, signs it with key and returns the transaction.
func signedSpend(t *testing.T, w *wallet.Wallet, key *testnet.Keyring, sweep bool) *wire.MsgTx {
	t.Helper()
	to, err := btcutil.NewAddressWitnessPubKeyHash(make([]byte, 20), key.Params())
	require.NoError(t, err)
	req := wallet.PSBTRequest{Outputs: []wallet.PSBTOutput{{Address: to.EncodeAddress(), Amount: 300_000}}, FeeRate: 2}
	if sweep {
		req = wallet.PSBTRequest{SweepTo: to.EncodeAddress(), FeeRate: 2}
	}
	res, err := w.CreatePSBT(req)
	require.NoError(t, err)
	require.NoError(t, key.SignPSBT(res.Packet))
	require.NoError(t, psbt.MaybeFinalizeAll(res.Packet))
	tx, err := psbt.Extract(res.Packet)
	require.NoError(t, err)
	return tx
}

// TestBroadcastSkipsPeerBehind runs the broadcast of issue's first
// ordinary case: three btcd, C a block behind (it left A before the block
// that pays the wallet). The session's filter peers are A and B; C, the
// only address no filter peer uses, was the target and held the spend as
// an orphan: no relay, a wait to the end. Now C's version height is below
// the coins' block: it is left before any inv, the spend goes to B (a
// filter peer at the tip) and A relays it back; the error-free result
// names C as skipped.
func TestBroadcastSkipsPeerBehind(t *testing.T) {
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
	a := h.Node()
	for _, n := range []*testnet.Node{b, c} {
		require.NoError(t, n.WaitSynced(ctx, a))
	}
	require.NoError(t, c.DisconnectFromCtx(ctx, a))
	key, _, w := paidDemoWallet(ctx, t, h, b)
	_, tip, err := a.BestBlock()
	require.NoError(t, err)
	_, cHeight, err := c.BestBlock()
	require.NoError(t, err, "C's best block")
	require.Less(t, cHeight, tip, "C at %d, want below the tip %d", cHeight, tip)
	s := startBroadcastSession(ctx, t, w, a.P2PAddr(), b.P2PAddr(), c.P2PAddr())
	tx := signedSpend(t, w, key, false)
	br, err := s.Broadcast(ctx, tx, spv.BroadcastOptions{Timeout: broadcastCaseTimeout})
	require.NoError(t, err)
	t.Logf("broadcast: sent to %s, confirmed by %s, skipped %q", br.SentTo, br.ConfirmedBy, br.Skipped)
	require.NotEqual(t, c.P2PAddr(), br.SentTo, "sent to %s, confirmed by %s: want a peer at the tip, relayed back by another", br.SentTo, br.ConfirmedBy)
	require.NotEqual(t, br.SentTo, br.ConfirmedBy, "sent to %s, confirmed by %s: want a peer at the tip, relayed back by another", br.SentTo, br.ConfirmedBy)
	require.NotEqual(t, "", br.ConfirmedBy, "sent to %s, confirmed by %s: want a peer at the tip, relayed back by another", br.SentTo, br.ConfirmedBy)
	require.Len(t, br.Skipped, 1, "skipped %q, want C named with its height", br.Skipped)
	require.True(t, strings.HasPrefix(br.Skipped[0], c.P2PAddr()+": at height"), "skipped %q, want C named with its height", br.Skipped)
}

// TestBroadcastToFilterPeerAndAgain runs the sweep sent to a peer that
// is also a filter peer (the session's two filter peers A and B, the
// spend sent to the one that is not the download peer, the other one cut
// off until the node holds the spend from the target), then the retry
// of the second ordinary case, once the spend is in every
// mempool. The first waited to the end: the target's own relay on its
// filter connection was fetched first and marked seen, so the other filter
// peer's announcement was never counted. The retry waited to the end
// too: a node that holds a transaction does not ask for it. Now the
// other peer's announcement confirms the first (spv.TxRelayed) and the
// target's answer to the getdata for it the second (AlreadyKnown).
func TestBroadcastToFilterPeerAndAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two btcd")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	h := testnet.NewT(t, testnet.Options{})
	b, err := h.StartPeer(ctx)
	require.NoError(t, err)
	a := h.Node()
	key, _, w := paidDemoWallet(ctx, t, h, b)
	s := startBroadcastSession(ctx, t, w, a.P2PAddr(), b.P2PAddr())
	to := ""
	for _, p := range s.Node().Peers() {
		if !p.Download {
			to = p.Addr
		}
	}
	tx := signedSpend(t, w, key, true)
	txid := tx.TxHash()
	// The order that made the first wait end at its bound, made certain:
	// the target's own relay on its filter connection comes first (the
	// two are cut off from each other), the other filter peer's after it
	// (it gets the spend once the node holds it from the target).
	require.NoError(t, b.DisconnectFromCtx(ctx, a))
	sub := s.Node().Subscribe()
	defer sub.Cancel()
	type result struct {
		br  *spv.BroadcastResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		br, err := s.Broadcast(ctx, tx, spv.BroadcastOptions{To: to, Timeout: broadcastCaseTimeout})
		done <- result{br, err}
	}()
	for fetched := false; !fetched; {
		select {
		case ev := <-sub.Events():
			m, ok := ev.(spv.MatchedTx)
			fetched = ok && m.Txid == txid && m.Peer == to
		case r := <-done:
			require.FailNow(t, fmt.Sprintf("the broadcast ended before the target relayed the spend on its filter connection: %+v, %v", r.br, r.err))
		case <-ctx.Done():
			require.FailNow(t, "the target never relayed the spend on its filter connection")
		}
	}
	// The other filter peer gets it as by relay (a node reconnecting
	// is not told of what is already in a mempool).
	other := a
	if to == a.P2PAddr() {
		other = b
	}
	_, err = other.RPC().SendRawTransaction(tx, false)
	require.NoError(t, err)
	require.NoError(t, b.ConnectToCtx(ctx, a))
	r := <-done
	br, err := r.br, r.err
	require.NoError(t, err)
	t.Logf("sweep to the filter peer %s: confirmed by %s after %v", br.SentTo, br.ConfirmedBy, br.Elapsed)
	require.True(t, br.AlsoFilterPeer, "%+v: want a relay back by the other filter peer", br)
	require.NotEqual(t, br.SentTo, br.ConfirmedBy, "%+v: want a relay back by the other filter peer", br)
	require.False(t, br.AlreadyKnown, "%+v: want a relay back by the other filter peer", br)
	for _, n := range []*testnet.Node{a, b} {
		pool, err := n.RPC().GetRawMempool()
		require.NoError(t, err)
		in := false
		for _, h := range pool {
			in = in || *h == txid
		}
		require.True(t, in, "%v is not in %s's mempool", txid, n.P2PAddr())
	}
	again, err := s.Broadcast(ctx, tx, spv.BroadcastOptions{To: to, Timeout: broadcastCaseTimeout})
	require.NoError(t, err)
	require.True(t, again.AlreadyKnown, "again: %+v, want it counted as sent: the target holds it", again)
	require.Equal(t, again.SentTo, again.ConfirmedBy, "again: %+v, want it counted as sent: the target holds it", again)
}
