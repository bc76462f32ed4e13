package spv

import (
	"math/rand"
	"os"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/filterpolicy"
	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/bloomwatch/bloomwatch/watch"
	"github.com/bloomwatch/bloomwatch/watch/watchtest"
	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/peer"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// The tests in this file drive the manager's state machine directly:
// messages go in through handle, the messages the manager sends are
// captured by the peer's send hook and answered by simServer, a BIP37
// server built on bip37.FilterBlock (what a full node does for
// MSG_FILTERED_BLOCK) over a chain of mined regtest blocks.

// mineBlocks mines n regtest blocks on parent, block i holding
// txs(i) after a coinbase.
func mineBlocks(t testing.TB, net *netparams.Network, parent *wire.BlockHeader, n int, txs func(i int) []*wire.MsgTx) []*wire.MsgBlock {
	t.Helper()
	target := blockchain.CompactToBig(net.Params.PowLimitBits)
	var out []*wire.MsgBlock
	prev := *parent
	for i := range n {
		cb := wire.NewMsgTx(1)
		cb.AddTxIn(wire.NewTxIn(&wire.OutPoint{Index: wire.MaxPrevOutIndex}, []byte{byte(i), byte(i >> 8), 0x51, 0x51}, nil))
		cb.AddTxOut(wire.NewTxOut(50, []byte{0x51}))
		b := &wire.MsgBlock{Transactions: append([]*wire.MsgTx{cb}, txs(i)...)}
		utxs := make([]*btcutil.Tx, len(b.Transactions))
		for j, tx := range b.Transactions {
			utxs[j] = btcutil.NewTx(tx)
		}
		b.Header = wire.BlockHeader{
			Version: 4, PrevBlock: prev.BlockHash(), MerkleRoot: blockchain.CalcMerkleRoot(utxs, false),
			Timestamp: prev.Timestamp.Add(10 * time.Minute), Bits: net.Params.PowLimitBits,
		}
		for {
			h := b.Header.BlockHash()
			if blockchain.HashToBig(&h).Cmp(target) <= 0 {
				break
			}
			b.Header.Nonce++
		}
		out = append(out, b)
		prev = b.Header
	}
	return out
}

// payTo returns a tx with a unique input paying value to script.
func payTo(seed byte, value int64, script []byte) *wire.MsgTx {
	tx := wire.NewMsgTx(2)
	tx.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: chainhash.Hash{seed, 0xaa}}, []byte{0x51}, nil))
	tx.AddTxOut(wire.NewTxOut(value, script))
	return tx
}

// simServer answers a manager's requests for one simulated peer.
type simServer struct {
	t      testing.TB
	m      *manager
	ps     *peerState
	blocks map[chainhash.Hash]*wire.MsgBlock
	chain  []*wire.MsgBlock // best chain above genesis, by height-1
	filter *bip37.Filter
	queue  []wire.Message
	sent   []wire.Message // everything the manager sent
	// mempool holds unconfirmed txs served to MSG_TX and announced to
	// a mempool request when they match the filter.
	mempool map[chainhash.Hash]*wire.MsgTx
	// tamper, when set, may change a merkleblock answer and the txs
	// sent after it.
	tamper func(mb *wire.MsgMerkleBlock, txs []*wire.MsgTx) (*wire.MsgMerkleBlock, []*wire.MsgTx)
	// noFullBlocks answers full-block requests with notfound.
	noFullBlocks bool
	// rules are the relevance rules the simulated server applies.
	rules bip37.Rules
	// deliverVia, when set, takes the answers instead of the manager
	// (the fuzz target passes them through the peer's account).
	deliverVia func(*simServer, wire.Message)
}

// addSimPeer connects a simulated peer serving chain to m.
func addSimPeer(t testing.TB, m *manager, addr string, chain []*wire.MsgBlock, slot int) *simServer {
	t.Helper()
	s := newSimPeer(t, m, addr, chain, slot)
	s.connect()
	return s
}

// newSimPeer builds a simulated peer serving chain, not yet connected.
func newSimPeer(t testing.TB, m *manager, addr string, chain []*wire.MsgBlock, slot int) *simServer {
	t.Helper()
	p, err := peer.NewOutboundPeer(&peer.Config{ChainParams: m.n.cfg.Network.Params}, addr)
	require.NoError(t, err)
	s := &simServer{t: t, m: m, blocks: make(map[chainhash.Hash]*wire.MsgBlock)}
	s.ps = &peerState{addr: addr, p: p, slot: slot}
	s.ps.sendHook = func(msg wire.Message) { s.queue = append(s.queue, msg); s.sent = append(s.sent, msg) }
	s.setChain(chain)
	return s
}

