package bcoin

import (
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil/bloom"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/peer"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/testnet"
)

// wireClient is a bare P2P connection to a node: btcd's peer package
// with every message of interest queued for the test to read in order.
type wireClient struct {
	t       *testing.T
	p       *peer.Peer
	msgs    chan wire.Message
	version atomic.Pointer[wire.MsgVersion]
	dropped atomic.Pointer[string] // the command of the first message the full queue dropped
	nonce   uint64
}

// dialWire connects to addr (a 127.0.0.1 node) as an SPV client would:
// no services, no transaction relay until a filter is loaded.
func dialWire(t *testing.T, addr string) *wireClient {
	t.Helper()
	c := &wireClient{t: t, msgs: make(chan wire.Message, 1024)}
	// The listeners run on the peer's goroutine: a dropped message is
	// recorded there and required empty on the test's goroutine at cleanup.
	t.Cleanup(func() {
		var dropped string
		if d := c.dropped.Load(); d != nil {
			dropped = *d
		}
		require.Empty(t, dropped, "wire client: queue full, dropped %s", dropped)
	})
	q := func(_ *peer.Peer, m wire.Message) {
		select {
		case c.msgs <- m:
		default:
			cmd := m.Command()
			c.dropped.CompareAndSwap(nil, &cmd)
		}
	}
	ready := make(chan struct{})
	cfg := &peer.Config{
		UserAgentName:  "bloomwatch-wire-probe",
		ChainParams:    &chaincfg.RegressionNetParams,
		DisableRelayTx: true,
		Listeners: peer.MessageListeners{
			OnVersion: func(_ *peer.Peer, m *wire.MsgVersion) *wire.MsgReject {
				c.version.Store(m)
				return nil
			},
			OnVerAck:      func(*peer.Peer, *wire.MsgVerAck) { close(ready) },
			OnHeaders:     func(p *peer.Peer, m *wire.MsgHeaders) { q(p, m) },
			OnMerkleBlock: func(p *peer.Peer, m *wire.MsgMerkleBlock) { q(p, m) },
			OnTx:          func(p *peer.Peer, m *wire.MsgTx) { q(p, m) },
			OnInv:         func(p *peer.Peer, m *wire.MsgInv) { q(p, m) },
			OnNotFound:    func(p *peer.Peer, m *wire.MsgNotFound) { q(p, m) },
			OnPong:        func(p *peer.Peer, m *wire.MsgPong) { q(p, m) },
			OnReject:      func(p *peer.Peer, m *wire.MsgReject) { q(p, m) },
		},
	}
	p, err := peer.NewOutboundPeer(cfg, addr)
	require.NoError(t, err)
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	p.AssociateConnection(conn)
	c.p = p
	t.Cleanup(func() {
		p.Disconnect()
		p.WaitForDisconnect()
	})
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		require.FailNow(t, "wire client: no verack")
	}
	return c
}

// send queues a message to the node.
func (c *wireClient) send(m wire.Message) { c.p.QueueMessage(m, nil) }

// exchange sends m, then a ping, and returns every queued message that
// arrives before the pong: the node's whole answer to m when it answers
// in order (bcoin and Core both handle a peer's messages one at a time).
func (c *wireClient) exchange(m wire.Message) []wire.Message {
	c.t.Helper()
	c.nonce++
	nonce := 0xb10000 + c.nonce
	c.send(m)
	c.send(wire.NewMsgPing(nonce))
	var got []wire.Message
	deadline := time.After(20 * time.Second)
	for {
		select {
		case msg := <-c.msgs:
			if pong, ok := msg.(*wire.MsgPong); ok {
				if pong.Nonce == nonce {
					return got
				}
				continue // btcd's own keep-alive
			}
			got = append(got, msg)
		case <-deadline:
			require.FailNow(c.t, fmt.Sprintf("no pong after %s (got %d messages)", m.Command(), len(got)))
		}
	}
}

// waitFor returns the first queued message that pred accepts within d,
// or nil.
func (c *wireClient) waitFor(d time.Duration, pred func(wire.Message) bool) wire.Message {
	deadline := time.After(d)
	for {
		select {
		case msg := <-c.msgs:
			if pred(msg) {
				return msg
			}
		case <-deadline:
			return nil
		}
	}
}

// commands lists the messages' commands.
func commands(msgs []wire.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Command()
	}
	return out
}

// without drops the messages of one command.
func without(msgs []wire.Message, cmd string) []wire.Message {
	var out []wire.Message
	for _, m := range msgs {
		if m.Command() != cmd {
			out = append(out, m)
		}
	}
	return out
}

