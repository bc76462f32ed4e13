package spv

import (
	"fmt"
	"testing"

	"github.com/btcsuite/btcd/btcutil/gcs/builder"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/peer"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/watch/watchtest"
)

// cfTestPeer is a compact-filter peer answering the manager's requests
// from a chain, with filters of its own (lying ones included) and
// checkpoints of its own.
type cfTestPeer struct {
	t       *testing.T
	m       *manager
	ps      *peerState
	blocks  []*wire.MsgBlock // by height, genesis first
	filters [][]byte         // the filters its headers commit to and it serves
	cps     [][]byte         // the filters its checkpoints are computed from
	// served replaces the cfilter it sends for a height (its headers
	// still commit to filters).
	served map[int32][]byte
	queue  []wire.Message
	// after, when set, runs after each reply the manager handled.
	after func()
	// gone are blocks a reorg took off the peer's chain. Like btcd, whose
	// filter index drops a disconnected block's entries, it answers a
	// request naming one of them with nothing past the last block still
	// on its chain.
	gone []*wire.MsgBlock
}

// newCFTestPeer connects a peer serving blocks with filters and
// checkpoints computed from cps.
func newCFTestPeer(t *testing.T, m *manager, addr string, slot int, blocks []*wire.MsgBlock, filters, cps [][]byte) *cfTestPeer {
	p, err := peer.NewOutboundPeer(&peer.Config{ChainParams: m.n.cfg.Network.Params}, addr)
	require.NoError(t, err)
	c := &cfTestPeer{t: t, m: m, blocks: blocks, filters: filters, cps: cps}
	c.ps = &peerState{addr: addr, p: p, slot: slot}
	c.ps.sendHook = func(msg wire.Message) { c.queue = append(c.queue, msg) }
	m.handle(peerReadyMsg{ps: c.ps})
	c.ps.lastBlock = int32(len(blocks) - 1)
	return c
}

// headers returns the filter headers of filters, by height.
func cfTestHeaders(filters [][]byte) []chainhash.Hash {
	out := make([]chainhash.Hash, len(filters))
	var prev chainhash.Hash
	for i, f := range filters {
		prev = filterHeader(chainhash.DoubleHashH(f), prev)
		out[i] = prev
	}
	return out
}

