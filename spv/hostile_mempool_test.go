package spv_test

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/testnet/hostile"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// fakePayment returns a fabricated unconfirmed transaction: a made-up
// input (with a witness of witness bytes when witness > 0) and outs. No
// node would accept it; a light client cannot tell.
func fakePayment(seed byte, witness int, outs ...*wire.TxOut) *wire.MsgTx {
	tx := wire.NewMsgTx(wire.TxVersion)
	var prev chainhash.Hash
	prev[0], prev[31] = seed, 0xfa
	in := wire.NewTxIn(wire.NewOutPoint(&prev, uint32(seed)), nil, nil)
	if witness > 0 {
		in.Witness = wire.TxWitness{make([]byte, witness), make([]byte, 33)}
	}
	tx.AddTxIn(in)
	for _, o := range outs {
		tx.AddTxOut(o)
	}
	return tx
}

// repeatOut returns n outputs of value paying script.
func repeatOut(n int, value int64, script []byte) []*wire.TxOut {
	outs := make([]*wire.TxOut, n)
	for i := range outs {
		outs[i] = wire.NewTxOut(value, script)
	}
	return outs
}

// mempoolLog collects the node's log.
type mempoolLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write implements io.Writer.
func (l *mempoolLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns the log so far.
func (l *mempoolLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// mempoolCase is one relay of fabricated unconfirmed transactions by a
// hostile peer.
type mempoolCase struct {
	name string
	// fakes are what the hostile peer's mempool holds besides btcd's;
	// genuine pays the wallet through btcd first (an honest pending
	// payment, relayed by both peers).
	fakes   func(addr []byte) []*wire.MsgTx
	genuine int64
	limits  wallet.MempoolLimits
	// The expected reaction: the ban reason's words, or the hostile
	// peer's score (not banned); the fakes kept as pending; and a line
	// of the node's log.
	banned   string
	score    uint32
	kept     int
	refused  int
	logLine  string
	maxBytes int64 // the wallet file's size after the relay, when set
}

// TestFabricatedPaymentsFromHostilePeer syncs the real wallet from a
// hostile wire-protocol peer (listed first) whose mempool also holds
// fabricated payments to a wallet address, and an honest btcd, all on
// 127.0.0.1, and checks the node's reaction once the peer answered the
// node's BIP35 mempool request: a 70,000-output payment (2.2 MB; it
// stopped the node and made the wallet unopenable), 21,000,001 BTC, -50
// BTC beside a genuine pending payment, an int64-overflowing pair of
// outputs, a payment of 1,001 outputs (within a standard transaction's
// size, over MaxPendingTxElements), more payments than the pending set
// holds (scaled down to 3), and two payments padded with 3.9 MB of
// witness each. Invalid ones ban the peer, one over a per-transaction
// budget scores it, a full pending set scores no one; the wallet keeps no
// refused fake, keeps the genuine payment's amount, stores no padding, and
// the node goes on syncing: it applies the next block btcd mines.
func TestFabricatedPaymentsFromHostilePeer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h, k := demoHarness(t)
	addr, err := k.PkScript(testnet.PurposeBIP84, testnet.BranchExternal, 0)
	require.NoError(t, err)
	_, start, err := h.Node().BestBlock()
	require.NoError(t, err)
	_, err = h.Pay([]*wire.TxOut{wire.NewTxOut(200_000, addr)})
	require.NoError(t, err)
	_, err = h.Mine(1)
	require.NoError(t, err)
	xpub, err := k.Xpub(testnet.PurposeBIP84)
	require.NoError(t, err)
	btc := int64(btcutil.SatoshiPerBitcoin)
	cases := []mempoolCase{
		{name: "70,000 outputs", fakes: func(a []byte) []*wire.MsgTx {
			return []*wire.MsgTx{fakePayment(1, 0, repeatOut(70_000, 1_000, a)...)}
		}, banned: "invalid transaction"},
		{name: "21,000,001 BTC", fakes: func(a []byte) []*wire.MsgTx {
			return []*wire.MsgTx{fakePayment(2, 0, wire.NewTxOut(21_000_001*btc, a))}
		}, banned: "invalid transaction"},
		{name: "-50 BTC beside a genuine payment", genuine: 30_000, fakes: func(a []byte) []*wire.MsgTx {
			return []*wire.MsgTx{fakePayment(3, 0, wire.NewTxOut(-50*btc, a))}
		}, banned: "invalid transaction"},
		{name: "int64 overflow pair", fakes: func(a []byte) []*wire.MsgTx {
			return []*wire.MsgTx{fakePayment(4, 0, wire.NewTxOut(math.MaxInt64/2+1, a), wire.NewTxOut(math.MaxInt64/2+1, a))}
		}, banned: "invalid transaction"},
		{name: "1,001 outputs", fakes: func(a []byte) []*wire.MsgTx {
			return []*wire.MsgTx{fakePayment(5, 0, repeatOut(wallet.MaxPendingTxElements+1, 1_000, a)...)}
		}, score: spv.RefusedTxScore, refused: 1, logLine: "unconfirmed transaction over budget"},
		{name: "pending set full", limits: wallet.MempoolLimits{Txs: 3}, fakes: func(a []byte) []*wire.MsgTx {
			var txs []*wire.MsgTx
			for i := range 5 {
				txs = append(txs, fakePayment(byte(10+i), 0, wire.NewTxOut(1_000, a)))
			}
			return txs
		}, kept: 3, refused: 2, logLine: "pending budget is full"},
		{name: "padded witness", fakes: func(a []byte) []*wire.MsgTx {
			return []*wire.MsgTx{fakePayment(20, 3_900_000, wire.NewTxOut(1_000, a)), fakePayment(21, 3_900_000, wire.NewTxOut(2_000, a))}
		}, kept: 2, maxBytes: 1 << 20},
	}
	confirmed := btcutil.Amount(200_000)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			runMempoolCase(t, h, xpub, start+1, addr, confirmed, tc)
		})
		confirmed += btcutil.Amount(tc.genuine) // mined at the end of the case
	}
}