// connect hands the peer to the manager as a completed handshake would.
func (s *simServer) connect() {
	s.m.handle(peerReadyMsg{ps: s.ps})
	// The height a version message would have announced.
	s.ps.lastBlock = max(s.ps.lastBlock, int32(len(s.chain)))
}

// setChain replaces the served best chain (blocks stay known).
func (s *simServer) setChain(chain []*wire.MsgBlock) {
	s.chain = chain
	for _, b := range chain {
		s.blocks[b.BlockHash()] = b
	}
}

// deliver hands one message from the peer to the manager.
func (s *simServer) deliver(msg wire.Message) {
	if !s.ps.ready {
		return
	}
	if s.deliverVia != nil {
		s.deliverVia(s, msg)
		return
	}
	s.m.handle(peerWireMsg{ps: s.ps, msg: msg})
}

// run answers queued requests until there are none.
func (s *simServer) run() {
	for len(s.queue) > 0 {
		s.runOne()
	}
}

// runOne answers the first queued request.
func (s *simServer) runOne() {
	msg := s.queue[0]
	s.queue = s.queue[1:]
	switch msg := msg.(type) {
	case *wire.MsgFilterLoad:
		f, err := bip37.LoadFilter(msg)
		require.NoError(s.t, err)
		f.SetRules(s.rules)
		s.filter = f
	case *wire.MsgGetHeaders:
		s.deliver(s.headersAfter(msg.BlockLocatorHashes))
	case *wire.MsgGetData:
		var nf *wire.MsgNotFound
		for _, iv := range msg.InvList {
			if tx := s.mempool[iv.Hash]; tx != nil && iv.Type == wire.InvTypeTx {
				s.deliver(tx)
				continue
			}
			b := s.blocks[iv.Hash]
			if iv.Type == wire.InvTypeBlock && b != nil && !s.noFullBlocks {
				s.deliver(b)
				continue
			}
			if iv.Type != wire.InvTypeFilteredBlock || b == nil {
				if nf == nil {
					nf = wire.NewMsgNotFound()
				}
				_ = nf.AddInvVect(iv)
				continue
			}
			mb, idx := bip37.FilterBlock(s.filter, b)
			txs := make([]*wire.MsgTx, len(idx))
			for i, j := range idx {
				txs[i] = b.Transactions[j]
			}
			if s.tamper != nil {
				mb, txs = s.tamper(mb, txs)
			}
			s.deliver(mb)
			for _, tx := range txs {
				s.deliver(tx)
			}
		}
		if nf != nil {
			s.deliver(nf)
		}
	case *wire.MsgPing:
		s.deliver(wire.NewMsgPong(msg.Nonce))
	case *wire.MsgMemPool:
		inv := wire.NewMsgInv()
		for id, tx := range s.mempool {
			if s.filter.MatchTxAndUpdate(tx) {
				_ = inv.AddInvVect(wire.NewInvVect(wire.InvTypeTx, &id))
			}
		}
		if len(inv.InvList) > 0 {
			s.deliver(inv)
		}
	}
}

// headersAfter answers a getheaders from the served chain.
func (s *simServer) headersAfter(locator []*chainhash.Hash) *wire.MsgHeaders {
	start := 0
	for _, h := range locator {
		found := false
		for i, b := range s.chain {
			if b.BlockHash() == *h {
				start, found = i+1, true
				break
			}
		}
		if found {
			break
		}
	}
	msg := wire.NewMsgHeaders()
	for i := start; i < len(s.chain) && len(msg.Headers) < wire.MaxBlockHeadersPerMsg; i++ {
		_ = msg.AddBlockHeader(&s.chain[i].Header)
	}
	return msg
}

// filterLoads counts the filterloads the manager sent this peer.
func (s *simServer) filterLoads() int {
	n := 0
	for _, msg := range s.sent {
		if _, ok := msg.(*wire.MsgFilterLoad); ok {
			n++
		}
	}
	return n
}

// newTestManager returns a node (not started) and its manager for w, on
// cfg.DataDir (a fresh one when empty).
func newTestManager(t testing.TB, w watch.Watcher, cfg Config) (*Node, *manager) {
	t.Helper()
	net, err := netparams.Lookup("regtest")
	require.NoError(t, err)
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	cfg.Network, cfg.Watcher = net, w
	if cfg.SpotCheckEvery == 0 {
		cfg.SpotCheckEvery = -1
	}
	n, err := New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = n.Stop() })
	m, err := newManager(n)
	require.NoError(t, err)
	return n, m
}

