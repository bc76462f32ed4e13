package hostile

import (
	"net"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/peer"
	"github.com/btcsuite/btcd/wire"
)

// TestSilentPeer checks the silent peer on the wire: it announces its
// height with NODE_BLOOM, answers a ping after a getheaders with the pong
// alone, and getdata with notfound.
func TestSilentPeer(t *testing.T) {
	sp, err := StartSilent(t.Context(), SilentConfig{Params: &chaincfg.RegressionNetParams, Height: 321})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sp.Close() })

	msgs := make(chan wire.Message, 16)
	ready := make(chan struct{})
	var height int32
	var services wire.ServiceFlag
	q := func(m wire.Message) {
		select {
		case msgs <- m:
		default:
		}
	}
	p, err := peer.NewOutboundPeer(&peer.Config{
		ChainParams: &chaincfg.RegressionNetParams, DisableRelayTx: true,
		Listeners: peer.MessageListeners{
			OnVersion: func(_ *peer.Peer, m *wire.MsgVersion) *wire.MsgReject {
				height, services = m.LastBlock, m.Services
				return nil
			},
			OnVerAck:   func(*peer.Peer, *wire.MsgVerAck) { close(ready) },
			OnHeaders:  func(_ *peer.Peer, m *wire.MsgHeaders) { q(m) },
			OnPong:     func(_ *peer.Peer, m *wire.MsgPong) { q(m) },
			OnNotFound: func(_ *peer.Peer, m *wire.MsgNotFound) { q(m) },
		},
	}, sp.Addr())
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp", sp.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	p.AssociateConnection(conn)
	t.Cleanup(func() { p.Disconnect(); p.WaitForDisconnect() })
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		t.Fatal("no verack")
	}
	if height != 321 || services&wire.SFNodeBloom == 0 {
		t.Fatalf("version: height %d services %v", height, services)
	}
	next := func() wire.Message {
		t.Helper()
		select {
		case m := <-msgs:
			return m
		case <-time.After(10 * time.Second):
			t.Fatal("no answer")
			return nil
		}
	}
	gh := wire.NewMsgGetHeaders()
	if err := gh.AddBlockLocatorHash(chaincfg.RegressionNetParams.GenesisHash); err != nil {
		t.Fatal(err)
	}
	p.QueueMessage(gh, nil)
	p.QueueMessage(wire.NewMsgPing(7), nil)
	if m, ok := next().(*wire.MsgPong); !ok || m.Nonce != 7 {
		t.Fatalf("after getheaders and ping: %T %+v, want the pong alone", m, m)
	}
	gd := wire.NewMsgGetData()
	var h chainhash.Hash
	_ = gd.AddInvVect(wire.NewInvVect(wire.InvTypeFilteredBlock, &h))
	p.QueueMessage(gd, nil)
	if m, ok := next().(*wire.MsgNotFound); !ok || len(m.InvList) != 1 {
		t.Fatalf("after getdata: %T, want notfound", m)
	}
	if st := sp.Stats(); st.Handshakes != 1 || st.Received[wire.CmdGetHeaders] != 1 {
		t.Fatalf("stats %+v", st)
	}
}