// TestBcoinWire pins down, on the wire, how bcoin 1.0.2 answers what an
// SPV client sends, where it differs from Bitcoin Core (docs/CORE.md)
// and btcd: the behaviours bloomwatch's sync has to live with.
func TestBcoinWire(t *testing.T) {
	if testing.Short() {
		t.Skip("starts bcoin")
	}
	h := NewT(t, Options{})
	node := h.Node()
	key, err := testnet.NewKeyring(testnet.DemoSeed, h.Params())
	require.NoError(t, err)
	watched, err := key.PkScript(testnet.PurposeBIP84, testnet.BranchExternal, 0)
	require.NoError(t, err)
	other, err := key.PkScript(testnet.PurposeBIP84, testnet.BranchExternal, 1)
	require.NoError(t, err)

	paid, err := h.PayScript(watched, 1_000_000)
	require.NoError(t, err)
	_, err = h.Noise(2)
	require.NoError(t, err)
	hashes, err := h.Mine(1)
	require.NoError(t, err)
	block := *hashes[0]
	tip, _, err := node.BestBlock()
	require.NoError(t, err)
	blk, err := node.Block(tip)
	require.NoError(t, err)
	parent := blk.Header.PrevBlock
	// The mempool: one payment the filter matches (the watched script)
	// and two noise payments it does not.
	pending, err := h.PayScript(watched, 2_000_000)
	require.NoError(t, err)
	_, err = h.PayScript(other, 3_000_000)
	require.NoError(t, err)
	_, err = h.Noise(1)
	require.NoError(t, err)
	pool, err := node.Mempool()
	require.NoError(t, err)
	require.Len(t, pool, 3)

	c := dialWire(t, node.P2PAddr())
	v := c.version.Load()
	require.NotNil(t, v)
	require.NotZero(t, v.Services&wire.SFNodeBloom, "bcoin advertises NODE_BLOOM (bip37: true)")
	require.GreaterOrEqual(t, uint32(v.ProtocolVersion), uint32(wire.BIP0111Version))
	t.Logf("bcoin version: %d, services %v, agent %q, height %d", v.ProtocolVersion, v.Services, v.UserAgent, v.LastBlock)

	getHeaders := func(from chainhash.Hash) *wire.MsgGetHeaders {
		m := wire.NewMsgGetHeaders()
		require.NoError(t, m.AddBlockLocatorHash(&from))
		return m
	}
	// 1. Nothing after the locator: no headers message at all (Core and
	// btcd send an empty one). A client that waits for the reply waits
	// forever; only the pong after it tells the request is done.
	got := c.exchange(getHeaders(*tip))
	require.Empty(t, commands(got), "getheaders at bcoin's tip")
	// ... while one block back gets that block's header.
	got = c.exchange(getHeaders(parent))
	require.Equal(t, []string{wire.CmdHeaders}, commands(got))
	require.Len(t, got[0].(*wire.MsgHeaders).Headers, 1)
	require.Equal(t, *tip, got[0].(*wire.MsgHeaders).Headers[0].BlockHash())

	filtered := func(hash chainhash.Hash) *wire.MsgGetData {
		gd := wire.NewMsgGetData()
		require.NoError(t, gd.AddInvVect(wire.NewInvVect(wire.InvTypeFilteredBlock, &hash)))
		return gd
	}
	// 2. A filtered block before any filterload: notfound (Core sends
	// nothing at all).
	got = c.exchange(filtered(block))
	require.Equal(t, []string{wire.CmdNotFound}, commands(got))

	// 3. With a filter: the merkleblock, then the matched transaction.
	f := bloom.NewFilter(10, 0, 0.0001, wire.BloomUpdateAll)
	pushes, err := txscript.PushedData(watched)
	require.NoError(t, err)
	for _, d := range pushes {
		f.Add(d)
	}
	c.send(f.MsgFilterLoad())
	got = c.exchange(filtered(block))
	require.Equal(t, []string{wire.CmdMerkleBlock, wire.CmdTx}, commands(got))
	require.Equal(t, block, got[0].(*wire.MsgMerkleBlock).Header.BlockHash())
	require.Equal(t, paid.TxHash(), got[1].(*wire.MsgTx).TxHash())

	// 4. A block bcoin does not have, and a confirmed transaction (bcoin
	// serves MSG_TX from its mempool only): notfound for each.
	var unknown chainhash.Hash
	unknown[0] = 1
	got = c.exchange(filtered(unknown))
	require.Equal(t, []string{wire.CmdNotFound}, commands(got))
	gd := wire.NewMsgGetData()
	paidID := paid.TxHash()
	require.NoError(t, gd.AddInvVect(wire.NewInvVect(wire.InvTypeTx, &paidID)))
	got = c.exchange(gd)
	require.Equal(t, []string{wire.CmdNotFound}, commands(got))

	// 5. BIP35 mempool: bcoin's inv lists every mempool transaction, the
	// two the filter does not match included (Core lists only those
	// the filter matches). The inv goes out with bcoin's next flush
	// (every 5 s), after the pong.
	c.send(wire.NewMsgMemPool())
	invs := map[chainhash.Hash]bool{}
	for len(invs) < len(pool) {
		msg := c.waitFor(15*time.Second, func(m wire.Message) bool { _, ok := m.(*wire.MsgInv); return ok })
		require.NotNil(t, msg, "mempool inv: got %d of %d txs", len(invs), len(pool))
		for _, iv := range msg.(*wire.MsgInv).InvList {
			require.Equal(t, wire.InvTypeTx, iv.Type)
			invs[iv.Hash] = true
		}
	}
	for _, id := range pool {
		require.True(t, invs[id], "mempool tx %s announced", id)
	}

	// 6. A matched transaction the client already fetched from the
	// mempool is sent again after the merkleblock of the block that
	// confirms it (Core does the same: every match, duplicates
	// allowed).
	gd = wire.NewMsgGetData()
	pendingID := pending.TxHash()
	require.NoError(t, gd.AddInvVect(wire.NewInvVect(wire.InvTypeTx, &pendingID)))
	got = c.exchange(gd)
	require.Equal(t, []string{wire.CmdTx}, commands(got))
	hashes, err = h.Mine(1)
	require.NoError(t, err)
	got = without(c.exchange(filtered(*hashes[0])), wire.CmdInv) // the new block's announcement may come first
	require.Equal(t, []string{wire.CmdMerkleBlock, wire.CmdTx}, commands(got))
	require.Equal(t, pendingID, got[1].(*wire.MsgTx).TxHash())

	// 7. A transaction bcoin refuses (already confirmed) is an error of
	// SendTx, not a silent drop. (bcoin then "broadcasts anyway": it
	// would serve it to a getdata, which is why this comes last.)
	err = node.SendTx(paid)
	require.ErrorIs(t, err, ErrTxRejected)
	t.Logf("resending a confirmed tx: %v", err)
}
