package spv_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/testnet/bcoin"
	"github.com/bloomwatch/bloomwatch/testnet/hostile"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/bloomwatch/bloomwatch/wallet"
	"github.com/bloomwatch/bloomwatch/watch"
	"github.com/bloomwatch/bloomwatch/watch/watchtest"
)

// The scenario table: the same scenarios, with the real
// watch-only wallet, against each full-node implementation the tests can
// start (btcd v0.24.2 and bcoin 1.0.2, both on regtest, 127.0.0.1), so
// that neither one's habits become bloomwatch's assumptions. The rows run
// in order on one chain per implementation: each starts from what the
// rows before it left (a synced node, a wallet, the chain's truth).

// implReorgPayment pays pkScript amt in the first block of a branch of
// depth blocks that a longer one then replaces, whose first block
// confirms the same payment again (testnet.Chain.Reorg: btcd's second
// node or bcoin's invalidateblock, the same call); it returns the
// payment and the new tip. onOld is called with the losing branch's tip
// between the branches: a node that never reached it has no reorg to
// follow.
func implReorgPayment(ctx context.Context, c *testnet.Chain, pkScript []byte, amt int64, depth int, onOld func(chainhash.Hash)) (*wire.MsgTx, chainhash.Hash, error) {
	tx, err := c.NewTx([]*wire.TxOut{wire.NewTxOut(amt, pkScript)})
	if err != nil {
		return nil, chainhash.Hash{}, err
	}
	opts := testnet.ReorgOptions{OrphanTxs: []*wire.MsgTx{tx}, WinnerTxs: []*wire.MsgTx{tx}}
	if onOld != nil {
		node := c.Node() // AfterLosing runs under the chain's lock
		opts.AfterLosing = func() error {
			old, _, err := node.BestBlock()
			if err != nil {
				return err
			}
			onOld(*old)
			return nil
		}
	}
	res, err := c.Reorg(ctx, depth, opts)
	if err != nil {
		return nil, chainhash.Hash{}, err
	}
	return tx, *res.New[len(res.New)-1], nil
}

// implEnv is what the rows of one implementation share.
type implEnv struct {
	top   *testing.T // the implementation's test: owns what outlives a row
	name  string
	srv   *testnet.Chain
	key   *testnet.Keyring
	xpub  string
	truth *testnet.Truth // the built chain's truth
	birth int32          // the wallets' birthday: the chain's first block
	dir   string         // the main node's data dir
	w     *wallet.Wallet // the main wallet (default gap limit)
	n     *spv.Node      // the main node, running, peer: srv alone
	next  uint32         // next fresh receive index of the keyring
	times []implTiming
}

// implTiming is one row's wall time, for the summary.
type implTiming struct {
	row string
	d   time.Duration
}

// implScenarios are the rows, in order.
var implScenarios = []struct {
	name string
	run  func(t *testing.T, e *implEnv)
}{
	{"cold sync equals the node's view", scenarioColdSync},
	{"restart with nothing new is synced within 5s, then the mempool request", scenarioRestartNothingNew},
	{"restart against a peer that never answers an up-to-date getheaders", scenarioSilentAtTip},
	{"a lagging peer that claims more is passed over, never trusted", scenarioLaggingBeside},
	{"mempool payments seen, then confirmed", scenarioMempoolPayments},
	{"wallet spend seen, then confirmed", scenarioWalletSpend},
	{"reorg followed", scenarioReorg},
	{"filter reloads mid-sync (gap limit 2) still equal the node's view", scenarioReloadMidSync},
}

