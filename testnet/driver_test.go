package testnet

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDriver runs the live-chain driver for a dozen fast blocks, with a
// reorg, and checks that it mined, paid the wallet and reorganised.
func TestDriver(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h := NewT(t, Options{})
	key, err := NewKeyring(DemoSeed, h.Params())
	require.NoError(t, err)
	_, start, err := h.Node().BestBlock()
	require.NoError(t, err)
	var mu sync.Mutex
	var whats []string
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d, err := StartDriver(ctx, h, DriverConfig{
		Interval: 100 * time.Millisecond, Keyring: key, NoisePerBlock: 2, ReorgEvery: 6, SpendEvery: 4, Seed: 3,
		OnBlock: func(_ int32, what string) {
			mu.Lock()
			whats = append(whats, what)
			mu.Unlock()
		},
	})
	require.NoError(t, err)
	for d.Blocks() < 8 && d.Err() == nil && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
	}
	require.NoError(t, d.Stop())
	_, end, err := h.Node().BestBlock()
	require.NoError(t, err)
	require.GreaterOrEqual(t, end, start+7, "height %d -> %d after %d steps", start, end, d.Blocks())
	mu.Lock()
	defer mu.Unlock()
	var paid, reorg bool
	for _, w := range whats {
		paid = paid || len(w) > 4 && w[:4] == "paid"
		reorg = reorg || len(w) > 5 && w[:5] == "reorg"
	}
	require.True(t, paid, "steps %q: want a wallet payment and a reorg", whats)
	require.True(t, reorg, "steps %q: want a wallet payment and a reorg", whats)
}
