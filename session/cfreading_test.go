package session_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/filterpolicy"
	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/privacy/stats"
	"github.com/bloomwatch/bloomwatch/session"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// TestBIP158ReadingIsLiveAndTrue syncs a wallet over BIP158 from a real
// btcd with a dashboard's feeds: the readings the dashboard gets carry
// what the BIP158 peers learned, never going back, and the last one's
// figures are those of the transcript's requests
// (privacy.SummarizeBlockRequests, Summary.CF.Seen) and of the node's
// compact-filter status (blocks fetched, false positives, filters
// scanned). The BIP37 alternative is the meter's reading of the filter
// the wallet's elements give at the session's rate and the node's tweak,
// and the filter a BIP37 sync of the same wallet then loads has its size,
// hash functions, elements and exact rates.
func TestBIP158ReadingIsLiveAndTrue(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	h := testnet.NewT(t, testnet.Options{})
	key, err := testnet.NewKeyring(testnet.DemoSeed, h.Params())
	require.NoError(t, err)
	truth, err := h.BuildChain(ctx, testnet.ChainSpec{Blocks: 40, TxsPerBlock: 3, Keyring: key, WatchAddrs: 4, Seed: 7})
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "w")
	spec := wallet.CreateConfig{Network: "regtest", Xpubs: []string{truth.Xpub}, Birthday: truth.StartHeight + 1,
		GapExternal: wallet.DefaultGapExternal, GapInternal: wallet.DefaultGapInternal}
	w, _, err := session.OpenWallet(dir, spec)
	require.NoError(t, err)
	defer w.Close()
	s, err := session.New(session.Config{Wallet: w, Dashboard: true, UntilSynced: true, PeerTimeout: time.Minute,
		Node:   spv.Config{Connect: []string{h.Node().P2PAddr()}, MaxPeers: 1, Protocol: spv.ProtocolBIP158},
		Stderr: testWriter{t}})
	require.NoError(t, err)
	require.NoError(t, s.Start(ctx))
	// The dashboard's side: drain every feed, keep the readings.
	var live []privacy.CFReading
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range s.Events() {
		}
	}()
	go func() {
		for range s.WalletChanges() {
		}
	}()
	readings := make(chan []privacy.CFReading, 1)
	go func() {
		var got []privacy.CFReading
		for rd := range s.Readings() {
			if rd.CF != nil {
				got = append(got, *rd.CF)
			}
		}
		readings <- got
	}()
	werr := s.Wait(ctx)
	sum, serr := s.Summary()
	require.NoError(t, errors.Join(werr, s.Stop(), serr))
	<-done
	live = <-readings
	require.Equal(t, truth.TipHash.String(), sum.TipHash)
	require.Equal(t, "bip158", sum.Protocol)
	require.NotNil(t, sum.CF)
	require.NotNil(t, sum.CF.Seen)
	require.NotNil(t, sum.Privacy)
	cf := sum.Privacy.CF
	require.NotNil(t, cf, "no compact-filter reading over BIP158")

	// The figures at the end are the transcript's and the node's.
	seen := sum.CF.Seen
	require.Equal(t, seen.FiltersFrom, cf.FiltersFrom)
	require.Equal(t, len(seen.Blocks), cf.Fetched)
	require.Equal(t, seen.PerPeer, cf.PerPeer)
	require.Equal(t, sum.CF.Blocks, cf.WalletBlocks+cf.FalsePositiveBlocks, "blocks fetched")
	require.Equal(t, sum.CF.FalsePositiveBlocks, cf.FalsePositiveBlocks)
	require.Equal(t, sum.CF.Filters, cf.Scanned, "one filter scanned per block delivered")
	require.Equal(t, sum.Blocks, cf.Scanned)
	require.Equal(t, int(truth.TipHeight-truth.StartHeight), cf.Scanned, "every block from the birthday")
	require.Positive(t, cf.WalletBlocks)
	require.Equal(t, stats.PoissonInterval(uint64(cf.FalsePositiveBlocks), stats.ConfidenceLevel), cf.FPBlocksCI)
	require.Positive(t, cf.Queries)
	// Every scanned block that held nothing of the wallet's adds its
	// chance of a false match: at least one query's 1/M, at most the
	// largest query count's.
	quiet := float64(cf.Scanned - cf.WalletBlocks)
	require.GreaterOrEqual(t, cf.ExpectedFPBlocks, quiet*privacy.BlockFPRate(1, 1))
	require.LessOrEqual(t, cf.ExpectedFPBlocks, quiet*privacy.BlockFPRate(cf.Queries, 1))

	// Live: the dashboard got a reading at each batch's end, never ahead
	// of the end and never going back; the last is the session's final
	// one (fewer readings than the feed's buffer: none dropped).
	require.NotEmpty(t, live)
	for i, r := range live {
		require.LessOrEqual(t, r.Scanned, cf.Scanned)
		require.LessOrEqual(t, r.Fetched, cf.Fetched)
		if i > 0 {
			require.GreaterOrEqual(t, r.Scanned, live[i-1].Scanned)
			require.GreaterOrEqual(t, r.Fetched, live[i-1].Fetched)
		}
	}
	require.Equal(t, *cf, live[len(live)-1])

	// The BIP37 alternative: the meter's reading of the filter the
	// wallet's elements give, built here on its own.
	alt := cf.BIP37
	require.NotNil(t, alt)
	els, err := w.FilterElements()
	require.NoError(t, err)
	f, err := filterpolicy.BuildFilter(els, filterpolicy.DefaultFPRate, s.Node().Tweak())
	require.NoError(t, err)
	counts, err := w.AddressCounts()
	require.NoError(t, err)
	want, err := privacy.MeasureFilter(privacy.MeterConfig{FPRate: filterpolicy.DefaultFPRate}, f,
		privacy.WalletCounts{OnChain: counts.Used(), Watched: counts.Derived + counts.Imported, Elements: els.Len()},
		sum.Privacy.Candidates, sum.Privacy.UniverseSource)
	require.NoError(t, err)
	require.Equal(t, *want, *alt)
	require.Positive(t, alt.Bytes)
	require.Positive(t, alt.FPRate)
	require.NoError(t, w.Close())

	// A BIP37 sync of the same wallet loads that filter.
	b37 := syncOnce(t, ctx, dir, h.Node().P2PAddr(), spec)
	require.Equal(t, "bip37", b37.Protocol)
	require.Equal(t, 1, b37.Filter.Loads, "one filterload: nothing new to sync")
	require.Equal(t, alt.Bytes, b37.Filter.Bytes)
	require.Equal(t, alt.HashFuncs, b37.Filter.HashFuncs)
	require.Equal(t, alt.Elements, b37.Filter.Elements)
	require.NotNil(t, b37.Privacy)
	require.Equal(t, alt.FPRate, b37.Privacy.FPRate, "the exact rate of the filter loaded")
	require.Equal(t, alt.TxFPRate, b37.Privacy.ExpectedTxFPRate)
	t.Logf("bip158: %d scanned from %d, %d fetched (%d wallet, %d fp; expected %.4f, 95 %% [%.2f, %.2f]), %d queries; "+
		"bip37 alternative: %d bytes, %d hash funcs, %d elements, fp %.3g, tx fp %.3g; %d readings",
		cf.Scanned, cf.FiltersFrom, cf.Fetched, cf.WalletBlocks, cf.FalsePositiveBlocks, cf.ExpectedFPBlocks,
		cf.FPBlocksCI.Lo, cf.FPBlocksCI.Hi, cf.Queries, alt.Bytes, alt.HashFuncs, alt.Elements, alt.FPRate, alt.TxFPRate, len(live))
}