// TestImplScenarios runs the scenario table against btcd and bcoin. The
// bcoin rows need Node.js and bcoin (bcoin.Require: skipped when
// missing, a failure in CI).
func TestImplScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd and bcoin")
	}
	impls := []struct {
		name  string
		start func(t *testing.T) *testnet.Chain
	}{
		{"btcd", func(t *testing.T) *testnet.Chain { return testnet.NewT(t, testnet.Options{}).Chain }},
		{"bcoin", func(t *testing.T) *testnet.Chain { return bcoin.NewT(t, bcoin.Options{}).Chain }},
	}
	for _, impl := range impls {
		t.Run(impl.name, func(t *testing.T) {
			began := time.Now()
			srv := impl.start(t)
			key, err := testnet.NewKeyring(testnet.DemoSeed, regtest(t).Params)
			require.NoError(t, err)
			xpub, err := key.Xpub(testnet.PurposeBIP84)
			require.NoError(t, err)
			e := &implEnv{top: t, name: impl.name, srv: srv, key: key, xpub: xpub, dir: t.TempDir()}
			e.times = append(e.times, implTiming{"start the full node", time.Since(began)})
			for _, sc := range implScenarios {
				mark := time.Now()
				ok := t.Run(sc.name, func(t *testing.T) { sc.run(t, e) })
				e.times = append(e.times, implTiming{sc.name, time.Since(mark)})
				if !ok {
					break // the later rows build on this one
				}
			}
			var b strings.Builder
			for _, tm := range e.times {
				fmt.Fprintf(&b, "\n  %-72s %8s", tm.row, tm.d.Round(10*time.Millisecond))
			}
			t.Logf("%s scenario times (total %s):%s", impl.name, time.Since(began).Round(10*time.Millisecond), b.String())
		})
	}
}

// scenarioColdSync builds the chain (payments to 6 receive addresses, 30 %
// of them spent, noise) and syncs a fresh wallet from the birthday: it
// must equal the node's own view of the keyring.
func scenarioColdSync(t *testing.T, e *implEnv) {
	ctx := t.Context()
	truth, err := e.srv.BuildChain(ctx, testnet.ChainSpec{
		Blocks: 30, TxsPerBlock: 2, Keyring: e.key, Purpose: testnet.PurposeBIP84,
		WatchAddrs: 6, PaymentsPerAddr: 2, SpendFraction: 0.3, Seed: 16,
	})
	require.NoError(t, err)
	e.truth, e.birth, e.next = truth, truth.StartHeight+1, 6
	e.w = implWallet(t, e.top, filepath.Join(e.dir, "wallet"), e.xpub, e.birth, 0)
	mark := time.Now()
	e.n = implNode(t, e.top, filepath.Join(e.dir, "spv"), e.w, e.srv.P2PAddr())
	implWaitAt(t, e.n, truth.TipHash, time.Minute)
	st := e.n.Status()
	t.Logf("%s: %d blocks synced in %s: %d matched, %d false positives, %d filterloads",
		e.name, st.Blocks, time.Since(mark).Round(time.Millisecond), st.Matched, st.FalsePositives, st.Filter.Loads)
	view := implTruth(t, e)
	require.Equal(t, truth.Balance, view.Balance, "the node's view (%d sat, %d txs) differs from the built chain's (%d, %d)", view.Balance, len(view.Txs), truth.Balance, len(truth.Txs))
	require.Len(t, view.Txs, len(truth.Txs), "the node's view (%d sat, %d txs) differs from the built chain's (%d, %d)", view.Balance, len(view.Txs), truth.Balance, len(truth.Txs))
	implRequireWallet(t, e.w, view)
}

// scenarioRestartNothingNew stops the node, puts a payment into the
// server's mempool meanwhile (no block), restarts: the node must report
// synced within 5 s (from an empty headers reply or the fence's pong),
// then send the mempool request, which brings the payment.
func scenarioRestartNothingNew(t *testing.T, e *implEnv) {
	require.NoError(t, e.n.Stop())
	addr := implFreshAddr(t, e)
	pay, err := e.srv.PayAddress(addr, 1_111_111)
	require.NoError(t, err)
	mark := time.Now()
	e.n = implNode(t, e.top, filepath.Join(e.dir, "spv"), e.w, e.srv.P2PAddr())
	implWaitAt(t, e.n, e.truth.TipHash, 5*time.Second)
	synced := time.Since(mark)
	implWaitPending(t, e.w, pay.TxHash(), 1_111_111, 30*time.Second)
	t.Logf("%s: restart synced in %s, mempool payment in the wallet after %s",
		e.name, synced.Round(time.Millisecond), time.Since(mark).Round(time.Millisecond))
}

