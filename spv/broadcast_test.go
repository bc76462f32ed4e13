package spv

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/internal/peertext"
	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/bloomwatch/bloomwatch/watch/watchtest"
)

// targetBehaviour is how a fake broadcast target behaves after the
// handshake.
type targetBehaviour int

const (
	targetHonest        targetBehaviour = iota // asks for the tx
	targetReject                               // asks, then rejects it
	targetFlood                                // sends addr messages without end
	targetSilent                               // never asks
	targetHangUp                               // disconnects at the inv
	targetHostileReject                        // rejects it with terminal escapes
	targetHolds                                // holds the tx already: answers the getdata with it, asks nothing
	targetKnown                                // asks, then rejects it as already known (Core's reason)
	targetBehind                               // a version height of 5
)

// hostileReason is a reject reason that writes to a terminal: a carriage
// return, a screen clear, an OSC 52 clipboard write, and escapes up to
// what a reject may carry (maxRejectPayload; a longer one ends the
// connection at its header).
var hostileReason = "\r\x1b[2J\x1b]52;c;aGk=\x07" + strings.Repeat("\x1b[31m", 150)

// fakeTarget is a full node on 127.0.0.1 speaking the wire protocol by
// hand (btcd's peer package refuses a peer of the same process as a
// connection to itself), for the broadcast connection.
type fakeTarget struct {
	ln  net.Listener
	got chan *wire.MsgTx
	wg  sync.WaitGroup
	// inv is closed when an inv arrives.
	inv chan struct{}
}

// startTarget listens and serves one connection with behaviour b.
func startTarget(t *testing.T, nw *netparams.Network, b targetBehaviour) *fakeTarget {
	t.Helper()
	ln, err := listenLoopback()
	require.NoError(t, err)
	ft := &fakeTarget{ln: ln, got: make(chan *wire.MsgTx, 4), inv: make(chan struct{})}
	var invOnce sync.Once
	ft.wg.Add(1)
	go func() {
		defer ft.wg.Done()
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		pver, id := uint32(wire.ProtocolVersion), nw.Params.Net
		read := func() (wire.Message, error) {
			_, m, _, err := wire.ReadMessageWithEncodingN(conn, pver, id, wire.WitnessEncoding)
			return m, err
		}
		write := func(m wire.Message) error {
			_, err := wire.WriteMessageWithEncodingN(conn, m, pver, id, wire.WitnessEncoding)
			return err
		}
		if _, err := read(); err != nil { // version
			return
		}
		me := wire.NewNetAddressIPPort(net.IPv4(127, 0, 0, 1), 18444, wire.SFNodeNetwork)
		height := int32(0)
		if b == targetBehind {
			height = 5
		}
		ver := wire.NewMsgVersion(me, me, 42, height)
		ver.Services = wire.SFNodeNetwork | wire.SFNodeBloom | wire.SFNodeWitness
		if write(ver) != nil || write(wire.NewMsgVerAck()) != nil {
			return
		}
		for {
			m, err := read()
			if err != nil {
				return
			}
			switch m := m.(type) {
			case *wire.MsgVerAck:
				if b == targetFlood {
					addr := wire.NewMsgAddr()
					for i := range wire.MaxAddrPerMsg {
						_ = addr.AddAddress(wire.NewNetAddressIPPort(net4(i), 8333, wire.SFNodeNetwork))
					}
					for write(addr) == nil {
					}
					return
				}
			case *wire.MsgInv:
				invOnce.Do(func() { close(ft.inv) })
				switch b {
				case targetSilent, targetHolds:
					continue
				case targetHangUp:
					return
				}
				gd := wire.NewMsgGetData()
				for _, iv := range m.InvList {
					_ = gd.AddInvVect(wire.NewInvVect(wire.InvTypeWitnessTx, &iv.Hash))
				}
				if write(gd) != nil {
					return
				}
			case *wire.MsgGetData:
				if b == targetHolds {
					if write(broadcastTx()) != nil {
						return
					}
				}
			case *wire.MsgTx:
				ft.got <- m
				var rej *wire.MsgReject
				switch b {
				case targetReject:
					rej = wire.NewMsgReject(wire.CmdTx, wire.RejectInsufficientFee, "fee too low")
				case targetHostileReject:
					rej = wire.NewMsgReject(wire.CmdTx, wire.RejectInsufficientFee, hostileReason)
				case targetKnown:
					rej = wire.NewMsgReject(wire.CmdTx, wire.RejectDuplicate, "txn-already-known")
				}
				if rej != nil {
					rej.Hash = m.TxHash()
					if write(rej) != nil {
						return
					}
				}
			}
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		ft.wg.Wait()
	})
	return ft
}