// serve answers every queued request; it reports whether there was one.
func (c *cfTestPeer) serve() bool {
	if len(c.queue) == 0 || !c.ps.ready {
		c.queue = nil
		return false
	}
	q := c.queue
	c.queue = nil
	height := func(h chainhash.Hash) int32 {
		for i, b := range c.blocks {
			if b.BlockHash() == h {
				return int32(i)
			}
		}
		require.FailNow(c.t, fmt.Sprintf("unknown block %v", h))
		return -1
	}
	// onChain reports whether the peer still has the block hash on its
	// chain (a stop hash of a gone block is not).
	onChain := func(h chainhash.Hash) bool {
		for _, b := range c.gone {
			if b.BlockHash() == h {
				return false
			}
		}
		return true
	}
	hdrs := cfTestHeaders(c.filters)
	cpHdrs := cfTestHeaders(c.cps)
	for _, msg := range q {
		var replies []wire.Message
		switch r := msg.(type) {
		case *wire.MsgGetCFCheckpt:
			if !onChain(r.StopHash) {
				continue
			}
			stop := height(r.StopHash)
			out := wire.NewMsgCFCheckpt(r.FilterType, &r.StopHash, int(stop/wire.CFCheckptInterval))
			for h := int32(wire.CFCheckptInterval); h <= stop; h += wire.CFCheckptInterval {
				require.NoError(c.t, out.AddCFHeader(&cpHdrs[h]))
			}
			replies = append(replies, out)
		case *wire.MsgGetCFHeaders:
			if !onChain(r.StopHash) {
				continue
			}
			stop := height(r.StopHash)
			out := wire.NewMsgCFHeaders()
			out.FilterType, out.StopHash = r.FilterType, r.StopHash
			if r.StartHeight > 0 {
				out.PrevFilterHeader = hdrs[r.StartHeight-1]
			}
			for h := int32(r.StartHeight); h <= stop; h++ {
				fh := chainhash.DoubleHashH(c.filters[h])
				out.FilterHashes = append(out.FilterHashes, &fh)
			}
			replies = append(replies, out)
		case *wire.MsgGetCFilters:
			if !onChain(r.StopHash) {
				// btcd walks back from the stop block and sends the
				// filters up to the first it no longer has: those up to
				// the fork.
				fork := height(c.gone[0].Header.PrevBlock)
				for h := int32(r.StartHeight); h <= fork; h++ {
					hash := c.blocks[h].BlockHash()
					replies = append(replies, wire.NewMsgCFilter(r.FilterType, &hash, c.filters[h]))
				}
				break
			}
			for h := int32(r.StartHeight); h <= height(r.StopHash); h++ {
				hash := c.blocks[h].BlockHash()
				data := c.filters[h]
				if f, ok := c.served[h]; ok {
					data = f
				}
				replies = append(replies, wire.NewMsgCFilter(r.FilterType, &hash, data))
			}
		case *wire.MsgGetData:
			for _, iv := range r.InvList {
				replies = append(replies, c.blocks[height(iv.Hash)])
			}
		case *wire.MsgPing:
			replies = append(replies, wire.NewMsgPong(r.Nonce))
		case *wire.MsgGetHeaders:
			// The store already holds the chain: nothing follows.
			replies = append(replies, wire.NewMsgHeaders())
		}
		for _, reply := range replies {
			if !c.ps.ready {
				return true
			}
			c.m.handle(peerWireMsg{ps: c.ps, msg: reply})
			if c.after != nil {
				c.after()
			}
		}
	}
	return true
}

// cfTestChain mines n blocks on genesis into the store and returns them
// with their honest basic filters (coinbase-only blocks: the filter is
// rebuilt exactly from the block).
func cfTestChain(t *testing.T, m *manager, n int) ([]*wire.MsgBlock, [][]byte) {
	return cfTestChainOf(t, m, n, func(int) []*wire.MsgTx { return nil })
}

// cfTestChainOf is cfTestChain with the transactions txs(i) in block
// i+1 (the filters without their spent scripts, which the test blocks
// do not have).
func cfTestChainOf(t *testing.T, m *manager, n int, txs func(int) []*wire.MsgTx) ([]*wire.MsgBlock, [][]byte) {
	net := m.n.cfg.Network
	blocks := append([]*wire.MsgBlock{net.Params.GenesisBlock}, mineBlocks(t, net, genesis(m.n), n, txs)...)
	var hdrs []wire.BlockHeader
	for _, b := range blocks[1:] {
		hdrs = append(hdrs, b.Header)
	}
	_, err := m.n.store.Connect(hdrs)
	require.NoError(t, err)
	filters := make([][]byte, len(blocks))
	for i, b := range blocks {
		f, err := builder.BuildBasicFilter(b, nil)
		require.NoError(t, err)
		filters[i], err = f.NBytes()
		require.NoError(t, err)
	}
	return blocks, filters
}

// runCF serves the peers until none has a request left.
func runCF(peers ...*cfTestPeer) {
	for busy := true; busy; {
		busy = false
		for _, p := range peers {
			busy = p.serve() || busy
		}
	}
}

// banned reports whether addr is banned.
func bannedAddr(m *manager, addr string) bool {
	_, ok := m.n.bans.IsBanned(addr)
	return ok
}