// scenarioSilentAtTip restarts the node against a peer that announces
// our tip and never answers getheaders (no headers message, empty or
// not): synced within 5 s from the fence, never from the stall timeout.
func scenarioSilentAtTip(t *testing.T, e *implEnv) {
	_, tip, err := e.srv.BestBlock()
	require.NoError(t, err)
	silent := implSilent(t, tip)
	require.NoError(t, e.n.Stop())
	mark := time.Now()
	n := implNode(t, t, filepath.Join(e.dir, "spv"), e.w, silent.Addr())
	implWaitAt(t, n, e.truth.TipHash, 5*time.Second)
	t.Logf("%s: synced against the silent peer in %s", e.name, time.Since(mark).Round(time.Millisecond))
	// One getheaders per handshake at most (a reconnection under load
	// adds a handshake, and its getheaders).
	got := silent.Stats()
	require.GreaterOrEqual(t, got.Received[wire.CmdGetHeaders], 1, "the silent peer got %d getheaders over %d handshakes, want 1 per handshake at most", got.Received[wire.CmdGetHeaders], got.Handshakes)
	require.LessOrEqual(t, got.Received[wire.CmdGetHeaders], got.Handshakes, "the silent peer got %d getheaders over %d handshakes, want 1 per handshake at most", got.Received[wire.CmdGetHeaders], got.Handshakes)
	bans := n.Bans()
	require.Empty(t, bans, "bans %+v", bans)
	require.NoError(t, n.Stop())
	e.n = implNode(t, e.top, filepath.Join(e.dir, "spv"), e.w, e.srv.P2PAddr())
	implWaitAt(t, e.n, e.truth.TipHash, 5*time.Second)
}

// scenarioLaggingBeside syncs a fresh wallet from two peers: first listed
// (the first download peer) one that announces 100 blocks more than the
// chain and never answers getheaders (a peer in initial block download),
// then the server. The node must pass the download role to the server,
// sync and be synced on the server's word, and neither ban nor use the
// lagging one for blocks.
func scenarioLaggingBeside(t *testing.T, e *implEnv) {
	_, tip, err := e.srv.BestBlock()
	require.NoError(t, err)
	silent := implSilent(t, tip+100)
	dir := t.TempDir()
	w := implWallet(t, t, filepath.Join(dir, "wallet"), e.xpub, e.birth, 0)
	mark := time.Now()
	n := implNode(t, t, filepath.Join(dir, "spv"), w, silent.Addr(), e.srv.P2PAddr())
	hash, _, err := e.srv.BestBlock()
	require.NoError(t, err)
	implWaitAt(t, n, *hash, time.Minute)
	t.Logf("%s: synced beside a lagging peer in %s", e.name, time.Since(mark).Round(time.Millisecond))
	implRequireWallet(t, w, implTruth(t, e))
	for _, p := range n.Peers() {
		require.False(t, p.Addr == silent.Addr() && p.Download, "the lagging peer is the download peer: %+v", p)
	}
	bans := n.Bans()
	require.Empty(t, bans, "bans %+v", bans)
	if got := silent.Stats().Received[wire.CmdGetData]; got != 0 {
		t.Logf("the lagging peer was asked %d getdata (omission checks)", got)
	}
}

// scenarioMempoolPayments pays two fresh receive addresses: the wallet
// sees them unconfirmed, then confirmed in the next block.
func scenarioMempoolPayments(t *testing.T, e *implEnv) {
	amts := []btcutil.Amount{1_234_567, 7_654_321}
	var pays []*wire.MsgTx
	for _, amt := range amts {
		pay, err := e.srv.PayAddress(implFreshAddr(t, e), amt)
		require.NoError(t, err)
		pays = append(pays, pay)
	}
	for i, pay := range pays {
		implWaitPending(t, e.w, pay.TxHash(), int64(amts[i]), 30*time.Second)
	}
	implMineAndCompare(t, e)
}

// scenarioWalletSpend spends a wallet coin to a foreign script: the
// wallet sees the spend unconfirmed, then confirmed.
func scenarioWalletSpend(t *testing.T, e *implEnv) {
	utxos, err := e.w.UTXOs()
	require.NoError(t, err)
	var coin *wallet.UTXO
	for i := range utxos {
		if utxos[i].Height > 0 && !utxos[i].PendingSpend && utxos[i].Amount > 100_000 {
			coin = &utxos[i]
			break
		}
	}
	require.NotNil(t, coin, "no confirmed wallet coin to spend among %d", len(utxos))
	to := []*wire.TxOut{wire.NewTxOut(int64(coin.Amount)-5_000, testnet.RandomScript(nil, testnet.KindP2WPKH))}
	spend, err := e.srv.Spend(e.key, []wire.OutPoint{{Hash: coin.Txid, Index: coin.Index}}, to)
	require.NoError(t, err)
	implWaitPending(t, e.w, spend.TxHash(), -int64(coin.Amount), 30*time.Second)
	implMineAndCompare(t, e)
}