// net4 is a routable-looking IPv4 address.
func net4(i int) net.IP { return net.IPv4(11, byte(i>>16), byte(i>>8), byte(i)) }

// listenLoopback listens on a free port of 127.0.0.1.
func listenLoopback() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }

// broadcastTx is a segwit transaction (its witness must arrive whole).
func broadcastTx() *wire.MsgTx {
	tx := wire.NewMsgTx(2)
	in := wire.NewTxIn(&wire.OutPoint{Hash: chainhash.Hash{7}, Index: 1}, nil, wire.TxWitness{{0x30, 0x44, 0x02}, {0x02, 0x03}})
	tx.AddTxIn(in)
	tx.AddTxOut(wire.NewTxOut(50_000, p2wpkh(9)))
	return tx
}

// broadcastNode is a node that never starts, for the broadcast
// connection alone.
func broadcastNode(t *testing.T) (*Node, *netparams.Network) {
	t.Helper()
	nw, err := netparams.Lookup("regtest")
	require.NoError(t, err)
	n, err := New(Config{Network: nw, DataDir: t.TempDir(), Watcher: watchtest.NewMemWatcher(0, p2wpkh(1))})
	require.NoError(t, err)
	t.Cleanup(func() { _ = n.store.Close() })
	return n, nw
}