// genesis returns the regtest genesis header.
func genesis(n *Node) *wire.BlockHeader { return &n.cfg.Network.Params.GenesisBlock.Header }

func TestManagerGapRaceRefetches(t *testing.T) {
	script := func(i uint32) []byte { return p2wpkh(byte(0x40 + i)) }
	w, err := watchtest.NewMemWatcherGap(1, 2, func(i uint32) ([]byte, error) { return script(i), nil })
	require.NoError(t, err)
	n, m := newTestManager(t, w, Config{Tuning: Tuning{BatchSize: 10}})
	// Block 2 pays index 1 (watched from the start: reveals 2 and 3) and
	// index 3 (only found when block 2 is filtered again); block 3 pays
	// index 3 again, block 5 index 2.
	pays := map[int][]*wire.MsgTx{
		1: {payTo(1, 1000, script(1)), payTo(2, 2000, script(3))},
		2: {payTo(3, 3000, script(3))},
		4: {payTo(4, 4000, script(2))},
	}
	chain := mineBlocks(t, n.cfg.Network, genesis(n), 6, func(i int) []*wire.MsgTx {
		return append(pays[i], payTo(byte(100+i), 7, p2wpkh(0x99)))
	})
	s := addSimPeer(t, m, "sim:1", chain, 0)
	s.run()
	got := len(w.Txs())
	require.Equal(t, 4, got, "watcher has %d txs, want 4: %+v", got, w.Txs())
	require.Equal(t, int32(6), m.synced.Height, "synced to %d (%v)", m.synced.Height, m.st.Synced)
	require.True(t, m.st.Synced, "synced to %d (%v)", m.synced.Height, m.st.Synced)
	_, again := w.Applied()
	require.NotEqual(t, 0, again, "block 2 was not filtered again (reapplied %d, rerequested %d)", again, m.st.Rerequested)
	require.NotEqual(t, 0, m.st.Rerequested, "block 2 was not filtered again (reapplied %d, rerequested %d)", again, m.st.Rerequested)
	require.GreaterOrEqual(t, s.filterLoads(), 2, "%d filterloads", s.filterLoads())
	require.Equal(t, 4, m.st.Relevant, "status counts %d relevant txs", m.st.Relevant)
}

func TestManagerNoReloadWhenServerHoldsOutpoints(t *testing.T) {
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	n, m := newTestManager(t, w, Config{})
	pay := payTo(1, 5000, p2wpkh(1))
	spend := wire.NewMsgTx(2)
	spend.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: pay.TxHash()}, nil, [][]byte{{1}}))
	spend.AddTxOut(wire.NewTxOut(4000, p2wpkh(0x77)))
	chain := mineBlocks(t, n.cfg.Network, genesis(n), 4, func(i int) []*wire.MsgTx {
		switch i {
		case 0:
			return []*wire.MsgTx{pay}
		case 2:
			return []*wire.MsgTx{spend} // matched through the outpoint UPDATE_ALL added
		}
		return nil
	})
	s := addSimPeer(t, m, "sim:1", chain, 0)
	s.run()
	require.Len(t, w.Txs(), 2, "txs %+v balance %d", w.Txs(), w.Balance())
	require.Equal(t, int64(0), w.Balance(), "txs %+v balance %d", w.Txs(), w.Balance())
	require.Equal(t, 1, s.filterLoads(), "%d filterloads; the server's UPDATE_ALL outpoint needs no reload", s.filterLoads())
}

func TestManagerDropsUnmatchedTxs(t *testing.T) {
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	n, m := newTestManager(t, w, Config{})
	chain := mineBlocks(t, n.cfg.Network, genesis(n), 3, func(i int) []*wire.MsgTx {
		return []*wire.MsgTx{payTo(byte(i), 5, p2wpkh(0x55)), payTo(byte(i+50), 6, p2wpkh(0x56))}
	})
	s := addSimPeer(t, m, "sim:1", chain, 0)
	blocks := s.blocks
	// The peer marks every tx of every block as matched (a valid proof)
	// and sends them all: bitcoinj issue 876.
	s.tamper = func(mb *wire.MsgMerkleBlock, _ []*wire.MsgTx) (*wire.MsgMerkleBlock, []*wire.MsgTx) {
		b := blocks[mb.Header.BlockHash()]
		all := bip37.BuildMerkleBlock(b, func(int, *wire.MsgTx) bool { return true })
		return all, b.Transactions
	}
	s.run()
	require.Equal(t, 0, m.st.FalsePositives, "false positives %d dropped %d", m.st.FalsePositives, m.st.Dropped)
	require.NotEqual(t, 0, m.st.Dropped, "false positives %d dropped %d", m.st.FalsePositives, m.st.Dropped)
	require.Equal(t, 1, s.filterLoads(), "%d filterloads: inflated false positives must not reload", s.filterLoads())
	_, banned := n.bans.IsBanned("sim:1")
	require.True(t, banned, "peer not banned (score %d)", n.bans.Score("sim:1"))
}

