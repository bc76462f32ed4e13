package spv_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/filterpolicy"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/watch"
	"github.com/bloomwatch/bloomwatch/watch/watchtest"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/peer"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// benchWindows are the node's download windows measured (0: default).
var benchWindows = []int{0}

// benchGap is the MemWatcher's gap limit in the benchmark (both branches
// interleaved: 20 addresses each).
const benchGap = 40

// benchWatcher returns a gap-limit watcher over the keyring's P2WPKH
// receive and change branches, interleaved.
func benchWatcher(b testing.TB, k *testnet.Keyring, birthday int32) *watchtest.MemWatcher {
	b.Helper()
	w, err := watchtest.NewMemWatcherGap(birthday, benchGap, func(i uint32) ([]byte, error) {
		return k.PkScript(testnet.PurposeBIP84, i%2, i/2)
	})
	require.NoError(b, err)
	return w
}

// BenchmarkSync measures a cold sync of a 500-block regtest chain (10
// noise txs per block, 20 watched addresses, half of the payments spent)
// from a local btcd: "node" is spv.Node with a MemWatcher (headers
// validated and stored, every merkle block verified and re-tested,
// blocks delivered in order, gap-limit reloads and re-requests);
// "baseline" is a minimal BIP37 loop on btcd's peer package with the
// same final filter: filterload, getheaders without validation, one
// getdata of every filtered block, count the answers. Compare ns/op and
// bytes/op of the two in the same run.
func BenchmarkSync(b *testing.B) {
	h := testnet.NewT(b, testnet.Options{})
	k, err := testnet.NewKeyring(testnet.DemoSeed, h.Params())
	require.NoError(b, err)
	truth, err := h.BuildChain(context.Background(), testnet.ChainSpec{
		Blocks: 500, TxsPerBlock: 10, Keyring: k, Purpose: testnet.PurposeBIP84,
		WatchAddrs: 20, SpendFraction: 0.5, Seed: 1,
	})
	require.NoError(b, err)
	// a fresh tip for getheaders
	_, err = h.Mine(1)
	require.NoError(b, err)
	_, tip, _ := h.Node().BestBlock()
	birthday := truth.StartHeight + 1
	addr := h.Node().P2PAddr()

	// The filter the node ends with, for the baseline.
	var final *bip37.Filter

	// fixed watches the 40 scripts a gap-limit wallet ends with from the
	// start (no reloads: the baseline's situation); gap derives them as
	// payments arrive (reloads and re-requests: the BIP37 gap-limit race);
	// gap-lookahead derives benchGap more at each refill.
	fixedScripts := make([][]byte, 0, benchGap)
	for i := uint32(0); i < benchGap; i++ {
		s, err := k.PkScript(testnet.PurposeBIP84, i%2, i/2)
		require.NoError(b, err)
		fixedScripts = append(fixedScripts, s)
	}
	for _, mode := range []string{"fixed", "gap", "gap-lookahead"} {
		for _, win := range benchWindows {
			name := "node-" + mode
			if len(benchWindows) > 1 {
				name += fmt.Sprintf("-w%d", win)
			}
			b.Run(name, func(b *testing.B) {
				var bytes uint64
				for i := 0; i < b.N; i++ {
					w := watchtest.NewMemWatcher(birthday, fixedScripts...)
					switch mode {
					case "gap":
						w = benchWatcher(b, k, birthday)
					case "gap-lookahead":
						w = benchWatcher(b, k, birthday).SetLookahead(benchGap)
					}
					n, err := spv.New(spv.Config{Network: regtest(b), DataDir: b.TempDir(), Connect: []string{addr}, Watcher: w, Tuning: spv.Tuning{Window: win}})
					if err != nil {
						require.NoError(b, err)
					}
					ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
					if err := n.Start(ctx); err != nil {
						require.NoError(b, err)
					}
					for n.Status().WatcherHeight < tip {
						if err := n.WaitSynced(ctx); err != nil {
							require.NoError(b, err)
						}
					}
					cancel()
					st := n.Status()
					bytes += st.BytesReceived
					if err := n.Stop(); err != nil {
						require.NoError(b, err)
					}
					if got := len(w.Txs()); got != len(truth.Txs) {
						require.Equal(b, len(truth.Txs), got, "found %d wallet txs, want %d", got, len(truth.Txs))
					}
					els, err := w.FilterElements()
					if err != nil {
						require.NoError(b, err)
					}
					if final, err = filterpolicy.BuildFilter(els, filterpolicy.DefaultFPRate, 7); err != nil {
						require.NoError(b, err)
					}
					b.ReportMetric(float64(st.Filter.Loads), "loads/op")
					b.ReportMetric(float64(st.FalsePositives), "fps/op")
				}
				b.ReportMetric(float64(bytes)/float64(b.N), "bytes/op")
				b.ReportMetric(float64(tip-birthday+1)*float64(b.N)/b.Elapsed().Seconds(), "blocks/s")
			})
		}
	}

	b.Run("baseline", func(b *testing.B) {
		if final == nil {
			b.Skip("needs the node run for its final filter")
		}
		var bytes uint64
		for i := 0; i < b.N; i++ {
			got, matched, err := baselineSync(h.Params(), addr, final, birthday)
			if err != nil {
				require.NoError(b, err)
			}
			if matched < len(truth.Txs) {
				require.GreaterOrEqual(b, matched, len(truth.Txs), "baseline matched %d txs, fewer than the %d wallet txs", matched, len(truth.Txs))
			}
			bytes += got
		}
		b.ReportMetric(float64(bytes)/float64(b.N), "bytes/op")
	})

	// ratio alternates a fixed-script node sync and a baseline sync in
	// every iteration, so both see the same machine load, and reports
	// node time / baseline time and node bytes / baseline bytes.
	b.Run("ratio", func(b *testing.B) {
		var nodeT, baseT time.Duration
		var nodeB, baseB uint64
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			w := watchtest.NewMemWatcher(birthday, fixedScripts...)
			nb := syncOnce(b, addr, w, tip, 0)
			t1 := time.Now()
			got, _, err := baselineSync(h.Params(), addr, final, birthday)
			if err != nil {
				require.NoError(b, err)
			}
			t2 := time.Now()
			nodeT += t1.Sub(t0)
			baseT += t2.Sub(t1)
			nodeB += nb
			baseB += got
		}
		b.ReportMetric(float64(nodeT)/float64(baseT), "time-x-baseline")
		b.ReportMetric(float64(nodeB)/float64(baseB), "bytes-x-baseline")
	})
}