// scenarioReorg confirms a payment in a branch that a longer one replaces,
// confirming it again one block higher: the wallet follows the switch.
func scenarioReorg(t *testing.T, e *implEnv) {
	script, err := e.key.PkScript(testnet.PurposeBIP84, 0, e.next)
	require.NoError(t, err)
	e.next++
	before := e.n.Status().Reorgs
	pay, tip, err := implReorgPayment(t.Context(), e.srv, script, 2_500_000, 2, func(old chainhash.Hash) {
		implWaitAt(t, e.n, old, 30*time.Second)
	})
	require.NoError(t, err)
	implWaitAt(t, e.n, tip, 30*time.Second)
	view := implTruth(t, e)
	implRequireWallet(t, e.w, view)
	found := false
	for _, tx := range view.Txs {
		found = found || tx.Txid == pay.TxHash()
	}
	require.True(t, found, "the reorganised payment %v is not in the node's view", pay.TxHash())
	st := e.n.Status()
	require.Greater(t, st.Reorgs, before, "no reorg counted (%d before, %d after)", before, st.Reorgs)
}

// scenarioReloadMidSync syncs a fresh wallet with gap limits of 2 and no
// lookahead reserve from the birthday: each payment to the last watched
// address derives new ones the filter lacks (the gap-limit race), and
// every peer gets a new filter in the middle of the sync (the blocks from
// the start of the aligned window are fetched again). The wallet must
// still equal the node's view.
func scenarioReloadMidSync(t *testing.T, e *implEnv) {
	dir := t.TempDir()
	w := implWallet(t, t, filepath.Join(dir, "wallet"), e.xpub, e.birth, 2, wallet.WithReserve(0))
	n, err := spv.New(implConfig(filepath.Join(dir, "spv"), w, e.srv.P2PAddr()))
	require.NoError(t, err)
	sub := n.Subscribe()
	defer sub.Cancel()
	require.NoError(t, n.Start(t.Context()))
	t.Cleanup(func() { _ = n.Stop() })
	hash, _, err := e.srv.BestBlock()
	require.NoError(t, err)
	implWaitAt(t, n, *hash, time.Minute)
	newKey, synced := 0, false
	for !synced {
		select {
		case ev := <-sub.Events():
			switch ev := ev.(type) {
			case spv.FilterLoaded:
				if ev.Reason == transcript.ReasonGapRace {
					newKey++
				}
			case spv.SyncDone:
				synced = true
			}
		case <-time.After(5 * time.Second):
			require.FailNow(t, "no SyncDone event")
		}
	}
	require.NotEqual(t, 0, newKey, "no gap-race filter reload before the sync ended")
	t.Logf("%s: %d gap-race reloads during the sync, %d blocks fetched again", e.name, newKey, n.Status().Rerequested)
	implRequireWallet(t, w, implTruth(t, e))
}

// implConfig is the node configuration of the scenarios: a stall timeout
// far above the 5 s a restart may take, fast reconnects.
func implConfig(dir string, w watch.Watcher, peers ...string) spv.Config {
	return spv.Config{
		Network: regtestNetwork(), DataDir: dir, Connect: peers, Watcher: w, Log: testLogger(),
		Tuning: spv.Tuning{RetryMin: 100 * time.Millisecond, RetryMax: time.Second, StallTimeout: time.Minute, TickInterval: 200 * time.Millisecond},
	}
}

// regtestNetwork returns the regtest network (the lookup of a built-in
// name cannot fail).
func regtestNetwork() *netparams.Network {
	net, err := netparams.Lookup("regtest")
	if err != nil {
		panic(err)
	}
	return net
}

// implNode starts a node on w syncing from peers; it stops at owner's
// cleanup (owner: the test the node outlives rows for, or t itself).
func implNode(t, owner *testing.T, dir string, w watch.Watcher, peers ...string) *spv.Node {
	t.Helper()
	n, err := spv.New(implConfig(dir, w, peers...))
	require.NoError(t, err)
	require.NoError(t, n.Start(context.Background()))
	owner.Cleanup(func() {
		require.NoError(owner, n.Stop(), "stop node")
	})
	return n
}