func TestManagerBansForgedAnswers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tamper func(blocks map[chainhash.Hash]*wire.MsgBlock) func(*wire.MsgMerkleBlock, []*wire.MsgTx) (*wire.MsgMerkleBlock, []*wire.MsgTx)
		kind   misbehavior
	}{
		{"bad root", func(map[chainhash.Hash]*wire.MsgBlock) func(*wire.MsgMerkleBlock, []*wire.MsgTx) (*wire.MsgMerkleBlock, []*wire.MsgTx) {
			return func(mb *wire.MsgMerkleBlock, txs []*wire.MsgTx) (*wire.MsgMerkleBlock, []*wire.MsgTx) {
				h := *mb.Hashes[0]
				h[0] ^= 1
				mb.Hashes[0] = &h
				return mb, txs
			}
		}, misbehaviorInvalidMerkleTree},
		{"tx not in block", func(map[chainhash.Hash]*wire.MsgBlock) func(*wire.MsgMerkleBlock, []*wire.MsgTx) (*wire.MsgMerkleBlock, []*wire.MsgTx) {
			return func(mb *wire.MsgMerkleBlock, txs []*wire.MsgTx) (*wire.MsgMerkleBlock, []*wire.MsgTx) {
				return mb, append(txs, payTo(0xee, 1, p2wpkh(1)))
			}
		}, misbehaviorTxNotInBlock},
		{"unrequested block", func(blocks map[chainhash.Hash]*wire.MsgBlock) func(*wire.MsgMerkleBlock, []*wire.MsgTx) (*wire.MsgMerkleBlock, []*wire.MsgTx) {
			return func(mb *wire.MsgMerkleBlock, txs []*wire.MsgTx) (*wire.MsgMerkleBlock, []*wire.MsgTx) {
				other := *mb
				other.Header.Nonce ^= 0xffff // another header: never requested
				return &other, nil
			}
		}, misbehaviorUnrequestedBlock},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := watchtest.NewMemWatcher(1, p2wpkh(1))
			n, m := newTestManager(t, w, Config{})
			chain := mineBlocks(t, n.cfg.Network, genesis(n), 3, func(i int) []*wire.MsgTx {
				return []*wire.MsgTx{payTo(byte(i), 5, p2wpkh(1)), payTo(byte(i+50), 6, p2wpkh(0x56))}
			})
			bad := addSimPeer(t, m, "bad:1", chain, 0)
			bad.tamper = tc.tamper(bad.blocks)
			good := addSimPeer(t, m, "good:1", chain, 1)
			bad.run()
			ban, banned := n.bans.IsBanned("bad:1")
			require.True(t, banned, "ban %+v (banned %v), want %v", ban, banned, tc.kind)
			require.Equal(t, tc.kind.String(), ban.Reason[:len(tc.kind.String())], "ban %+v (banned %v), want %v", ban, banned, tc.kind)
			good.run()
			require.Len(t, w.Txs(), 3, "after the honest peer: %d txs, synced to %d", len(w.Txs()), m.synced.Height)
			require.Equal(t, int32(3), m.synced.Height, "after the honest peer: %d txs, synced to %d", len(w.Txs()), m.synced.Height)
		})
	}
}

func TestManagerOmissionSpotCheck(t *testing.T) {
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	n, m := newTestManager(t, w, Config{SpotCheckEvery: 1})
	chain := mineBlocks(t, n.cfg.Network, genesis(n), 3, func(i int) []*wire.MsgTx {
		return []*wire.MsgTx{payTo(byte(i), 5, p2wpkh(1))}
	})
	liar := addSimPeer(t, m, "liar:1", chain, 0)
	blocks := liar.blocks
	// A valid proof with no match: the wallet's tx is hidden.
	liar.tamper = func(mb *wire.MsgMerkleBlock, _ []*wire.MsgTx) (*wire.MsgMerkleBlock, []*wire.MsgTx) {
		return bip37.BuildMerkleBlock(blocks[mb.Header.BlockHash()], func(int, *wire.MsgTx) bool { return false }), nil
	}
	honest := addSimPeer(t, m, "honest:1", chain, 1)
	for range 5 {
		liar.run()
		honest.run()
	}
	_, banned := n.bans.IsBanned("liar:1")
	require.True(t, banned, "omission not detected: omissions %d, bans %+v", m.st.Omissions, n.bans.Bans())
	require.NotEqual(t, 0, m.st.Omissions, "omission not detected: omissions %d, bans %+v", m.st.Omissions, n.bans.Bans())
	require.Len(t, w.Txs(), 3, "watcher has %d of 3 txs after the omission", len(w.Txs()))
}