// TestBroadcastConnection runs the broadcast connection against fake
// targets: an honest one gets the transaction with its witness and the
// wait ends at a relay by another peer (not at the target's own); one
// that holds the transaction already (it answers the getdata, asks
// nothing) and one that rejects it as already known end it as sent; a
// rejection, a flood past MaxBroadcastBytes, a target that never asks
// and one that hangs up each end it with their error; a target below the
// height needed is left before any inv.
func TestBroadcastConnection(t *testing.T) {
	tx := broadcastTx()
	txid := tx.TxHash()
	tests := []struct {
		name    string
		b       targetBehaviour
		relayBy string // the peer whose MatchedTx is published, "" none
		wantErr error
		known   bool
	}{
		{"honest, relayed back by another peer", targetHonest, "127.0.0.1:2", nil, false},
		{"holds it already", targetHolds, "", nil, true},
		{"rejects it as already known", targetKnown, "", nil, true},
		{"behind the inputs", targetBehind, "", errTargetBehind, false},
		{"rejected", targetReject, "", ErrTxRejected, false},
		{"rejected with terminal escapes", targetHostileReject, "", ErrTxRejected, false},
		{"flood", targetFlood, "", ErrBroadcastBudget, false},
		{"never asks", targetSilent, "", ErrBroadcastUnconfirmed, false},
		{"hangs up", targetHangUp, "", errFetchDisconnected, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, nw := broadcastNode(t)
			ft := startTarget(t, nw, tc.b)
			target := ft.ln.Addr().String()
			// Every case but the silent target ends on what the target
			// does: a generous bound. The silent one ends when the wait
			// does (ErrBroadcastUnconfirmed): 3 s after the handshake.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			sub := n.Subscribe()
			defer sub.Cancel()
			need := int32(0)
			if tc.b == targetBehind {
				need = 6
			}
			bc, err := n.openBroadcast(ctx, target, tx, need)
			if tc.b == targetBehind {
				require.ErrorIs(t, err, tc.wantErr, "open: %v, want %v", err, tc.wantErr)
				select {
				case <-ft.inv:
					require.FailNow(t, "the target below the height needed got the inv")
				default:
				}
				return
			}
			require.NoError(t, err)
			defer bc.close()
			witness := make(chan error, 1) // the relay goroutine's finding
			if tc.relayBy != "" {
				go func() {
					var sent *wire.MsgTx
					select {
					case sent = <-ft.got:
					case <-ctx.Done(): // await fails with the context's end
						return
					}
					if len(sent.TxIn[0].Witness) != 2 {
						select {
						case witness <- errors.New("the target got the transaction without its witness"):
						case <-ctx.Done():
						}
					}
					// The target's own relay does not confirm; another
					// peer's does.
					n.publish(MatchedTx{Txid: txid, Height: -1, Peer: target})
					n.publish(MatchedTx{Txid: txid, Height: -1, Peer: tc.relayBy})
				}()
			}
			res := &BroadcastResult{Txid: txid, SentTo: target}
			if tc.b == targetSilent {
				var wcancel context.CancelFunc
				ctx, wcancel = context.WithTimeout(ctx, 3*time.Second)
				defer wcancel()
			}
			err = bc.await(ctx, sub, res, nil)
			// The relay checks the witness before it publishes the
			// confirmation await returns on: its finding, if any, is in
			// the channel once await has returned with that peer.
			select {
			case werr := <-witness:
				require.NoError(t, werr)
			default:
			}
			if tc.wantErr == nil {
				want := tc.relayBy
				if tc.known {
					want = target
				}
				require.NoError(t, err, "await: %v, confirmed by %q (already known %v)", err, res.ConfirmedBy, res.AlreadyKnown)
				require.Equal(t, want, res.ConfirmedBy, "await: %v, confirmed by %q (already known %v)", err, res.ConfirmedBy, res.AlreadyKnown)
				require.Equal(t, tc.known, res.AlreadyKnown, "await: %v, confirmed by %q (already known %v)", err, res.ConfirmedBy, res.AlreadyKnown)
				return
			}
			require.ErrorIs(t, err, tc.wantErr, "await: %v, want %v", err, tc.wantErr)
			if tc.b == targetHostileReject {
				msg := err.Error()
				require.False(t, strings.ContainsAny(msg, "\r\x1b\x07"), "the reject reason reached the error raw (%d bytes): %.200q", len(msg), msg)
				require.LessOrEqual(t, len(msg), 2*peertext.FieldMax, "the reject reason reached the error raw (%d bytes): %.200q", len(msg), msg)
			}
			require.False(t, tc.b == targetFlood && bc.p.BytesReceived() > MaxBroadcastBytes+64<<10, "read %d bytes past the budget of %d", bc.p.BytesReceived(), MaxBroadcastBytes)
		})
	}
}