// TestCFHeadersConflictBansTheLiar syncs 1,005 blocks from an honest
// peer and one whose filter of block 500 (and the headers and checkpoints
// above it) is a filter of nothing, consistent with itself: the headers
// disagree at 500, the block settles it (rebuilt from the block alone),
// the liar is banned and the watcher is delivered every block.
func TestCFHeadersConflictBansTheLiar(t *testing.T) {
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	_, m := newTestManager(t, w, Config{Protocol: ProtocolBIP158, Tuning: Tuning{MinPeers: 2}})
	blocks, honest := cfTestChain(t, m, 1005)
	lie := append([][]byte(nil), honest...)
	lie[500] = []byte{0}
	h := newCFTestPeer(t, m, "10.0.0.1:8333", 0, blocks, honest, honest)
	l := newCFTestPeer(t, m, "10.1.0.1:8333", 1, blocks, lie, lie)
	m.schedule()
	runCF(h, l)
	require.True(t, bannedAddr(m, l.ps.addr), "the liar is banned")
	require.False(t, bannedAddr(m, h.ps.addr))
	require.Equal(t, 1, m.cf.st.Conflicts)
	require.Len(t, m.cf.hdr, 1006, "the agreed chain reaches the tip")
	require.Equal(t, cfTestHeaders(honest)[1005], m.cf.hdr[1005])
	require.Equal(t, int32(1005), m.synced.Height)
}

// TestCFHeadersAgainstOwnCheckpoints bans a peer whose filter headers
// contradict the checkpoints it gave (checkpoints of the honest filters,
// headers of a lie at block 500), and syncs from the honest one.
func TestCFHeadersAgainstOwnCheckpoints(t *testing.T) {
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	_, m := newTestManager(t, w, Config{Protocol: ProtocolBIP158, Tuning: Tuning{MinPeers: 2}})
	blocks, honest := cfTestChain(t, m, 1005)
	lie := append([][]byte(nil), honest...)
	lie[500] = []byte{0}
	h := newCFTestPeer(t, m, "10.0.0.1:8333", 0, blocks, honest, honest)
	l := newCFTestPeer(t, m, "10.1.0.1:8333", 1, blocks, lie, honest)
	m.schedule()
	runCF(h, l)
	require.True(t, bannedAddr(m, l.ps.addr), "headers against its own checkpoint: banned")
	require.Zero(t, m.cf.st.Conflicts, "caught before any conflict")
	require.Equal(t, int32(1005), m.synced.Height)
}

// TestCFWrongFilterBanned bans the download peer when a filter it serves
// does not hash to the agreed filter header, and takes the filters from
// the other peer.
func TestCFWrongFilterBanned(t *testing.T) {
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	_, m := newTestManager(t, w, Config{Protocol: ProtocolBIP158, Tuning: Tuning{MinPeers: 2}})
	blocks, honest := cfTestChain(t, m, 50)
	l := newCFTestPeer(t, m, "10.0.0.1:8333", 0, blocks, honest, honest)
	l.served = map[int32][]byte{20: {0}}
	h := newCFTestPeer(t, m, "10.1.0.1:8333", 1, blocks, honest, honest)
	m.schedule()
	require.Equal(t, l.ps, m.dl, "the liar serves the filters")
	runCF(h, l)
	require.True(t, bannedAddr(m, l.ps.addr))
	require.Equal(t, int32(50), m.synced.Height)
}