func TestManagerReorgRollsBack(t *testing.T) {
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	n, m := newTestManager(t, w, Config{})
	base := mineBlocks(t, n.cfg.Network, genesis(n), 3, func(int) []*wire.MsgTx { return nil })
	lose := mineBlocks(t, n.cfg.Network, &base[2].Header, 2, func(i int) []*wire.MsgTx {
		return []*wire.MsgTx{payTo(byte(10+i), 100, p2wpkh(1))}
	})
	win := mineBlocks(t, n.cfg.Network, &base[2].Header, 3, func(i int) []*wire.MsgTx {
		return []*wire.MsgTx{payTo(byte(20+i), 200, p2wpkh(1))}
	})
	s := addSimPeer(t, m, "sim:1", append(append([]*wire.MsgBlock{}, base...), lose...), 0)
	s.run()
	require.Equal(t, int32(5), m.synced.Height, "before the reorg: height %d balance %d", m.synced.Height, w.Balance())
	require.Equal(t, int64(200), w.Balance(), "before the reorg: height %d balance %d", m.synced.Height, w.Balance())
	sub := n.Subscribe()
	defer sub.Cancel()
	s.setChain(append(append([]*wire.MsgBlock{}, base...), win...))
	inv := wire.NewMsgInv()
	h := win[2].BlockHash()
	_ = inv.AddInvVect(wire.NewInvVect(wire.InvTypeBlock, &h))
	s.deliver(inv)
	s.run()
	require.Equal(t, int32(6), m.synced.Height, "after the reorg: %+v balance %d txs %d", m.synced, w.Balance(), len(w.Txs()))
	require.Equal(t, h, m.synced.Hash, "after the reorg: %+v balance %d txs %d", m.synced, w.Balance(), len(w.Txs()))
	require.Equal(t, int64(600), w.Balance(), "after the reorg: %+v balance %d txs %d", m.synced, w.Balance(), len(w.Txs()))
	require.Len(t, w.Txs(), 3, "after the reorg: %+v balance %d txs %d", m.synced, w.Balance(), len(w.Txs()))
	r := waitEvent(t, sub, "Reorg", func(ev Event) bool {
		_, ok := ev.(Reorg)
		return ok
	}).(Reorg)
	require.Equal(t, int32(3), r.ForkHeight, "reorg event %+v", r)
	require.Equal(t, int32(5), r.OldHeight, "reorg event %+v", r)
	require.Equal(t, int32(6), r.NewHeight, "reorg event %+v", r)
}

func TestManagerNotServedAndMissingTxs(t *testing.T) {
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	n, m := newTestManager(t, w, Config{})
	chain := mineBlocks(t, n.cfg.Network, genesis(n), 2, func(i int) []*wire.MsgTx {
		return []*wire.MsgTx{payTo(byte(i), 5, p2wpkh(1))}
	})
	// The first peer sends the merkle blocks but not their txs, and
	// answers notfound to MSG_TX: the blocks come from the second.
	stingy := addSimPeer(t, m, "stingy:1", chain, 0)
	stingy.tamper = func(mb *wire.MsgMerkleBlock, _ []*wire.MsgTx) (*wire.MsgMerkleBlock, []*wire.MsgTx) {
		return mb, nil
	}
	other := addSimPeer(t, m, "other:1", chain, 1)
	for range 4 {
		stingy.run()
		other.run()
	}
	require.Len(t, w.Txs(), 2, "%d txs, synced to %d", len(w.Txs()), m.synced.Height)
	require.Equal(t, int32(2), m.synced.Height, "%d txs, synced to %d", len(w.Txs()), m.synced.Height)
	asked := false
	for _, msg := range stingy.sent {
		if gd, ok := msg.(*wire.MsgGetData); ok && gd.InvList[0].Type == wire.InvTypeTx {
			asked = true
		}
	}
	require.True(t, asked, "missing matched txs were not asked with MSG_TX")
}

