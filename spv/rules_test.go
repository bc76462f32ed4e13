package spv

import (
	"testing"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/filterpolicy"
	"github.com/bloomwatch/bloomwatch/watch"
	"github.com/bloomwatch/bloomwatch/watch/watchtest"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// TestMirrorFollowsBtcdRules: btcd tests empty pushes (bip37.RulesBtcd),
// so once its filter's bits cover the empty element it sends every
// transaction with a segwit output. The honest btcd behind the bench's
// 10,000-address runs was banned for that ("tx does not match the
// filter" for a whole block): the node's mirror followed Core's rules.
// With the mirror on the server's rules the transactions are false
// positives and nobody is scored; with Core's rules (the control) the
// same server is banned.
func TestMirrorFollowsBtcdRules(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mirror  bip37.Rules
		wantBan bool
	}{
		{"mirror on btcd's rules", bip37.RulesBtcd, false},
		{"mirror on Core's rules (control)", bip37.RulesCore, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A tweak whose filter covers the empty element as loaded
			// (the server's copy only grows from there as matched
			// outpoints are added); searched by computation so the test
			// never depends on a lucky data dir.
			w := watchtest.NewMemWatcher(1, p2wpkh(1), p2wpkh(2))
			n, m := newTestManager(t, w, Config{FPRate: 0.3})
			n.tweak = tweakCoveringEmpty(t, m.els.snapshot(), n.cfg.FPRate)
			m.filter = nil // built by newManager with the data dir's tweak
			chain := mineBlocks(t, n.cfg.Network, genesis(n), 3, func(i int) []*wire.MsgTx {
				var txs []*wire.MsgTx
				for j := range 6 {
					txs = append(txs, payTo(byte(10*i+j), 1000, p2wpkh(byte(0x60+10*i+j))))
				}
				return txs
			})
			s := newSimPeer(t, m, "btcd:1", chain, 0)
			s.rules = bip37.RulesBtcd
			s.ps.rules = tc.mirror
			s.connect()
			s.run()
			require.True(t, loadedCoversEmpty(t, s), "the filter the node loaded does not cover the empty element")
			_, banned := n.bans.IsBanned("btcd:1")
			require.Equal(t, tc.wantBan, banned, "banned %v (score %d), want %v; false positives %d, dropped %d", banned, n.bans.Score("btcd:1"), tc.wantBan, m.st.FalsePositives, m.st.Dropped)
			require.False(t, !tc.wantBan && (m.synced.Height != 3 || m.st.FalsePositives < 18 || m.st.Dropped != 0), "synced %d, false positives %d, dropped %d: every tx is a false positive of the empty push", m.synced.Height, m.st.FalsePositives, m.st.Dropped)
		})
	}
}

// tweakCoveringEmpty returns the smallest tweak whose filter over els
// covers the empty element.
func tweakCoveringEmpty(t *testing.T, els watch.Elements, fpRate float64) uint32 {
	t.Helper()
	for tweak := uint32(0); tweak < 1<<16; tweak++ {
		f, err := filterpolicy.BuildFilter(els, fpRate, tweak)
		require.NoError(t, err)
		if f.Matches(nil) {
			return tweak
		}
	}
	require.FailNow(t, "no tweak below 2^16 gives a filter covering the empty element")
	return 0
}

// loadedCoversEmpty reports whether the first filter the node loaded on
// s covers the empty element.
func loadedCoversEmpty(t *testing.T, s *simServer) bool {
	t.Helper()
	for _, msg := range s.sent {
		if fl, ok := msg.(*wire.MsgFilterLoad); ok {
			f, err := bip37.LoadFilter(fl)
			require.NoError(t, err)
			return f.Matches(nil)
		}
	}
	return false
}
