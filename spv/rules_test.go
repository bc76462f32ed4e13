package spv

import (
	"testing"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/btcsuite/btcd/wire"
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
			// Find a data dir whose filter covers the empty element (a
			// loose target rate makes that likely; the tweak is random
			// per data dir).
			for try := 0; try < 400; try++ {
				w := NewMemWatcher(1, p2wpkh(1), p2wpkh(2))
				n, m := newTestManager(t, w, Config{FPRate: 0.3})
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
				if s.filter == nil || !s.filter.Matches(nil) {
					continue
				}
				_, banned := n.bans.IsBanned("btcd:1")
				if banned != tc.wantBan {
					t.Fatalf("banned %v (score %d), want %v; false positives %d, dropped %d",
						banned, n.bans.Score("btcd:1"), tc.wantBan, m.st.FalsePositives, m.st.Dropped)
				}
				if !tc.wantBan && (m.synced.Height != 3 || m.st.FalsePositives < 18 || m.st.Dropped != 0) {
					t.Fatalf("synced %d, false positives %d, dropped %d: every tx is a false positive of the empty push",
						m.synced.Height, m.st.FalsePositives, m.st.Dropped)
				}
				return
			}
			t.Fatal("no data dir in 400 gave a filter covering the empty element")
		})
	}
}