func TestManagerTranscriptRecordsLoads(t *testing.T) {
	w := watchtest.NewMemWatcher(5, p2wpkh(1))
	n, m := newTestManager(t, w, Config{})
	chain := mineBlocks(t, n.cfg.Network, genesis(n), 6, func(int) []*wire.MsgTx { return nil })
	s := addSimPeer(t, m, "sim:1", chain, 0)
	s.run()
	m.handle(reloadMsg{reason: transcript.ReasonManual})
	s.run()
	all, err := transcript.Read(openFile(t, n.cfg.DataDir+"/"+transcript.FileName))
	require.NoError(t, err)
	recs := transcript.FilterRecords(all)
	require.Len(t, recs, 2, "records %+v", recs)
	require.Equal(t, transcript.ReasonInitial, recs[0].Reason, "records %+v", recs)
	require.Equal(t, transcript.ReasonManual, recs[1].Reason, "records %+v", recs)
	require.Equal(t, int32(4), recs[0].Height, "heights %d, %d (birthday 5, tip 6)", recs[0].Height, recs[1].Height)
	require.Equal(t, int32(6), recs[1].Height, "heights %d, %d (birthday 5, tip 6)", recs[0].Height, recs[1].Height)
	require.Equal(t, "sim:1", recs[0].Peer, "heights %d, %d (birthday 5, tip 6)", recs[0].Height, recs[1].Height)
	f, err := bip37.Deserialize(recs[0].Filter)
	require.NoError(t, err, "recorded filter %v", f)
	require.Equal(t, filterpolicy.FilterFlags, f.Flags(), "recorded filter %v: %v", f, err)
	require.True(t, f.Matches(p2wpkh(1)[2:]), "recorded filter %v: %v", f, err)
}

