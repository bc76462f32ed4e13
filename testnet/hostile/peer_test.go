package hostile

import (
	"context"
	"fmt"
	"math/big"
	"net"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/peer"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/testnet"
)

// fixture is the chain every test reads: a regtest btcd with the harness's
// setup blocks, then testBlocks blocks of noise, some paying watchScript.
type fixture struct {
	h         *testnet.Harness
	blocks    []chainhash.Hash        // the test blocks, oldest first
	paid      map[chainhash.Hash]bool // txids paying watchHash
	paidBlock map[chainhash.Hash]chainhash.Hash
	tip       int32
}

// testBlocks is the number of blocks mined on top of the setup.
const testBlocks = 6

// watchHash is the watched P2WPKH key hash.
var watchHash = btcutil.Hash160([]byte("bloomwatch hostile test key"))

// The fixture is built on first use, so the pure tests and the fuzz
// targets of this package never start btcd.
var (
	fx        *fixture
	fxOnce    sync.Once
	fxErr     error
	fxHarness *testnet.Harness
)

func TestMain(m *testing.M) {
	code := m.Run()
	if fxHarness != nil {
		if err := fxHarness.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "close harness:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// needFixture starts the harness and builds the chain once.
func needFixture(t *testing.T) {
	t.Helper()
	fxOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		fxHarness, fxErr = testnet.New(ctx, testnet.Options{})
		if fxErr == nil {
			fx, fxErr = buildFixture(fxHarness)
		}
	})
	require.NoError(t, fxErr, "fixture")
}

// buildFixture mines the test blocks: 4 noise txs each, and a payment to
// watchHash in blocks 0, 2, 3 and 5.
func buildFixture(h *testnet.Harness) (*fixture, error) {
	script, err := txscript.NewScriptBuilder().AddOp(txscript.OP_0).AddData(watchHash).Script()
	if err != nil {
		return nil, err
	}
	f := &fixture{h: h, paid: map[chainhash.Hash]bool{}, paidBlock: map[chainhash.Hash]chainhash.Hash{}}
	for i := 0; i < testBlocks; i++ {
		if _, err := h.Noise(4); err != nil {
			return nil, fmt.Errorf("noise: %w", err)
		}
		var pay *wire.MsgTx
		if i != 1 && i != 4 {
			if pay, err = h.Pay([]*wire.TxOut{wire.NewTxOut(50_000+int64(i), script)}); err != nil {
				return nil, fmt.Errorf("pay: %w", err)
			}
			f.paid[pay.TxHash()] = true
		}
		hashes, err := h.Mine(1)
		if err != nil {
			return nil, fmt.Errorf("mine: %w", err)
		}
		f.blocks = append(f.blocks, *hashes[0])
		if pay != nil {
			f.paidBlock[*hashes[0]] = pay.TxHash()
		}
	}
	_, tip, err := h.Node().BestBlock()
	if err != nil {
		return nil, err
	}
	f.tip = tip
	return f, nil
}

// newFilter returns the filter the test client loads: watchHash only.
func newFilter(t *testing.T) *bip37.Filter {
	t.Helper()
	f, err := bip37.NewFilter(10, 0.000001, 7, bip37.UpdateAll)
	require.NoError(t, err)
	f.Add(watchHash)
	return f
}

// client is a btcd peer.Peer connected to a hostile peer, with every
// message it receives queued in order.
type client struct {
	t    *testing.T
	p    *peer.Peer
	msgs chan wire.Message
	done chan struct{}
}

// startPeer starts a hostile peer with scenario s over the fixture's node.
func startPeer(t *testing.T, s Scenario, mod func(*Config)) *Peer {
	t.Helper()
	needFixture(t)
	cfg := Config{Upstream: fx.h.Node().RPC(), Params: fx.h.Params(), Scenario: s, Log: testLog{t}}
	if s == Oversized || s == Garbage {
		cfg.Params = notRegtest()
	}
	if mod != nil {
		mod(&cfg)
	}
	p, err := Start(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, p.Close())
		st := p.Stats()
		require.Equal(t, 0, st.Active, "%d connections still open after Close", st.Active)
	})
	return p
}

