package hostile

import (
	"net"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/peer"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// TestSilentPeer checks the silent peer on the wire: it announces its
// height with NODE_BLOOM, answers a ping after a getheaders with the pong
// alone, and getdata with notfound.
func TestSilentPeer(t *testing.T) {
	sp, err := StartSilent(t.Context(), SilentConfig{Params: &chaincfg.RegressionNetParams, Height: 321})
	require.NoError(t, err)
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
	require.NoError(t, err)
	conn, err := net.DialTimeout("tcp", sp.Addr(), 5*time.Second)
	require.NoError(t, err)
	p.AssociateConnection(conn)
	t.Cleanup(func() { p.Disconnect(); p.WaitForDisconnect() })
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		require.FailNow(t, "no verack")
	}
	require.Equal(t, int32(321), height, "version: height %d services %v", height, services)
	require.NotEqual(t, wire.ServiceFlag(0), services&wire.SFNodeBloom, "version: height %d services %v", height, services)
	next := func() wire.Message {
		t.Helper()
		select {
		case m := <-msgs:
			return m
		case <-time.After(10 * time.Second):
			require.FailNow(t, "no answer")
			return nil
		}
	}
	gh := wire.NewMsgGetHeaders()
	require.NoError(t, gh.AddBlockLocatorHash(chaincfg.RegressionNetParams.GenesisHash))
	p.QueueMessage(gh, nil)
	p.QueueMessage(wire.NewMsgPing(7), nil)
	m, ok := next().(*wire.MsgPong)
	require.True(t, ok, "after getheaders and ping: %T %+v, want the pong alone", m, m)
	require.Equal(t, uint64(7), m.Nonce, "after getheaders and ping: %T %+v, want the pong alone", m, m)
	gd := wire.NewMsgGetData()
	var h chainhash.Hash
	_ = gd.AddInvVect(wire.NewInvVect(wire.InvTypeFilteredBlock, &h))
	p.QueueMessage(gd, nil)
	nf, ok := next().(*wire.MsgNotFound)
	require.True(t, ok, "after getdata: %T, want notfound", nf)
	require.Len(t, nf.InvList, 1, "after getdata: %T, want notfound", nf)
	st := sp.Stats()
	require.Equal(t, 1, st.Handshakes, "stats %+v", st)
	require.Equal(t, 1, st.Received[wire.CmdGetHeaders], "stats %+v", st)
}