// implWallet creates a watch-only wallet of xpub in dir (gap 0: the
// defaults); it closes at owner's cleanup, after the nodes registered
// later.
func implWallet(t, owner *testing.T, dir, xpub string, birthday int32, gap uint32, opts ...wallet.Option) *wallet.Wallet {
	t.Helper()
	w, err := wallet.Create(dir, wallet.CreateConfig{
		Network: "regtest", Xpubs: []string{xpub}, Birthday: birthday, GapExternal: gap, GapInternal: gap,
	}, opts...)
	require.NoError(t, err)
	owner.Cleanup(func() {
		require.NoError(owner, w.Close(), "close wallet")
	})
	return w
}

// implSilent starts a peer that announces height and never answers
// getheaders.
func implSilent(t *testing.T, height int32) *hostile.SilentPeer {
	t.Helper()
	p, err := hostile.StartSilent(t.Context(), hostile.SilentConfig{Params: regtestNetwork().Params, Height: height})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// implFreshAddr returns the next unused receive address of the keyring.
func implFreshAddr(t *testing.T, e *implEnv) btcutil.Address {
	t.Helper()
	addr, err := e.key.Address(testnet.PurposeBIP84, 0, e.next)
	require.NoError(t, err)
	e.next++
	return addr
}

// implTruth is the server's view of the keyring's wallet now.
func implTruth(t *testing.T, e *implEnv) *testnet.Truth {
	t.Helper()
	view, err := e.srv.ScanTruth(t.Context(), e.key, testnet.PurposeBIP84, e.birth)
	require.NoError(t, err)
	return view
}

// implMineAndCompare mines a block and checks the wallet, synced at it,
// against the server's view.
func implMineAndCompare(t *testing.T, e *implEnv) {
	t.Helper()
	hashes, err := e.srv.Mine(1)
	require.NoError(t, err)
	implWaitAt(t, e.n, *hashes[0], 30*time.Second)
	implRequireWallet(t, e.w, implTruth(t, e))
}

// implWaitAt waits until the node is synced with its watcher at hash.
func implWaitAt(t *testing.T, n *spv.Node, hash chainhash.Hash, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		st := n.Status()
		require.NoError(t, st.Err, "sync failed")
		if st.Synced && st.WatcherHash == hash {
			return
		}
		require.False(t, time.Now().After(deadline), "not synced at %v after %v: synced %v, watcher %d %v, headers %d, peers %+v", hash, d, st.Synced, st.WatcherHeight, st.WatcherHash, st.HeaderHeight, st.Peers)
		time.Sleep(20 * time.Millisecond)
	}
}

// implWaitPending waits until the wallet holds txid unconfirmed with the
// net amount delta.
func implWaitPending(t *testing.T, w *wallet.Wallet, txid chainhash.Hash, delta int64, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		txs, err := w.Txs()
		require.NoError(t, err)
		for _, tx := range txs {
			if tx.Txid == txid && tx.Height < 0 {
				require.Equal(t, delta, tx.Delta, "unconfirmed %v: delta %d, want %d", txid, tx.Delta, delta)
				return
			}
		}
		require.False(t, time.Now().After(deadline), "unconfirmed %v not in the wallet after %v", txid, d)
		time.Sleep(50 * time.Millisecond)
	}
}

