package session

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/wallet"
	"github.com/stretchr/testify/require"
)

// TestStopWhenTheDashboardFailsWithAFullBuffer runs a session under a
// dashboard that fails, without reading its events, once their buffer is
// full (made small here; a sync of btcd's hundred setup blocks fills it).
// Run stops the session and must return the dashboard's error in bounded
// time: the bridge's send to the dashboard gives up at the session's own
// quit, which Stop closes before it waits for the bridge, not only at the
// caller's context, which Run cancels after Stop.
func TestStopWhenTheDashboardFailsWithAFullBuffer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	saved := dashboardBuffer
	dashboardBuffer = 4
	defer func() { dashboardBuffer = saved }()
	h := testnet.NewT(t, testnet.Options{})
	w, _, err := OpenWallet(t.TempDir(), wallet.CreateConfig{Network: "regtest",
		Addresses: []string{"bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080"}})
	require.NoError(t, err)
	defer w.Close()
	errDashboard := errors.New("the dashboard failed")
	ui := func(ctx context.Context, s *Session, _ context.CancelFunc) error {
		deadline := time.Now().Add(time.Minute)
		for len(s.events) < cap(s.events) {
			if time.Now().After(deadline) {
				return errors.New("the dashboard's buffer never filled")
			}
			time.Sleep(5 * time.Millisecond)
		}
		return errDashboard
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, Config{Wallet: w, Node: spv.Config{Connect: []string{h.Node().P2PAddr()}},
			Dashboard: true, Stderr: io.Discard}, nil, ui)
		done <- err
	}()
	select {
	case err := <-done:
		require.ErrorIs(t, err, errDashboard, "Run: %v, want the dashboard's error", err)
	case <-time.After(90 * time.Second):
		require.FailNow(t, "Run did not return: Stop waits for a bridge blocked on the dashboard's full buffer")
	}
}
