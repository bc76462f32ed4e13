package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/wallet"
	"github.com/stretchr/testify/require"
)

// TestOneWalletReadPerEventBatch syncs a wallet from a real btcd twice,
// under a stand-in dashboard that drains the session's three feeds and
// without one, and counts the wallet reads the session makes (its Changes
// with a dashboard, its AddressCounts without): one when the bridge
// starts (with a dashboard every address and output), then at most one
// per batch of node events (batches made short here, so that the sync
// spans many), and none in a batch that cannot have changed the wallet:
// once synced, the node's peer snapshots (every second) cost no read, and
// nothing is read on a timer. The session has no read of the node's
// status to count: the events carry what it needs (spv's
// TestEventsCarryWhatStatusHad).
func TestOneWalletReadPerEventBatch(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	// Batches of 200 µs: the sync spans many of them.
	saved := batchWindow
	batchWindow = 200 * time.Microsecond
	defer func() { batchWindow = saved }()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	h := testnet.NewT(t, testnet.Options{})
	key, err := testnet.NewKeyring(testnet.DemoSeed, h.Params())
	require.NoError(t, err)
	truth, err := h.BuildChain(ctx, testnet.ChainSpec{Blocks: 150, TxsPerBlock: 2, Keyring: key, WatchAddrs: 6, Seed: 3})
	require.NoError(t, err)
	for _, dashboard := range []bool{true, false} {
		name := map[bool]string{true: "dashboard", false: "headless"}[dashboard]
		t.Run(name, func(t *testing.T) {
			countReads(t, ctx, h.Node().P2PAddr(), truth, dashboard)
		})
	}
}

// countReads is one sync of TestOneWalletReadPerEventBatch.
func countReads(t *testing.T, ctx context.Context, peer string, truth *testnet.Truth, dashboard bool) {
	w, _, err := OpenWallet(filepath.Join(t.TempDir(), "w"), wallet.CreateConfig{Network: "regtest",
		Xpubs: []string{truth.Xpub}, Birthday: truth.StartHeight + 1})
	require.NoError(t, err)
	defer w.Close()
	s, err := New(Config{Wallet: w, Node: spv.Config{Connect: []string{peer}, MaxPeers: 1},
		Dashboard: dashboard, Stderr: io.Discard})
	require.NoError(t, err)
	type batch struct{ events, reads int }
	var (
		mu      sync.Mutex
		reads   int
		batches []batch
		synced  = -1 // batches ended when the bridge handled the first SyncDone
		blocks  int  // BlockProcessed events
	)
	read := s.changes
	s.changes = func(c *wallet.ChangeCursor) (wallet.Change, error) {
		mu.Lock()
		reads++
		mu.Unlock()
		return read(c)
	}
	count := s.counts
	s.counts = func() (wallet.AddressCounts, error) {
		mu.Lock()
		reads++
		mu.Unlock()
		return count()
	}
	s.batchDone = func(events int) {
		mu.Lock()
		batches = append(batches, batch{events, reads})
		reads = 0
		mu.Unlock()
	}
	// The stand-in dashboard, or a program's own subscription.
	var first *wallet.Change
	// The wallet-change reader reports its errors here, for the test
	// goroutine to require once the readers are done.
	var readErr error
	var readers sync.WaitGroup
	stream := s.Events()
	readers.Add(1)
	go func() {
		defer readers.Done()
		for ev := range stream {
			if _, ok := ev.(spv.BlockProcessed); ok {
				mu.Lock()
				blocks++
				mu.Unlock()
			}
		}
	}()
	// The bridge's own mark of the sync (a program's subscription may
	// run ahead of the bridge's batches).
	go func() {
		select {
		case <-s.synced:
			mu.Lock()
			synced = len(batches)
			mu.Unlock()
		case <-ctx.Done():
		}
	}()
	if dashboard {
		readers.Add(2)
		go func() {
			defer readers.Done()
			for range s.Readings() {
			}
		}()
		go func() {
			defer readers.Done()
			for r := range s.WalletChanges() {
				readErr = errors.Join(readErr, r.Err)
				if first == nil {
					c := r.Change
					first = &c
				}
			}
		}()
	}
	require.NoError(t, s.Start(ctx))
	// Synced, then idle for three peer snapshots.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		mu.Lock()
		idle := 0
		if synced >= 0 {
			idle = len(batches) - synced
		}
		mu.Unlock()
		if idle >= 4 {
			break
		}
		require.False(t, time.Now().After(deadline), "the session did not sync and idle")
		time.Sleep(50 * time.Millisecond)
	}
	require.NoError(t, s.Stop())
	closed := make(chan struct{})
	go func() { readers.Wait(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		require.FailNow(t, "the session's feeds were not closed within 30 s of Stop")
	}
	require.NoError(t, readErr, "wallet read")

	mu.Lock()
	defer mu.Unlock()
	events, total := 0, 0
	for i, b := range batches {
		events += b.events
		total += b.reads
		switch {
		case i == 0 && b.reads > 2:
			require.FailNow(t, fmt.Sprintf("first batch (%d events): %d wallet reads, want the start's and at most one more", b.events, b.reads))
		case i > 0 && b.reads > 1:
			require.FailNow(t, fmt.Sprintf("batch %d (%d events): %d wallet reads, want at most one", i, b.events, b.reads))
		case i > synced+1 && b.reads > 0:
			require.FailNow(t, fmt.Sprintf("batch %d after the sync (%d events: peer snapshots): %d wallet reads, want none", i, b.events, b.reads))
		}
	}
	t.Logf("%d events (%d blocks) in %d batches, %d wallet reads (%d batches after the sync)",
		events, blocks, len(batches), total, len(batches)-synced)
	require.GreaterOrEqual(t, synced, 2, "the sync spanned %d batches, %d reads for %d blocks: too few batches to tell one read per batch from one per block", synced, total, blocks)
	require.Less(t, total, blocks, "the sync spanned %d batches, %d reads for %d blocks: too few batches to tell one read per batch from one per block", synced, total, blocks)
	if dashboard {
		require.NotNil(t, first, "no wallet change reached the dashboard")
		require.Len(t, first.Addresses, first.Counts.Derived+first.Counts.Imported, "the first change does not hold every address: %+v", first)
		require.NotEmpty(t, first.Addresses, "the first change does not hold every address: %+v", first)
	}
}
