package session_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/session"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/testnet/hostile"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// TestUntilSyncedWaitsForTheCheck runs an UntilSynced session in which a
// lying download peer (hostile OmitMatchedTx) serves the tip block first
// and hides the wallet's payment in it, while the honest btcd is one
// block behind. The session must not end at the tip: its state is "at the
// tip, 1 block awaiting a check". When the honest btcd gets the block
// the check catches the liar and the session ends synced with the
// payment; when it never does, the session ends after CheckWait with
// ErrCheckAbandoned, one line naming the block.
func TestUntilSyncedWaitsForTheCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	for _, arrives := range []bool{true, false} {
		name := "check abandoned"
		if arrives {
			name = "check catches the liar"
		}
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
			defer cancel()
			h := testnet.NewT(t, testnet.Options{})
			key, err := testnet.NewKeyring(testnet.DemoSeed, h.Params())
			require.NoError(t, err)
			_, err = h.Mine(2)
			require.NoError(t, err)
			_, start, err := h.Node().BestBlock()
			require.NoError(t, err)
			honest, err := testnet.StartNode(ctx, testnet.Config{})
			require.NoError(t, err)
			t.Cleanup(func() { _ = honest.Stop() })
			require.NoError(t, honest.ConnectToCtx(ctx, h.Node()))
			require.NoError(t, honest.DisconnectFromCtx(ctx, h.Node()))
			addr, err := key.Address(testnet.PurposeBIP84, 0, 0)
			require.NoError(t, err)
			pay, err := h.PayAddress(addr, btcutil.Amount(5_010))
			require.NoError(t, err)
			_, err = h.Mine(1)
			require.NoError(t, err)
			liar, err := hostile.Start(context.Background(), hostile.Config{
				Upstream: h.Node().RPC(), Params: h.Params(), Scenario: hostile.OmitMatchedTx,
			})
			require.NoError(t, err)
			t.Cleanup(func() { liar.Close() })

			w, _, err := session.OpenWallet(filepath.Join(t.TempDir(), "w"), wallet.CreateConfig{
				Network: "regtest", Addresses: []string{addr.String()}, Birthday: start + 1})
			require.NoError(t, err)
			defer w.Close()
			wait := 3 * time.Second // the honest btcd never gets the block
			if arrives {
				wait = 2 * time.Minute // it gets it within a loaded machine's time
			}
			s, err := session.New(session.Config{Wallet: w, UntilSynced: true, PeerTimeout: time.Minute, Stderr: testWriter{t},
				Node: spv.Config{Connect: []string{liar.Addr(), honest.P2PAddr()},
					SpotCheckEvery: 1, Tuning: spv.Tuning{RetryMin: 50 * time.Millisecond, RetryMax: 200 * time.Millisecond, MinPeers: 2, MinPeersWait: 40 * time.Second, CheckWait: wait}}})
			require.NoError(t, err)
			require.NoError(t, s.Start(ctx))
			defer s.Stop()
			if arrives {
				require.Eventually(t, func() bool { return s.Node().Status().AtTip }, time.Minute, 20*time.Millisecond)
				st := s.Node().Status()
				require.Equal(t, "at the tip, 1 block awaiting a check", session.SyncState(st))
				select {
				case <-s.Done():
					require.FailNow(t, fmt.Sprintf("the session ended at the tip with a check awaited: %v", s.Err()))
				default:
				}
				require.NoError(t, honest.ConnectToCtx(ctx, h.Node()))
			}
			werr := s.Wait(ctx)
			if !arrives {
				require.ErrorIs(t, werr, session.ErrCheckAbandoned)
				require.NotContains(t, werr.Error(), "\n")
				t.Log(werr)
				return
			}
			require.NoError(t, werr)
			sum, err := s.Summary()
			require.NoError(t, err)
			require.Equal(t, "synced", sum.State)
			require.Equal(t, int64(5_010), sum.BalanceSat)
			found := false
			for _, tx := range sum.Txs {
				found = found || tx.Txid == pay.TxHash().String()
			}
			require.True(t, found, "the hidden payment is in the wallet")
			banned := false
			for _, b := range sum.Bans {
				banned = banned || strings.Contains(b.Addr, liar.Addr())
			}
			require.True(t, banned, "the liar is banned: %+v", sum.Bans)
		})
	}
}