// TestBroadcastTargets checks the order of the targets: the addresses no
// filter peer uses first, then the filter peers (never the download peer)
// whose best block reaches the height needed; one below it is left out
// with its height named.
func TestBroadcastTargets(t *testing.T) {
	n, _ := broadcastNode(t)
	n.cfg.Connect = []string{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3", "127.0.0.1:4"}
	st := Status{Peers: []PeerInfo{{Addr: "127.0.0.1:1", Download: true, LastBlock: 6}, {Addr: "127.0.0.1:2", LastBlock: 6},
		{Addr: "127.0.0.1:4", StartHeight: 4, LastBlock: 5}}}
	for range 20 {
		got, skipped, err := n.broadcastTargets(st, "", 6)
		require.NoError(t, err, "targets %v (%v): want the address no filter peer uses, then the filter peer at the tip", got, err)
		require.Len(t, got, 2, "targets %v (%v): want the address no filter peer uses, then the filter peer at the tip", got, err)
		require.Equal(t, (broadcastCandidate{"127.0.0.1:3", false}), got[0], "targets %v (%v): want the address no filter peer uses, then the filter peer at the tip", got, err)
		require.Equal(t, (broadcastCandidate{"127.0.0.1:2", true}), got[1], "targets %v (%v): want the address no filter peer uses, then the filter peer at the tip", got, err)
		require.Len(t, skipped, 1, "skipped %q", skipped)
		require.Contains(t, skipped[0], "127.0.0.1:4: filter peer at height 5, below 6", "skipped %q", skipped)
	}
	n.cfg.Connect = []string{"127.0.0.1:1", "127.0.0.1:4"}
	_, _, err := n.broadcastTargets(st, "", 6)
	require.ErrorIs(t, err, ErrBroadcastTarget, "only the download peer and one behind: %v", err)
	require.Contains(t, err.Error(), "127.0.0.1:4: filter peer at height 5", "only the download peer and one behind: %v", err)
	_, _, err = n.broadcastTargets(st, "127.0.0.1:1", 6)
	require.ErrorIs(t, err, ErrBroadcastTarget, "asked for the download peer: %v", err)
	got, _, err := n.broadcastTargets(st, "127.0.0.1:2", 6)
	require.NoError(t, err, "asked for a filter peer: %v", got)
	require.Len(t, got, 1, "asked for a filter peer: %v %v", got, err)
	require.True(t, got[0].filter, "asked for a filter peer: %v %v", got, err)
}

// TestBroadcastStallingKeyNotSent opens a broadcast connection under
// auto to btcd v0.25.0 without --v2transport (an explicit peer: v2 first)
// through a recording relay, the first v2 key made one that would stall
// btcd (stallKeys, as 1 key in 128 is by chance): the key is never sent
// (the first connection is empty), a new key draws btcd's hang-up, and
// the connection comes up over v1. Before, the stalling key went out and
// the broadcast waited for the handshake bound or btcd's 30 s.
func TestBroadcastStallingKeyNotSent(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h := testnet.NewT(t, testnet.Options{})
	relay, err := testnet.StartRelay(t.Context(), h.Node().P2PAddr())
	require.NoError(t, err)
	defer relay.Close()
	nw, err := netparams.Lookup("regtest")
	require.NoError(t, err)
	n, err := New(Config{Network: nw, DataDir: t.TempDir(), Watcher: watchtest.NewMemWatcher(0, p2wpkh(1)),
		Connect: []string{relay.Addr()}, Tuning: Tuning{HandshakeTimeout: time.Minute}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = n.store.Close() })
	stallKeys.Store(1)
	defer stallKeys.Store(0)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	bc, err := n.openBroadcast(ctx, relay.Addr(), broadcastTx(), 0)
	require.NoError(t, err)
	bc.close()
	require.Equal(t, transcript.TransportV1, bc.transport, "the broadcast went over %s, want v1", bc.transport)
	up, _ := relay.Recording()
	conns := map[int][]byte{}
	last := -1
	for _, ch := range relay.Chunks() {
		if ch.Up {
			conns[ch.Conn] = append(conns[ch.Conn], up[:ch.Bytes]...)
			up = up[ch.Bytes:]
		}
		last = max(last, ch.Conn)
	}
	require.Equal(t, 2, last, "%d connections; the first carried %d bytes, the second %x: want an empty one, then a %d-byte key that does not stall btcd, then v1", last+1, len(conns[0]), conns[1], v2KeyLen)
	require.Len(t, conns[0], 0, "%d connections; the first carried %d bytes, the second %x: want an empty one, then a %d-byte key that does not stall btcd, then v1", last+1, len(conns[0]), conns[1], v2KeyLen)
	require.Len(t, conns[1], v2KeyLen, "%d connections; the first carried %d bytes, the second %x: want an empty one, then a %d-byte key that does not stall btcd, then v1", last+1, len(conns[0]), conns[1], v2KeyLen)
	require.False(t, v1Stalls(conns[1]), "%d connections; the first carried %d bytes, the second %x: want an empty one, then a %d-byte key that does not stall btcd, then v1", last+1, len(conns[0]), conns[1], v2KeyLen)
}