// TestCFReorgSkippedRequests reorgs the peer's chain while the node's
// getcfheaders and getcfilters for the old branch are in flight, and the
// peer answers them as btcd does: the filters up to the fork, nothing
// for the blocks it no longer has. The node neither bans nor waits on
// it: the ping after the reorg settles the stale requests, and the new
// branch is synced.
func TestCFReorgSkippedRequests(t *testing.T) {
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	_, m := newTestManager(t, w, Config{Protocol: ProtocolBIP158})
	blocks, filters := cfTestChain(t, m, 20)
	p := newCFTestPeer(t, m, "10.0.0.1:8333", 0, blocks, filters, filters)
	m.schedule()
	runCF(p)
	require.Equal(t, int32(20), m.synced.Height)

	// Five more blocks: the node asks their filter headers, then their
	// filters, which the peer has not answered when it reorgs.
	more := mineBlocks(t, m.n.cfg.Network, &blocks[20].Header, 5, func(int) []*wire.MsgTx { return nil })
	var hdrs []*wire.BlockHeader
	for _, b := range more {
		hdrs = append(hdrs, &b.Header)
	}
	p.blocks = append(p.blocks, more...)
	p.filters = append(p.filters, cfTestFilters(t, more)...)
	p.cps = p.filters
	p.ps.lastBlock = 25
	m.handle(peerWireMsg{ps: p.ps, msg: &wire.MsgHeaders{Headers: hdrs}})
	require.True(t, p.serve(), "the filter headers of 21..25 are asked")
	var asked bool
	for _, msg := range p.queue {
		_, ok := msg.(*wire.MsgGetCFilters)
		asked = asked || ok
	}
	require.True(t, asked, "the filters of the old branch are in flight")

	// The fork at 22: blocks 23..27 of another branch.
	fork := mineBlocks(t, m.n.cfg.Network, &p.blocks[22].Header, 5, func(i int) []*wire.MsgTx {
		return []*wire.MsgTx{payTo(byte(200+i), 1000, p2wpkh(1))}
	})
	p.gone = p.blocks[23:]
	p.blocks = append(p.blocks[:23:23], fork...)
	p.filters = append(p.filters[:23:23], cfTestFilters(t, fork)...)
	p.cps = p.filters
	p.ps.lastBlock = 27
	hdrs = hdrs[:0]
	for _, b := range fork {
		hdrs = append(hdrs, &b.Header)
	}
	m.handle(peerWireMsg{ps: p.ps, msg: &wire.MsgHeaders{Headers: hdrs}})
	require.Positive(t, m.st.Reorgs)
	require.True(t, p.ps.cf.owes(), "the ping after the reorg is owed")
	runCF(p)

	require.False(t, bannedAddr(m, p.ps.addr), "an honest peer that skips a stale request is not banned")
	require.True(t, p.ps.ready)
	require.Equal(t, int32(27), m.synced.Height)
	require.Equal(t, fork[4].BlockHash(), m.synced.Hash)
	require.Len(t, w.Txs(), 5, "the new branch's payments")
	require.False(t, p.ps.cf.owes(), "nothing stale is still owed")
	require.Empty(t, p.ps.cf.filters)
	require.Empty(t, p.ps.cf.barriers)
}

// cfTestFilters returns the basic filters of blocks.
func cfTestFilters(t *testing.T, blocks []*wire.MsgBlock) [][]byte {
	out := make([][]byte, len(blocks))
	for i, b := range blocks {
		f, err := builder.BuildBasicFilter(b, nil)
		require.NoError(t, err)
		out[i], err = f.NBytes()
		require.NoError(t, err)
	}
	return out
}

// TestCFBlocksAheadBounded syncs 120 blocks that all pay the watcher:
// the node never asks or holds more than cfMaxBlocksAhead whole blocks
// ahead of the one it delivers next, and the watcher gets every payment.
func TestCFBlocksAheadBounded(t *testing.T) {
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	_, m := newTestManager(t, w, Config{Protocol: ProtocolBIP158})
	blocks, filters := cfTestChainOf(t, m, 120, func(i int) []*wire.MsgTx {
		return []*wire.MsgTx{payTo(byte(i), 1000+int64(i), p2wpkh(1))}
	})
	p := newCFTestPeer(t, m, "10.0.0.1:8333", 0, blocks, filters, filters)
	most := 0
	p.after = func() {
		n := 0
		for h, e := range m.cf.entries {
			if h != m.next && (e.block != nil || e.asked != nil) {
				n++
			}
		}
		most = max(most, n)
	}
	m.schedule()
	runCF(p)
	require.Equal(t, int32(120), m.synced.Height)
	require.Len(t, w.Txs(), 120)
	require.LessOrEqual(t, most, cfMaxBlocksAhead)
	require.Positive(t, most)
}
