package tui

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/wire"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/internal/amount"
	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// TestDashboardOnRealNode syncs a real watch-only wallet through the real
// light node from a regtest btcd (127.0.0.1 only, started by testnet) and
// drives the dashboard with the node's own events, logger and reload.
func TestDashboardOnRealNode(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h := testnet.NewT(t, testnet.Options{})
	k, err := testnet.NewKeyring(testnet.DemoSeed, h.Params())
	require.NoError(t, err)
	xpub, err := k.Xpub(testnet.PurposeBIP84)
	require.NoError(t, err)
	_, start, err := h.Node().BestBlock()
	require.NoError(t, err)

	// 12 blocks of noise; payments to receive addresses 0..4 in five of them
	var paid btcutil.Amount
	const payments = 5
	for b := 0; b < 12; b++ {
		_, err := h.Noise(3)
		require.NoError(t, err)
		if b%2 == 1 && b/2 < payments {
			s, err := k.PkScript(testnet.PurposeBIP84, 0, uint32(b/2))
			require.NoError(t, err)
			amt := int64(1_000_000 * (b/2 + 1))
			_, err = h.Pay([]*wire.TxOut{wire.NewTxOut(amt, s)})
			require.NoError(t, err)
			paid += btcutil.Amount(amt)
		}
		_, err = h.Mine(1)
		require.NoError(t, err)
	}
	_, tip, err := h.Node().BestBlock()
	require.NoError(t, err)

	w, err := wallet.Create(t.TempDir(), wallet.CreateConfig{Network: "regtest", Xpubs: []string{xpub}, Birthday: start + 1})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, w.Close()) })
	net, err := netparams.Lookup("regtest")
	require.NoError(t, err)
	sink := NewLogSink(256)
	dataDir := t.TempDir()
	node, err := spv.New(spv.Config{
		Network: net, DataDir: dataDir, Connect: []string{h.Node().P2PAddr()}, Watcher: w,
		Log:    slog.New(slog.NewTextHandler(sink, nil)),
		Tuning: spv.Tuning{RetryMin: 100 * time.Millisecond, RetryMax: time.Second, StallTimeout: 10 * time.Second},
	})
	require.NoError(t, err)
	sub := node.Subscribe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	require.NoError(t, node.Start(ctx))
	t.Cleanup(func() { require.NoError(t, node.Stop()) })

	readings := make(chan privacy.Reading, 64)
	changes := make(chan wallet.ChangeResult, 1)
	m := New(Config{Network: "regtest", Events: sub.Events(), Privacy: readings, Wallet: changes,
		Reload: node.ReloadFilter, Quit: cancel, Log: sink.Lines()})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(160, 48))
	waitScreen(t, tm, "synced to height "+itoa(tip))
	// the wallet's changes after the sync, as a session hands them
	change := walletChange(t, w)
	changes <- change
	waitScreen(t, tm, "confirmed "+amount.BTC(int64(change.Change.Balance.Confirmed)))
	// the node's periodic peer snapshot names the download peer
	waitScreen(t, tm, "(download "+h.Node().P2PAddr()+")")

	// the privacy meter reads the node's transcript: every filterload
	// sent, against a universe of two candidates per chain output so far
	raw, err := os.ReadFile(filepath.Join(dataDir, transcript.FileName))
	require.NoError(t, err)
	all, err := transcript.Read(bytes.NewReader(raw))
	require.NoError(t, err)
	recs := transcript.FilterRecords(all)
	require.NotEmpty(t, recs)
	meter := privacy.NewMeter(privacy.MeterConfig{})
	meter.SetCandidates(uint64(2 * 3 * 12 * 3))
	for _, r := range recs {
		rd, err := meter.Observe(r)
		require.NoError(t, err)
		readings <- rd
	}
	waitScreen(t, tm, fmt.Sprintf("─%d", len(recs)), "filters sent")
	tm.Type("r")
	waitScreen(t, tm, "last reload manual")
	tm.Type("q")
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(flowWait)).(Model)
	fm.width, fm.height = 160, 48
	t.Logf("final dashboard:\n%s", ansi.Strip(fm.View()))

	own, fps := fm.Matched()
	t.Logf("dashboard: %d wallet txs, %d false positives, %d peers, tip %d, %d log lines, %d filterloads",
		own, fps, len(fm.st.peerList), fm.st.blockHeight, fm.st.log.len(), fm.st.filter.Loads)
	require.Equal(t, payments, own)
	require.True(t, fm.st.synced)
	require.Equal(t, tip, fm.st.blockHeight)
	require.Len(t, fm.st.peerList, 1)
	require.Equal(t, h.Node().P2PAddr(), fm.st.downloadPeer())
	require.Equal(t, transcript.ReasonManual, fm.st.lastReason)
	require.GreaterOrEqual(t, fm.st.filter.Loads, 2)
	require.Error(t, ctx.Err(), "q cancelled the context")
	// the wallet panel shows the wallet's own figures (its changes after
	// the last block); compare with a direct read
	bal, err := w.Balance()
	require.NoError(t, err)
	require.Equal(t, paid, bal.Confirmed+bal.Unconfirmed+bal.Immature)
	require.True(t, fm.haveWallet)
	require.Equal(t, bal, fm.wallet.balance)
	require.Positive(t, fm.st.log.len())
	require.Equal(t, len(recs), fm.st.readings.len())
	require.Equal(t, meter.Current().IntersectionFP, fm.st.reading.IntersectionFP)
}

// itoa formats a height.
func itoa(h int32) string { return strconv.Itoa(int(h)) }