// runMempoolCase runs one case of TestFabricatedPaymentsFromHostilePeer.
func runMempoolCase(t *testing.T, h *testnet.Harness, xpub string, birthday int32, addr []byte, confirmed btcutil.Amount, tc mempoolCase) {
	t.Helper()
	var genuine *wire.MsgTx
	if tc.genuine > 0 {
		var err error
		genuine, err = h.Pay([]*wire.TxOut{wire.NewTxOut(tc.genuine, addr)})
		require.NoError(t, err)
	}
	_, tip, err := h.Node().BestBlock()
	require.NoError(t, err)
	fakes := tc.fakes(addr)
	mem := hostile.NewFakeMempool(h.Node().RPC(), fakes...)
	hp, err := hostile.Start(context.Background(), hostile.Config{Upstream: mem, Params: h.Params(), Scenario: hostile.Honest})
	require.NoError(t, err)
	defer hp.Close()
	dir := t.TempDir()
	walletDir := filepath.Join(dir, "wallet")
	w, err := wallet.Create(walletDir, wallet.CreateConfig{Network: "regtest", Xpubs: []string{xpub}, Birthday: birthday},
		wallet.WithMempoolLimits(tc.limits))
	require.NoError(t, err)
	defer w.Close()
	sink := &mempoolLog{}
	log := slog.New(slog.NewTextHandler(sink, &slog.HandlerOptions{Level: slog.LevelDebug}))
	net, err := netparams.Lookup("regtest")
	require.NoError(t, err)
	n, err := spv.New(spv.Config{
		Network: net, DataDir: filepath.Join(dir, "spv"), Connect: []string{hp.Addr(), h.Node().P2PAddr()}, Watcher: w,
		Log:    log,
		Tuning: spv.Tuning{RetryMin: 100 * time.Millisecond, RetryMax: time.Second, StallTimeout: 10 * time.Second},
	})
	require.NoError(t, err)
	require.NoError(t, n.Start(context.Background()))
	defer func() {
		require.NoError(t, n.Stop(), "stop")
	}()

	banReason := func() string {
		for _, b := range n.Bans() {
			if b.Addr == hp.Addr() {
				return b.Reason
			}
		}
		return ""
	}
	pending := func() map[chainhash.Hash]wallet.TxSummary {
		txs, err := w.Txs()
		require.NoError(t, err)
		out := map[chainhash.Hash]wallet.TxSummary{}
		for _, s := range txs {
			if s.Height < 0 {
				out[s.Txid] = s
			}
		}
		return out
	}
	wantPending := tc.kept
	if genuine != nil {
		wantPending++
	}
	waitFor(t, func() bool {
		err := n.Status().Err
		require.NoError(t, err, "the node stopped")
		st := n.Status()
		switch {
		case st.WatcherHeight < tip:
			return false
		case tc.banned != "":
			return banReason() != "" && len(pending()) == wantPending
		default:
			return st.MempoolRefused == tc.refused && len(pending()) == wantPending
		}
	})
	for _, f := range fakes[:1] {
		require.NotEqual(t, 0, mem.Served(f.TxHash()), "the hostile peer never served its fake")
	}
	if tc.banned != "" {
		r := banReason()
		require.Contains(t, r, tc.banned, "ban reason %q, want %q", r, tc.banned)
	} else {
		// The peers table is refreshed at the node's tick.
		waitFor(t, func() bool {
			for _, p := range n.Status().Peers {
				if p.Addr == hp.Addr() {
					return p.BanScore == tc.score
				}
			}
			require.FailNow(t, "the hostile peer is no longer connected")
			return false
		})
	}
	// The node logs a score after recording it: wait for the line.
	scoredLine := `msg="peer misbehaved" addr=` + hp.Addr()
	if tc.score > 0 || tc.banned != "" {
		waitFor(t, func() bool { return strings.Contains(sink.String(), scoredLine) })
	} else {
		require.NotContains(t, sink.String(), scoredLine, "the hostile peer was scored")
	}
	if tc.logLine != "" {
		waitFor(t, func() bool { return strings.Contains(sink.String(), tc.logLine) })
	}
	bal, err := w.Balance()
	require.NoError(t, err)
	require.Equal(t, confirmed, bal.Confirmed, "confirmed balance %v, want %v", bal.Confirmed, confirmed)
	want := btcutil.Amount(tc.genuine)
	for _, f := range fakes {
		if _, ok := pending()[f.TxHash()]; ok {
			want += btcutil.Amount(f.TxOut[0].Value)
		}
	}
	require.Equal(t, want, bal.Unconfirmed, "unconfirmed balance %v, want %v (the genuine payment and the fakes kept)", bal.Unconfirmed, want)
	require.GreaterOrEqual(t, bal.Unconfirmed, btcutil.Amount(0), "unconfirmed balance %v, want %v (the genuine payment and the fakes kept)", bal.Unconfirmed, want)
	if genuine != nil {
		s, ok := pending()[genuine.TxHash()]
		require.True(t, ok, "genuine pending payment %+v (kept %v), want %d", s, ok, tc.genuine)
		require.Equal(t, tc.genuine, s.Delta, "genuine pending payment %+v (kept %v), want %d", s, ok, tc.genuine)
	}
	els, err := w.FilterElements()
	require.NoError(t, err)
	// Its addresses (and their lookahead reserve), a handful of
	// outpoints: never the fakes' outputs.
	require.LessOrEqual(t, len(els.OutPoints), 200, "the wallet watches %d outpoints", len(els.OutPoints))
	if tc.maxBytes > 0 {
		require.NoError(t, w.Flush())
		info, err := os.Stat(filepath.Join(walletDir, "wallet.db"))
		require.NoError(t, err)
		require.LessOrEqual(t, info.Size(), tc.maxBytes, "wallet.db %d bytes after the padded relays", info.Size())
	}
	// The node goes on syncing.
	hashes, err := h.Mine(1)
	require.NoError(t, err)
	waitFor(t, func() bool {
		sp, err := w.SyncedTo()
		require.NoError(t, err)
		return sp.Hash == *hashes[0]
	})
	if genuine != nil {
		txs, err := w.Txs()
		require.NoError(t, err)
		for _, s := range txs {
			require.False(t, s.Txid == genuine.TxHash() && s.Height != tip+1, "genuine payment at height %d, want %d", s.Height, tip+1)
		}
	}
}