// implRequireWallet checks the wallet's confirmed part against a truth:
// every confirmed transaction (height, block, net amount), every
// confirmed unspent output and the confirmed balance. Unconfirmed
// transactions (a payment waiting in the server's mempool) are not
// compared.
func implRequireWallet(t *testing.T, w *wallet.Wallet, truth *testnet.Truth) {
	t.Helper()
	txs, err := w.Txs()
	require.NoError(t, err)
	got := map[chainhash.Hash]testnet.TruthTx{}
	for _, s := range txs {
		if s.Height < 0 {
			continue
		}
		got[s.Txid] = testnet.TruthTx{Txid: s.Txid, Height: s.Height, BlockHash: s.BlockHash, Delta: s.Delta}
	}
	for _, want := range truth.Txs {
		want.Kind = ""
		g, ok := got[want.Txid]
		require.True(t, ok, "wallet tx %v: got %+v, want %+v", want.Txid, g, want)
		require.Equal(t, want, g, "wallet tx %v: got %+v, want %+v", want.Txid, g, want)
		delete(got, want.Txid)
	}
	for id, g := range got {
		require.FailNow(t, fmt.Sprintf("extra wallet tx %v: %+v", id, g))
	}
	utxos, err := w.UTXOs()
	require.NoError(t, err)
	have := map[wire.OutPoint]int64{}
	for _, u := range utxos {
		if u.Height > 0 {
			have[wire.OutPoint{Hash: u.Txid, Index: u.Index}] = int64(u.Amount)
		}
	}
	want := map[wire.OutPoint]int64{}
	for _, u := range truth.UTXOs {
		want[u.OutPoint()] = u.Value
	}
	require.Equal(t, want, have, "wallet coins %v, want %v", have, want)
	bal, err := w.Balance()
	require.NoError(t, err)
	require.Equal(t, truth.Balance, int64(bal.Confirmed), "confirmed balance %d, want %d", bal.Confirmed, truth.Balance)
}

// errNoSync is returned by the never-synced watch.
var errNoSync = errors.New("synced on a lagging peer's word")

// TestSilentPeerClaimingMoreNeverSynced connects a fresh node to one peer
// only, which announces height 500 and never answers getheaders (a peer in
// initial block download, on a chain we know nothing of): the node must
// not report synced, nor stall, nor score it, however long it waits (6 s
// here: the fence answers in milliseconds; a restart at the tip reports
// synced within 5 s).
func TestSilentPeerClaimingMoreNeverSynced(t *testing.T) {
	silent := implSilent(t, 500)
	w := watchtest.NewMemWatcher(1, append([]byte{0x00, 0x14}, bytes.Repeat([]byte{1}, 20)...))
	n := implNode(t, t, t.TempDir(), w, silent.Addr())
	ctx, cancel := context.WithTimeout(t.Context(), 6*time.Second)
	defer cancel()
	err := n.WaitSynced(ctx)
	require.Error(t, err, "%v", errNoSync)
	require.ErrorIs(t, err, context.DeadlineExceeded, "wait synced: %v", err)
	st := n.Status()
	require.False(t, st.Synced, "synced %v, peers %+v, bans %+v", st.Synced, st.Peers, n.Bans())
	require.Len(t, st.Peers, 1, "synced %v, peers %+v, bans %+v", st.Synced, st.Peers, n.Bans())
	require.Empty(t, n.Bans(), "synced %v, peers %+v, bans %+v", st.Synced, st.Peers, n.Bans())
	require.Equal(t, uint32(0), st.Peers[0].BanScore, "synced %v, peers %+v, bans %+v", st.Synced, st.Peers, n.Bans())
	// The properties, not the counts a loaded machine changes (a v2
	// attempt, which the v1-only silent peer hangs up on, then v1; a
	// reconnection under load adds a connection and a handshake): one
	// connection open at the end, over v1; each handshake asked for
	// headers at most once, at least one was asked; no mempool request
	// (the node is not synced).
	got := silent.Stats()
	gh := got.Received[wire.CmdGetHeaders]
	require.Equal(t, 1, got.Active, "silent peer: %+v, node's peer %+v (one connection open over v1, one getheaders per handshake at most, no mempool request)", got, st.Peers[0])
	require.GreaterOrEqual(t, got.Handshakes, 1, "silent peer: %+v, node's peer %+v (one connection open over v1, one getheaders per handshake at most, no mempool request)", got, st.Peers[0])
	require.GreaterOrEqual(t, gh, 1, "silent peer: %+v, node's peer %+v (one connection open over v1, one getheaders per handshake at most, no mempool request)", got, st.Peers[0])
	require.LessOrEqual(t, gh, got.Handshakes, "silent peer: %+v, node's peer %+v (one connection open over v1, one getheaders per handshake at most, no mempool request)", got, st.Peers[0])
	require.Equal(t, 0, got.Received[wire.CmdMemPool], "silent peer: %+v, node's peer %+v (one connection open over v1, one getheaders per handshake at most, no mempool request)", got, st.Peers[0])
	require.Equal(t, transcript.TransportV1, st.Peers[0].Transport, "silent peer: %+v, node's peer %+v (one connection open over v1, one getheaders per handshake at most, no mempool request)", got, st.Peers[0])
}