// notRegtest returns the regtest parameters under the simnet magic: btcd's
// peer forgives malformed messages from localhost on regtest (its
// isAllowedReadError, for its own regression tests), so a client on
// regtest never drops a peer for them.
func notRegtest() *chaincfg.Params {
	p := *fx.h.Params()
	p.Net = wire.SimNet
	return &p
}

// waitStats polls p's stats until cond holds or 10 s pass.
func waitStats(t *testing.T, p *Peer, cond func(Stats) bool) Stats {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := p.Stats()
		if cond(st) || time.Now().After(deadline) {
			return st
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// testLog writes the peer's log lines to the test log.
type testLog struct{ t *testing.T }

func (l testLog) Write(b []byte) (int, error) {
	l.t.Helper()
	l.t.Log(string(b[:len(b)-1]))
	return len(b), nil
}

// dial connects a client to p and completes the handshake.
func dial(t *testing.T, hp *Peer) *client {
	t.Helper()
	c := &client{t: t, msgs: make(chan wire.Message, 1<<16), done: make(chan struct{})}
	queue := func(m wire.Message) {
		select {
		case c.msgs <- m:
		case <-c.done:
		}
	}
	verack := make(chan struct{})
	params := fx.h.Params()
	if hp.Scenario() == Oversized || hp.Scenario() == Garbage {
		params = notRegtest()
	}
	cfg := &peer.Config{
		ChainParams:      params,
		UserAgentName:    "hostile-test",
		UserAgentVersion: "0.1",
		Listeners: peer.MessageListeners{
			OnVerAck:      func(*peer.Peer, *wire.MsgVerAck) { close(verack) },
			OnHeaders:     func(_ *peer.Peer, m *wire.MsgHeaders) { queue(m) },
			OnMerkleBlock: func(_ *peer.Peer, m *wire.MsgMerkleBlock) { queue(m) },
			OnTx:          func(_ *peer.Peer, m *wire.MsgTx) { queue(m) },
			OnNotFound:    func(_ *peer.Peer, m *wire.MsgNotFound) { queue(m) },
			OnPong:        func(_ *peer.Peer, m *wire.MsgPong) { queue(m) },
			OnInv:         func(_ *peer.Peer, m *wire.MsgInv) { queue(m) },
		},
	}
	p, err := peer.NewOutboundPeer(cfg, hp.Addr())
	require.NoError(t, err)
	conn, err := net.Dial("tcp", hp.Addr())
	require.NoError(t, err)
	p.AssociateConnection(conn)
	c.p = p
	t.Cleanup(func() {
		close(c.done)
		p.Disconnect()
		p.WaitForDisconnect()
	})
	select {
	case <-verack:
	case <-time.After(10 * time.Second):
		require.FailNow(t, "no verack")
	}
	return c
}

// exchange sends msgs, then a ping, and returns every message received
// before the pong (pong=true), a disconnect, or wait elapsing.
func (c *client) exchange(wait time.Duration, msgs ...wire.Message) (got []wire.Message, pong, disconnected bool) {
	nonce := uint64(time.Now().UnixNano())
	for _, m := range msgs {
		c.p.QueueMessage(m, nil)
	}
	c.p.QueueMessage(wire.NewMsgPing(nonce), nil)
	timeout := time.After(wait)
	gone := make(chan struct{})
	go func() {
		c.p.WaitForDisconnect()
		close(gone)
	}()
	for {
		select {
		case m := <-c.msgs:
			if pm, ok := m.(*wire.MsgPong); ok && pm.Nonce == nonce {
				return got, true, false
			}
			got = append(got, m)
		case <-gone:
			// Drain what arrived before the disconnect.
			for {
				select {
				case m := <-c.msgs:
					got = append(got, m)
				default:
					return got, false, true
				}
			}
		case <-timeout:
			return got, false, false
		}
	}
}

// getHeaders asks for headers from genesis.
func getHeaders() *wire.MsgGetHeaders {
	m := wire.NewMsgGetHeaders()
	_ = m.AddBlockLocatorHash(fx.h.Params().GenesisHash)
	return m
}

// getFiltered asks for the filtered test blocks.
func getFiltered(hashes ...chainhash.Hash) *wire.MsgGetData {
	m := wire.NewMsgGetData()
	for i := range hashes {
		_ = m.AddInvVect(wire.NewInvVect(wire.InvTypeFilteredBlock, &hashes[i]))
	}
	return m
}

// served is a merkleblock with the txs that followed it.
type served struct {
	mb      *wire.MsgMerkleBlock
	txs     []*wire.MsgTx
	matches []chainhash.Hash
	err     error
}

// splitServed groups received messages by merkleblock and verifies each.
func splitServed(msgs []wire.Message) (out []served, loose []wire.Message) {
	for _, m := range msgs {
		switch v := m.(type) {
		case *wire.MsgMerkleBlock:
			matches, _, err := bip37.VerifyMerkleBlock(v)
			out = append(out, served{mb: v, matches: matches, err: err})
		case *wire.MsgTx:
			if len(out) == 0 {
				loose = append(loose, v)
				continue
			}
			out[len(out)-1].txs = append(out[len(out)-1].txs, v)
		default:
			loose = append(loose, m)
		}
	}
	return out, loose
}

// loadAndFetch loads the test filter, fetches the test blocks and returns
// what came back.
func loadAndFetch(t *testing.T, c *client, wait time.Duration) ([]served, []wire.Message, bool, bool) {
	t.Helper()
	got, pong, disc := c.exchange(wait, newFilter(t).MsgFilterLoad(), getFiltered(fx.blocks...))
	s, loose := splitServed(got)
	return s, loose, pong, disc
}

func TestHonest(t *testing.T) {
	p := startPeer(t, Honest, nil)
	c := dial(t, p)
	require.NotEqual(t, wire.ServiceFlag(0), c.p.Services()&wire.SFNodeBloom, "honest peer does not advertise NODE_BLOOM")
	require.Equal(t, fx.tip, c.p.LastBlock(), "advertised height %d, want %d", c.p.LastBlock(), fx.tip)
	got, pong, _ := c.exchange(10*time.Second, getHeaders())
	require.True(t, pong, "getheaders: pong %v, %d messages", pong, len(got))
	require.Len(t, got, 1, "getheaders: pong %v, %d messages", pong, len(got))
	hdrs := got[0].(*wire.MsgHeaders).Headers
	require.Len(t, hdrs, int(fx.tip), "%d headers, want %d", len(hdrs), fx.tip)
	for i, h := range hdrs[len(hdrs)-testBlocks:] {
		require.Equal(t, fx.blocks[i], h.BlockHash(), "header %d differs from the chain", i)
	}
	blocks, loose, pong, _ := loadAndFetch(t, c, 10*time.Second)
	require.True(t, pong, "pong %v, %d loose, %d merkleblocks", pong, len(loose), len(blocks))
	require.Len(t, loose, 0, "pong %v, %d loose, %d merkleblocks", pong, len(loose), len(blocks))
	require.Len(t, blocks, testBlocks, "pong %v, %d loose, %d merkleblocks", pong, len(loose), len(blocks))
	for i, b := range blocks {
		require.NoError(t, b.err, "block %d", i)
		want := fx.paidBlock[fx.blocks[i]]
		require.Equal(t, slices.Contains(b.matches, want), (want != chainhash.Hash{}), "block %d matches %v, payment %v", i, b.matches, want)
		require.Len(t, b.txs, len(b.matches), "block %d: %d txs after %d matches", i, len(b.txs), len(b.matches))
		for j, tx := range b.txs {
			require.Equal(t, b.matches[j], tx.TxHash(), "block %d tx %d is not the matched txid", i, j)
		}
	}
	st := p.Stats()
	require.Equal(t, 0, st.Applied, "stats %+v", st)
	require.Equal(t, 1, st.FilterLoads, "stats %+v", st)
	require.Equal(t, testBlocks, st.Sent[wire.CmdMerkleBlock], "stats %+v", st)
}

func TestMerkleScenarios(t *testing.T) {
	cases := map[Scenario]bip37.MerkleReason{
		BadMerkleRoot: bip37.ReasonMerkleRootMismatch,
		DuplicateHash: bip37.ReasonDuplicateHash,
		UnusedHashes:  bip37.ReasonUnusedHashes,
		UnusedBits:    bip37.ReasonUnusedBits,
		TxCountZero:   bip37.ReasonNoTransactions,
		TxCountTooBig: bip37.ReasonTooManyTransactions,
	}
	for s, want := range cases {
		t.Run(string(s), func(t *testing.T) {
			p := startPeer(t, s, nil)
			blocks, _, pong, _ := loadAndFetch(t, dial(t, p), 10*time.Second)
			require.True(t, pong, "pong %v, %d merkleblocks", pong, len(blocks))
			require.Len(t, blocks, testBlocks, "pong %v, %d merkleblocks", pong, len(blocks))
			bad := 0
			for _, b := range blocks {
				var me *bip37.MerkleError
				if b.err == nil {
					continue
				}
				require.ErrorAs(t, b.err, &me, "block %v: %v, want reason %v", b.mb.Header.BlockHash(), b.err, want)
				require.Equal(t, want, me.Reason, "block %v: %v, want reason %v", b.mb.Header.BlockHash(), b.err, want)
				bad++
			}
			st := p.Stats()
			require.NotEqual(t, 0, bad, "%d invalid merkleblocks, stats applied %d skipped %d", bad, st.Applied, st.Skipped)
			require.Equal(t, st.Applied, bad, "%d invalid merkleblocks, stats applied %d skipped %d", bad, st.Applied, st.Skipped)
			require.Equal(t, testBlocks, st.Applied+st.Skipped, "%d invalid merkleblocks, stats applied %d skipped %d", bad, st.Applied, st.Skipped)
		})
	}
}

func TestTxNotInBlock(t *testing.T) {
	p := startPeer(t, TxNotInBlock, func(c *Config) { c.Times = 1 })
	blocks, _, pong, _ := loadAndFetch(t, dial(t, p), 10*time.Second)
	require.True(t, pong, "pong %v, %d merkleblocks", pong, len(blocks))
	require.Len(t, blocks, testBlocks, "pong %v, %d merkleblocks", pong, len(blocks))
	strays := 0
	for _, b := range blocks {
		require.NoError(t, b.err)
		for _, tx := range b.txs {
			if !slices.Contains(b.matches, tx.TxHash()) {
				strays++
			}
		}
	}
	require.Equal(t, 1, strays, "%d txs outside their merkleblock, applied %d", strays, p.Stats().Applied)
	require.Equal(t, 1, p.Stats().Applied, "%d txs outside their merkleblock, applied %d", strays, p.Stats().Applied)
}

func TestUnrequestedBlock(t *testing.T) {
	p := startPeer(t, UnrequestedBlock, func(c *Config) { c.Times = 1 })
	c := dial(t, p)
	asked := fx.blocks[3:]
	got, pong, _ := c.exchange(10*time.Second, newFilter(t).MsgFilterLoad(), getFiltered(asked...))
	blocks, _ := splitServed(got)
	require.True(t, pong, "pong %v, %d merkleblocks for %d asked", pong, len(blocks), len(asked))
	require.Len(t, blocks, len(asked)+1, "pong %v, %d merkleblocks for %d asked", pong, len(blocks), len(asked))
	extra := 0
	for _, b := range blocks {
		require.NoError(t, b.err, "unrequested block must be valid")
		if !slices.Contains(asked, b.mb.Header.BlockHash()) {
			extra++
		}
	}
	require.Equal(t, 1, extra, "%d unrequested merkleblocks, want 1", extra)
}

// headerChain reads the upstream chain's headers.
func headerChain(t *testing.T) []wire.BlockHeader {
	t.Helper()
	needFixture(t)
	headers, err := newChain(fx.h.Node().RPC()).refresh()
	require.NoError(t, err)
	return headers
}

func TestHeaderScenarios(t *testing.T) {
	chain := headerChain(t)
	for _, s := range []Scenario{HeaderBadPoW, HeaderBadBits, HeaderTimeTooOld, HeaderTimeTooNew, HeadersNotConnecting} {
		t.Run(string(s), func(t *testing.T) {
			p := startPeer(t, s, nil)
			got, pong, _ := dial(t, p).exchange(10*time.Second, getHeaders())
			require.True(t, pong, "pong %v, %d messages", pong, len(got))
			require.Len(t, got, 1, "pong %v, %d messages", pong, len(got))
			hdrs := got[0].(*wire.MsgHeaders).Headers
			if s == HeadersNotConnecting {
				require.Len(t, hdrs, 1, "%d headers; the first must not connect", len(hdrs))
				require.False(t, slices.ContainsFunc(chain, func(h wire.BlockHeader) bool { return h.BlockHash() == hdrs[0].PrevBlock }), "%d headers; the first must not connect", len(hdrs))
				return
			}
			require.Len(t, hdrs, len(chain), "%d headers, want the %d honest ones and a forged child", len(hdrs), len(chain)-1)
			for i, h := range hdrs[:len(hdrs)-1] {
				require.Equal(t, chain[i+1].BlockHash(), h.BlockHash(), "header %d is not honest", i+1)
			}
			last := hdrs[len(hdrs)-1]
			parent := chain[len(chain)-1]
			require.Equal(t, parent.BlockHash(), last.PrevBlock, "forged header does not extend the tip")
			// Exactly the named rule is broken.
			badPoW := !powValid(last)
			badBits := last.Bits != parent.Bits
			old := !last.Timestamp.After(medianTimePast(chain))
			future := last.Timestamp.After(time.Now().Add(futureLimit))
			got4 := [4]bool{badPoW, badBits, old, future}
			want := map[Scenario][4]bool{
				HeaderBadPoW:     {true, false, false, false},
				HeaderBadBits:    {false, true, false, false},
				HeaderTimeTooOld: {false, false, true, false},
				HeaderTimeTooNew: {false, false, false, true},
			}[s]
			require.Equal(t, want, got4, "bad pow, bits, old, future = %v, want %v", got4, want)
			err := blockchain.CheckProofOfWork(btcutil.NewBlock(&wire.MsgBlock{Header: *last}), fx.h.Params().PowLimit)
			require.Equal(t, badPoW, (err != nil), "btcd CheckProofOfWork = %v", err)
		})
	}
}

// work sums the work of headers.
func work(hdrs []wire.BlockHeader) *big.Int {
	w := new(big.Int)
	for _, h := range hdrs {
		w.Add(w, blockchain.CalcWork(h.Bits))
	}
	return w
}

func TestForks(t *testing.T) {
	chain := headerChain(t)
	const forkAt = 100
	for _, s := range []Scenario{LowWorkFork, FakeWorkFork} {
		t.Run(string(s), func(t *testing.T) {
			p := startPeer(t, s, func(c *Config) { c.ForkHeight = forkAt })
			c := dial(t, p)
			wantHeight := int32(len(chain)) + 1 // FakeWorkFork: its own tip, two above the honest one
			if s == LowWorkFork {
				wantHeight = int32(len(chain)) - 1 // the honest tip, a lie
			}
			require.Equal(t, wantHeight, c.p.LastBlock(), "announced height %d, want %d", c.p.LastBlock(), wantHeight)
			got, pong, _ := c.exchange(10*time.Second, getHeaders())
			require.True(t, pong, "pong %v, %d messages", pong, len(got))
			require.Len(t, got, 1, "pong %v, %d messages", pong, len(got))
			var hdrs []wire.BlockHeader
			for _, h := range got[0].(*wire.MsgHeaders).Headers {
				hdrs = append(hdrs, *h)
			}
			full := append(slices.Clone(chain[:1]), hdrs...)
			require.Equal(t, chain[forkAt].BlockHash(), full[forkAt].BlockHash(), "the fork does not branch right after the fork height")
			require.NotEqual(t, chain[forkAt+1].BlockHash(), full[forkAt+1].BlockHash(), "the fork does not branch right after the fork height")
			honestWork, forkWork := work(chain[forkAt+1:]), work(full[forkAt+1:])
			allValid := !slices.ContainsFunc(full[forkAt+1:], func(h wire.BlockHeader) bool { return !powValid(&h) })
			switch s {
			case LowWorkFork:
				require.Len(t, full, len(chain)-1, "low-work fork: %d headers (honest %d), work %v vs %v, valid %v", len(full), len(chain), forkWork, honestWork, allValid)
				require.Less(t, forkWork.Cmp(honestWork), 0, "low-work fork: %d headers (honest %d), work %v vs %v, valid %v", len(full), len(chain), forkWork, honestWork, allValid)
				require.True(t, allValid, "low-work fork: %d headers (honest %d), work %v vs %v, valid %v", len(full), len(chain), forkWork, honestWork, allValid)
			case FakeWorkFork:
				require.Greater(t, len(full), len(chain), "fake-work fork: %d headers (honest %d), claimed work %v vs %v", len(full), len(chain), forkWork, honestWork)
				require.Greater(t, forkWork.Cmp(honestWork), 0, "fake-work fork: %d headers (honest %d), claimed work %v vs %v", len(full), len(chain), forkWork, honestWork)
				require.True(t, slices.ContainsFunc(full[forkAt+1:], func(h wire.BlockHeader) bool { return !powValid(&h) }), "fake-work fork: %d headers (honest %d), claimed work %v vs %v", len(full), len(chain), forkWork, honestWork)
			}
			// The fork's blocks do not exist: notfound.
			forkHash := full[forkAt+1].BlockHash()
			got, pong, _ = c.exchange(10*time.Second, newFilter(t).MsgFilterLoad(), getFiltered(forkHash))
			require.True(t, pong, "fork block: pong %v, %d messages", pong, len(got))
			require.Len(t, got, 1, "fork block: pong %v, %d messages", pong, len(got))
			_, ok := got[0].(*wire.MsgNotFound)
			require.True(t, ok, "fork block answered with %s", got[0].Command())
		})
	}
}

func TestStreamScenarios(t *testing.T) {
	for _, s := range []Scenario{Oversized, Garbage} {
		t.Run(string(s), func(t *testing.T) {
			p := startPeer(t, s, nil)
			got, pong, disc := dial(t, p).exchange(10*time.Second, getHeaders())
			require.False(t, pong, "pong %v, disconnected %v, %d messages: the client must drop the peer", pong, disc, len(got))
			require.True(t, disc, "pong %v, disconnected %v, %d messages: the client must drop the peer", pong, disc, len(got))
			require.Len(t, got, 0, "pong %v, disconnected %v, %d messages: the client must drop the peer", pong, disc, len(got))
			st := waitStats(t, p, func(st Stats) bool { return st.Applied == 1 })
			require.Equal(t, 1, st.Applied, "applied %d", st.Applied)
		})
	}
}

func TestInvFlood(t *testing.T) {
	p := startPeer(t, InvFlood, func(c *Config) { c.FloodMessages, c.FloodSize = 5, 2000 })
	got, pong, _ := dial(t, p).exchange(10 * time.Second)
	invs := 0
	for _, m := range got {
		if inv, ok := m.(*wire.MsgInv); ok {
			invs += len(inv.InvList)
		}
	}
	require.True(t, pong, "pong %v, %d inv entries", pong, invs)
	require.Equal(t, 5*2000, invs, "pong %v, %d inv entries", pong, invs)
}

func TestMidBatch(t *testing.T) {
	for _, s := range []Scenario{StallMidBatch, StallKeepAlive, DisconnectMidBatch} {
		t.Run(string(s), func(t *testing.T) {
			p := startPeer(t, s, func(c *Config) { c.KeepAliveInterval = 200 * time.Millisecond })
			c := dial(t, p)
			blocks, loose, pong, disc := loadAndFetch(t, c, 3*time.Second)
			require.False(t, pong, "pong %v, %d merkleblocks, want %d and no pong", pong, len(blocks), testBlocks/2)
			require.Len(t, blocks, testBlocks/2, "pong %v, %d merkleblocks, want %d and no pong", pong, len(blocks), testBlocks/2)
			keepAlives := 0
			for _, m := range loose {
				if h, ok := m.(*wire.MsgHeaders); ok && len(h.Headers) == 0 {
					keepAlives++
				}
			}
			require.Equal(t, (s == StallKeepAlive), (keepAlives >= 3), "%d empty headers messages in 3 s", keepAlives)
			require.Equal(t, (s == DisconnectMidBatch), disc, "disconnected %v", disc)
			require.False(t, s != DisconnectMidBatch && !c.p.Connected(), "stalling peer dropped the connection")
		})
	}
}

func TestOmitAndInflate(t *testing.T) {
	needFixture(t)
	filter := newFilter(t)
	for _, s := range []Scenario{OmitMatchedTx, InflateFP, IgnoreFilter} {
		t.Run(string(s), func(t *testing.T) {
			p := startPeer(t, s, nil)
			blocks, _, pong, _ := loadAndFetch(t, dial(t, p), 10*time.Second)
			require.True(t, pong, "pong %v, %d merkleblocks", pong, len(blocks))
			require.Len(t, blocks, testBlocks, "pong %v, %d merkleblocks", pong, len(blocks))
			for i, b := range blocks {
				require.NoError(t, b.err, "block %d: the proof must stay valid", i)
				payment, hasPayment := fx.paidBlock[fx.blocks[i]]
				unmatched := 0
				for _, tx := range b.txs {
					if !filter.Clone().MatchTx(tx) {
						unmatched++
					}
				}
				switch s {
				case OmitMatchedTx:
					require.False(t, slices.Contains(b.matches, payment), "block %d: payment present %v (had %v), %d unmatched", i, slices.Contains(b.matches, payment), hasPayment, unmatched)
					require.Equal(t, 0, unmatched, "block %d: payment present %v (had %v), %d unmatched", i, slices.Contains(b.matches, payment), hasPayment, unmatched)
				case InflateFP:
					require.NotEqual(t, 0, unmatched, "block %d: %d unmatched txs sent", i, unmatched)
					require.LessOrEqual(t, unmatched, DefaultExtraTxs, "block %d: %d unmatched txs sent", i, unmatched)
					require.Equal(t, slices.Contains(b.matches, payment), hasPayment, "block %d: %d unmatched txs sent", i, unmatched)
				case IgnoreFilter:
					require.Equal(t, len(b.txs), int(b.mb.Transactions), "block %d: %d of %d txs sent", i, len(b.txs), b.mb.Transactions)
				}
			}
		})
	}
}

func TestNoBloom(t *testing.T) {
	p := startPeer(t, NoBloom, nil)
	c := dial(t, p)
	require.Equal(t, wire.ServiceFlag(0), c.p.Services()&wire.SFNodeBloom, "advertises NODE_BLOOM")
	_, pong, disc := c.exchange(10*time.Second, newFilter(t).MsgFilterLoad())
	require.False(t, pong, "filterload to a non-bloom peer: pong %v, disconnected %v", pong, disc)
	require.True(t, disc, "filterload to a non-bloom peer: pong %v, disconnected %v", pong, disc)
	st := waitStats(t, p, func(st Stats) bool { return st.LocalClosed == 1 })
	require.Equal(t, 1, st.LocalClosed, "stats %+v", st)
	require.Equal(t, 1, st.Applied, "stats %+v", st)
}

func TestConfigErrors(t *testing.T) {
	needFixture(t)
	ctx := context.Background()
	_, err := Start(ctx, Config{Params: fx.h.Params()})
	require.ErrorIs(t, err, ErrNoUpstream, "no upstream: %v", err)
	_, err = Start(ctx, Config{Upstream: fx.h.Node().RPC()})
	require.ErrorIs(t, err, ErrNoParams, "no params: %v", err)
	_, err = Start(ctx, Config{Upstream: fx.h.Node().RPC(), Params: fx.h.Params(), Scenario: "evil"})
	require.ErrorIs(t, err, ErrUnknownScenario, "bad scenario: %v", err)
}

func TestContextCancelCloses(t *testing.T) {
	needFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	p, err := Start(ctx, Config{Upstream: fx.h.Node().RPC(), Params: fx.h.Params()})
	require.NoError(t, err)
	c := dial(t, p)
	cancel()
	select {
	case <-waitDisconnect(c.p):
	case <-time.After(10 * time.Second):
		require.FailNow(t, "cancelling the context did not close the connection")
	}
	require.NoError(t, p.Close())
	_, err = net.DialTimeout("tcp", p.Addr(), time.Second)
	require.Error(t, err, "still listening after cancel")
}

// waitDisconnect returns a channel closed when p disconnects.
func waitDisconnect(p *peer.Peer) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		p.WaitForDisconnect()
		close(ch)
	}()
	return ch
}