// syncOnce cold-syncs w from addr to tip with a fresh data dir and returns
// the bytes received.
func syncOnce(b *testing.B, addr string, w watch.Watcher, tip int32, window int) uint64 {
	n, err := spv.New(spv.Config{Network: regtest(b), DataDir: b.TempDir(), Connect: []string{addr}, Watcher: w, Tuning: spv.Tuning{Window: window}})
	require.NoError(b, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	require.NoError(b, n.Start(ctx))
	for n.Status().WatcherHeight < tip {
		require.NoError(b, n.WaitSynced(ctx))
	}
	st := n.Status()
	require.NoError(b, n.Stop())
	return st.BytesReceived
}

// baselineSync is the minimal BIP37 loop: connect, filterload, fetch all
// headers (unvalidated), ask every filtered block from height from in one
// getdata stream closed by a ping, and count merkle blocks and txs until
// the pong.
func baselineSync(params *chaincfg.Params, addr string, f *bip37.Filter, from int32) (bytes uint64, matched int, err error) {
	ready := make(chan struct{}, 1)
	hdrs := make(chan *wire.MsgHeaders, 1)
	pong := make(chan struct{}, 1)
	txs := make(chan struct{}, 1<<16)
	cfg := &peer.Config{
		ChainParams: params, DisableRelayTx: true, UserAgentName: "baseline", UserAgentVersion: "0",
		Listeners: peer.MessageListeners{
			OnVerAck:  func(*peer.Peer, *wire.MsgVerAck) { ready <- struct{}{} },
			OnHeaders: func(_ *peer.Peer, m *wire.MsgHeaders) { hdrs <- m },
			OnTx:      func(*peer.Peer, *wire.MsgTx) { txs <- struct{}{} },
			OnPong:    func(*peer.Peer, *wire.MsgPong) { pong <- struct{}{} },
		},
	}
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, 0, err
	}
	p, err := peer.NewOutboundPeer(cfg, addr)
	if err != nil {
		conn.Close()
		return 0, 0, err
	}
	p.AssociateConnection(conn)
	defer func() { p.Disconnect(); p.WaitForDisconnect() }()
	timeout := time.After(2 * time.Minute)
	select {
	case <-ready:
	case <-timeout:
		return 0, 0, errors.New("baseline: no handshake")
	}
	p.QueueMessage(f.MsgFilterLoad(), nil)
	var hashes []chainhash.Hash
	locator := []*chainhash.Hash{params.GenesisHash}
	for {
		if err := p.PushGetHeadersMsg(locator, &chainhash.Hash{}); err != nil {
			return 0, 0, err
		}
		var m *wire.MsgHeaders
		select {
		case m = <-hdrs:
		case <-timeout:
			return 0, 0, errors.New("baseline: no headers")
		}
		for _, h := range m.Headers {
			hashes = append(hashes, h.BlockHash())
		}
		if len(m.Headers) < wire.MaxBlockHeadersPerMsg {
			break
		}
		last := hashes[len(hashes)-1]
		locator = []*chainhash.Hash{&last}
	}
	// hashes[i] is at height i+1.
	gd := wire.NewMsgGetData()
	for i := from - 1; int(i) < len(hashes); i++ {
		if err := gd.AddInvVect(wire.NewInvVect(wire.InvTypeFilteredBlock, &hashes[i])); err != nil {
			return 0, 0, fmt.Errorf("baseline: %w", err)
		}
	}
	p.QueueMessage(gd, nil)
	p.QueueMessage(wire.NewMsgPing(1), nil)
	select {
	case <-pong:
	case <-timeout:
		return 0, 0, errors.New("baseline: no pong")
	}
	return p.BytesReceived(), len(txs), nil
}