// openFile opens path for the test.
func openFile(t testing.TB, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

func TestManagerReloadsSaturatedFilter(t *testing.T) {
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	n, m := newTestManager(t, w, Config{FPRate: 0.001, ReloadEvery: 1, Tuning: Tuning{ReloadFPRatio: 2, BatchSize: 2}})
	// Every block pays the watcher 30 outpoints: the server inserts 30
	// outpoints per block into a filter sized for 64 elements; the
	// drifted filter is reloaded at the next reload point (every block
	// here), once the blocks in flight are answered.
	chain := mineBlocks(t, n.cfg.Network, genesis(n), 6, func(i int) []*wire.MsgTx {
		tx := payTo(byte(i), 1, p2wpkh(1))
		for range 29 {
			tx.AddTxOut(wire.NewTxOut(1, p2wpkh(1)))
		}
		return []*wire.MsgTx{tx}
	})
	s := addSimPeer(t, m, "sim:1", chain, 0)
	s.run()
	recs, err := transcript.Read(openFile(t, n.cfg.DataDir+"/"+transcript.FileName))
	require.NoError(t, err)
	var drift []transcript.Record
	for _, r := range recs {
		if r.Reason == transcript.ReasonFPDrift {
			drift = append(drift, r)
		}
	}
	require.NotEmpty(t, drift, "no fp-drift reload in %d records", len(recs))
	require.Greater(t, len(drift[0].Filter), len(recs[0].Filter), "reloaded filter %d bytes, first %d: capacity did not grow with the elements", len(drift[0].Filter), len(recs[0].Filter))
	require.Len(t, w.Txs(), 6, "%d txs, synced to %d", len(w.Txs()), m.synced.Height)
	require.Equal(t, int32(6), m.synced.Height, "%d txs, synced to %d", len(w.Txs()), m.synced.Height)
	p := m.dl.mirror.CurrentFPRate()
	require.LessOrEqual(t, p, 2*0.001, "predicted rate %v after the reloads", p)
}

// randomMessage returns a random, mostly malformed, peer message; some
// refer to the real chain so they pass the first checks.
func randomMessage(r *rand.Rand, chain []*wire.MsgBlock) wire.Message {
	randHash := func() *chainhash.Hash {
		var h chainhash.Hash
		r.Read(h[:])
		return &h
	}
	pick := func() *wire.MsgBlock { return chain[r.Intn(len(chain))] }
	switch r.Intn(9) {
	case 0:
		mb := &wire.MsgMerkleBlock{Header: pick().Header, Transactions: uint32(r.Intn(40))}
		for range r.Intn(6) {
			mb.Hashes = append(mb.Hashes, randHash())
		}
		mb.Flags = make([]byte, r.Intn(3))
		r.Read(mb.Flags)
		return mb
	case 1:
		mb, _ := bip37.FilterBlock(mustFilter(), pick())
		return mb
	case 2:
		b := pick()
		return b.Transactions[r.Intn(len(b.Transactions))]
	case 3:
		return payTo(byte(r.Intn(256)), int64(r.Intn(1000)), p2wpkh(byte(r.Intn(3))))
	case 4:
		msg := wire.NewMsgHeaders()
		start := r.Intn(len(chain))
		for i := start; i < len(chain) && i < start+r.Intn(4); i++ {
			h := chain[i].Header
			if r.Intn(3) == 0 {
				h.Nonce++
			}
			_ = msg.AddBlockHeader(&h)
		}
		return msg
	case 5:
		nf := wire.NewMsgNotFound()
		_ = nf.AddInvVect(wire.NewInvVect(wire.InvType(r.Intn(4)), randHash()))
		h := pick().BlockHash()
		_ = nf.AddInvVect(wire.NewInvVect(wire.InvTypeFilteredBlock, &h))
		return nf
	case 6:
		return wire.NewMsgPong(r.Uint64())
	case 7:
		inv := wire.NewMsgInv()
		_ = inv.AddInvVect(wire.NewInvVect(wire.InvType(1+r.Intn(2)), randHash()))
		return inv
	default:
		return &wire.MsgBlock{Header: pick().Header}
	}
}

// mustFilter returns a filter matching the test scripts.
func mustFilter() *bip37.Filter {
	f, err := filterpolicy.BuildFilter(watch.Elements{Data: [][]byte{p2wpkh(1)[2:]}}, filterpolicy.DefaultFPRate, 0)
	if err != nil {
		panic(err)
	}
	return f
}

func TestManagerSurvivesRandomMessages(t *testing.T) {
	for seed := int64(1); seed <= 20; seed++ {
		r := rand.New(rand.NewSource(seed))
		w := watchtest.NewMemWatcher(1, p2wpkh(1))
		n, m := newTestManager(t, w, Config{SpotCheckEvery: 2, Tuning: Tuning{BatchSize: 5, Window: 10}})
		chain := mineBlocks(t, n.cfg.Network, genesis(n), 12, func(i int) []*wire.MsgTx {
			return []*wire.MsgTx{payTo(byte(i), 5, p2wpkh(byte(i%3))), payTo(byte(i+100), 6, p2wpkh(0x56))}
		})
		hostile := addSimPeer(t, m, "hostile:1", chain, 0)
		honest := addSimPeer(t, m, "honest:1", chain, 1)
		for range 300 {
			hostile.deliver(randomMessage(r, chain))
			if r.Intn(10) == 0 {
				hostile.run()
			}
		}
		for range 6 {
			honest.run()
			hostile.run()
		}
		require.NoError(t, m.st.Err, "seed %d: sync failed", seed)
		require.Equal(t, int32(12), m.synced.Height, "seed %d: synced to %d with %d txs, want 12 and 4", seed, m.synced.Height, len(w.Txs()))
		require.Len(t, w.Txs(), 4, "seed %d: synced to %d with %d txs, want 12 and 4", seed, m.synced.Height, len(w.Txs()))
	}
}

func TestManagerWatcherOnStaleBranchAtStart(t *testing.T) {
	// The watcher applied a branch that lost while the node was away, and
	// the node's header store is new (it never saw that branch): the
	// watcher is rolled back and the best chain applied.
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	n, m := newTestManager(t, w, Config{})
	base := mineBlocks(t, n.cfg.Network, genesis(n), 2, func(int) []*wire.MsgTx { return nil })
	lose := mineBlocks(t, n.cfg.Network, &base[1].Header, 2, func(i int) []*wire.MsgTx {
		return []*wire.MsgTx{payTo(byte(10+i), 100, p2wpkh(1))}
	})
	win := mineBlocks(t, n.cfg.Network, &base[1].Header, 3, func(i int) []*wire.MsgTx {
		return []*wire.MsgTx{payTo(byte(20+i), 200, p2wpkh(1))}
	})
	s := addSimPeer(t, m, "sim:1", append(append([]*wire.MsgBlock{}, base...), lose...), 0)
	s.run()
	sp, _ := w.SyncedTo()
	require.Equal(t, int32(4), sp.Height, "first sync: %+v balance %d", sp, w.Balance())
	require.Equal(t, int64(200), w.Balance(), "first sync: %+v balance %d", sp, w.Balance())
	_, m2 := newTestManager(t, w, Config{})
	s2 := addSimPeer(t, m2, "sim:2", append(append([]*wire.MsgBlock{}, base...), win...), 0)
	s2.run()
	sp, _ = w.SyncedTo()
	require.Equal(t, int32(5), sp.Height, "after restart: %+v balance %d txs %d", sp, w.Balance(), len(w.Txs()))
	require.Equal(t, win[2].BlockHash(), sp.Hash, "after restart: %+v balance %d txs %d", sp, w.Balance(), len(w.Txs()))
	require.Equal(t, int64(600), w.Balance(), "after restart: %+v balance %d txs %d", sp, w.Balance(), len(w.Txs()))
	require.Len(t, w.Txs(), 3, "after restart: %+v balance %d txs %d", sp, w.Balance(), len(w.Txs()))
}

func TestManagerMempool(t *testing.T) {
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	n, m := newTestManager(t, w, Config{})
	chain := mineBlocks(t, n.cfg.Network, genesis(n), 2, func(int) []*wire.MsgTx { return nil })
	s := addSimPeer(t, m, "sim:1", chain, 0)
	pay := payTo(1, 777, p2wpkh(1))
	noise := payTo(2, 5, p2wpkh(9))
	s.mempool = map[chainhash.Hash]*wire.MsgTx{pay.TxHash(): pay, noise.TxHash(): noise}
	s.run()
	require.True(t, m.st.Synced, "not synced")
	got := w.Mempool()
	require.Len(t, got, 1, "mempool %+v", got)
	require.Equal(t, int64(777), got[pay.TxHash()].Amount, "mempool %+v", got)
	// An announced tx that does not match the filter is dropped, never
	// offered to the watcher, and not scored: a server may announce its
	// mempool unfiltered (bcoin answers BIP35 mempool that way).
	inv := wire.NewMsgInv()
	id := noise.TxHash()
	_ = inv.AddInvVect(wire.NewInvVect(wire.InvTypeTx, &id))
	s.deliver(inv)
	s.run()
	require.Equal(t, 1, m.st.Dropped, "dropped %d score %d mempool %d offered %d", m.st.Dropped, n.bans.Score("sim:1"), len(w.Mempool()), m.st.MempoolTxs)
	require.Equal(t, uint32(0), n.bans.Score("sim:1"), "dropped %d score %d mempool %d offered %d", m.st.Dropped, n.bans.Score("sim:1"), len(w.Mempool()), m.st.MempoolTxs)
	require.Len(t, w.Mempool(), 1, "dropped %d score %d mempool %d offered %d", m.st.Dropped, n.bans.Score("sim:1"), len(w.Mempool()), m.st.MempoolTxs)
	require.Equal(t, 1, m.st.MempoolTxs, "dropped %d score %d mempool %d offered %d", m.st.Dropped, n.bans.Score("sim:1"), len(w.Mempool()), m.st.MempoolTxs)
	// Mined, the payment becomes a confirmed tx.
	s.setChain(append(chain, mineBlocks(t, n.cfg.Network, &chain[1].Header, 1, func(int) []*wire.MsgTx { return []*wire.MsgTx{pay} })...))
	inv = wire.NewMsgInv()
	h := s.chain[2].BlockHash()
	_ = inv.AddInvVect(wire.NewInvVect(wire.InvTypeBlock, &h))
	s.deliver(inv)
	s.run()
	tx, ok := w.Txs()[pay.TxHash()]
	require.True(t, ok, "confirmed %+v (%v), mempool %d", tx, ok, len(w.Mempool()))
	require.Equal(t, int32(3), tx.Height, "confirmed %+v (%v), mempool %d", tx, ok, len(w.Mempool()))
	require.Empty(t, w.Mempool(), "confirmed %+v (%v), mempool %d", tx, ok, len(w.Mempool()))
}

// TestManagerDropsUnconnectingAnnouncer checks that a peer announcing
// headers that never connect is answered with getheaders up to
// maxUnconnectingHeaders times, then scored and dropped.
func TestManagerDropsUnconnectingAnnouncer(t *testing.T) {
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	n, m := newTestManager(t, w, Config{})
	none := func(int) []*wire.MsgTx { return nil }
	chain := mineBlocks(t, n.cfg.Network, genesis(n), 3, none)
	s := addSimPeer(t, m, "announcer:1", chain, 0)
	s.run()
	// A chain of our own that does not start from anything the node knows.
	stray := wire.BlockHeader{Version: 1, PrevBlock: chainhash.Hash{0xab}, Timestamp: chain[2].Header.Timestamp, Bits: chain[2].Header.Bits}
	orphans := mineBlocks(t, n.cfg.Network, &stray, maxUnconnectingHeaders+1, none)
	for i, b := range orphans {
		msg := wire.NewMsgHeaders()
		hdr := b.Header
		require.NoError(t, msg.AddBlockHeader(&hdr))
		s.deliver(msg)
		if i < maxUnconnectingHeaders {
			require.True(t, s.ps.ready, "dropped after %d unconnecting announcements, want more patience", i+1)
			s.run() // the honest answer to our getheaders: nothing new
		}
	}
	require.False(t, s.ps.ready, "still connected after %d unconnecting announcements", len(orphans))
	score := n.bans.Score("announcer:1")
	require.NotEqual(t, uint32(0), score, "no misbehaviour scored")
}
