package spv

import (
	"fmt"
	"testing"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/watch/watchtest"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

func TestNetGroup(t *testing.T) {
	for _, c := range []struct{ a, b string }{
		{"1.2.3.4:8333", "1.2.200.9:18333"},
		{"[2001:db8:1::1]:8333", "[2001:db8:ffff::2]:8333"},
		{"[::ffff:1.2.3.4]:8333", "1.2.9.9:8333"},
		{"abcdefghijklmnop.onion:8333", "azzzzzzzzzzzzzzz.onion:8333"},
		{"seed.example.org:8333", "SEED.example.org.:18333"},
	} {
		require.Equal(t, netGroup(c.b), netGroup(c.a), "%s (%s) and %s (%s) differ", c.a, netGroup(c.a), c.b, netGroup(c.b))
	}
	for _, c := range []struct{ a, b string }{
		{"1.2.3.4:8333", "1.3.3.4:8333"},
		{"[2001:db8:1::1]:8333", "[2001:db9:1::1]:8333"},
		{"abcdefghijklmnop.onion:8333", "bbcdefghijklmnop.onion:8333"},
		{"a.example.org:8333", "b.example.org:8333"},
		{"1.2.3.4:8333", "[2001:db8:1::1]:8333"},
	} {
		require.NotEqual(t, netGroup(c.b), netGroup(c.a), "%s and %s share group %s", c.a, c.b, netGroup(c.a))
	}
}

// checkerManager returns a manager with ready peers at addrs (the first
// is the primary), each with a filter and block 10.
func checkerManager(t *testing.T, cfg Config, addrs ...string) (*manager, []*peerState) {
	t.Helper()
	_, m := newTestManager(t, watchtest.NewMemWatcher(1, p2wpkh(1)), cfg)
	f, err := bip37.NewFilter(64, 0.001, 1, bip37.UpdateAll)
	require.NoError(t, err)
	var out []*peerState
	for _, a := range addrs {
		ps := &peerState{addr: a, ready: true, lastBlock: 10, mirror: f.Clone()}
		m.peers[ps] = struct{}{}
		out = append(out, ps)
	}
	return m, out
}

// TestPickCheckersIsRandomAndDiverse: with more candidates than
// CheckPeers, the second peers change from block to block (every
// candidate is drawn, none always), peers in other network groups than
// the primary's come first, and two of one group are drawn together only
// when no other group is left.
func TestPickCheckersIsRandomAndDiverse(t *testing.T) {
	m, ps := checkerManager(t, Config{Tuning: Tuning{CheckPeers: 2}},
		"10.0.0.1:8333",                  // primary
		"10.0.0.2:8333", "10.0.9.9:8333", // its /16
		"10.1.0.1:8333", "10.1.0.2:8333", // another /16
		"10.2.0.1:8333", "10.3.0.1:8333")
	plan := &checkPlan{height: 10, primary: ps[0]}
	drawn := map[string]int{}
	for range 2000 {
		got := m.pickCheckers(plan)
		require.Len(t, got, 2, "%d checkers, want 2", len(got))
		g0, g1 := netGroup(got[0].addr), netGroup(got[1].addr)
		require.NotEqual(t, netGroup(ps[0].addr), g0, "a peer of the primary's /16 drawn while others were free: %s %s", got[0].addr, got[1].addr)
		require.NotEqual(t, netGroup(ps[0].addr), g1, "a peer of the primary's /16 drawn while others were free: %s %s", got[0].addr, got[1].addr)
		require.NotEqual(t, g1, g0, "two peers of one /16 drawn while other groups were free: %s %s", got[0].addr, got[1].addr)
		for _, p := range got {
			drawn[p.addr]++
		}
	}
	for _, a := range []string{"10.1.0.1:8333", "10.1.0.2:8333", "10.2.0.1:8333", "10.3.0.1:8333"} {
		n := drawn[a]
		require.GreaterOrEqual(t, n, 300, "%s drawn %d times of 2000 blocks: not an even random draw (%v)", a, n, drawn)
		require.LessOrEqual(t, n, 1700, "%s drawn %d times of 2000 blocks: not an even random draw (%v)", a, n, drawn)
	}
	// Only the primary's group left besides one peer: it is used.
	m2, ps2 := checkerManager(t, Config{Tuning: Tuning{CheckPeers: 2}}, "10.0.0.1:8333", "10.0.0.2:8333", "10.5.0.1:8333")
	got := m2.pickCheckers(&checkPlan{height: 10, primary: ps2[0]})
	require.Len(t, got, 2, "%d checkers of 2 candidates", len(got))
	// Fewer candidates than CheckPeers: all of them; one: one.
	m3, ps3 := checkerManager(t, Config{Tuning: Tuning{CheckPeers: 3}}, "127.0.0.1:1", "127.0.0.1:2")
	got = m3.pickCheckers(&checkPlan{height: 10, primary: ps3[0]})
	require.Len(t, got, 1, "one candidate: %v", got)
	require.Same(t, ps3[1], got[0], "one candidate: %v", got)
}

// TestAddrSourcePrefersNewGroups: a peer address from DNS seeds is taken
// from a network group no connection has while there is one.
func TestAddrSourcePrefersNewGroups(t *testing.T) {
	n, _ := newTestManager(t, watchtest.NewMemWatcher(1, p2wpkh(1)), Config{})
	a := newAddrSource(n, 3)
	a.pool = []string{"10.0.0.1:8333", "10.0.0.2:8333", "10.0.0.3:8333", "10.0.0.4:8333", "10.9.0.1:8333", "10.8.0.1:8333"}
	got := map[string]bool{}
	for range 3 {
		addr, ok := a.pick()
		require.True(t, ok, "no address")
		require.False(t, got[netGroup(addr)], "a second address of %s while other groups were free (%v)", netGroup(addr), got)
		got[netGroup(addr)] = true
	}
}

// TestCheckerGetsTheOutpointsItLacks: with one second peer drawn per block
// among three, the one asked about a block often filtered neither the
// block that paid the wallet nor a filter holding that coin, so its filter
// would not match a spend of it. The download peer hides the spends (sent
// to a script the wallet does not watch: matched only through the coin):
// a second peer holding the coin (one that checked the paying block) is
// drawn first, so every hidden spend is caught, and no peer gets a filter
// right after the payment. Drawn without that preference and
// without a reload, about two runs in three miss it.
func TestCheckerGetsTheOutpointsItLacks(t *testing.T) {
	const runs = 30
	for run := range runs {
		w := watchtest.NewMemWatcher(1, p2wpkh(1))
		n, m := newTestManager(t, w, Config{SpotCheckEvery: 1, Tuning: Tuning{CheckPeers: 1}})
		chain := walletChain(t, n, 8)
		spend := chain[7].Transactions[2] // spends block 7's payment
		hidden := map[chainhash.Hash]bool{}
		liar := addSimPeer(t, m, "liar:1", chain, 0)
		liar.tamper = omitOne(liar.blocks, func() *bip37.Filter { return liar.filter }, func(_ int, txs []*wire.MsgTx) *wire.MsgTx {
			for _, tx := range txs {
				if tx.TxHash() == spend.TxHash() {
					return tx
				}
			}
			return nil
		}, hidden)
		sims := []*simServer{liar}
		for i := range 3 {
			sims = append(sims, addSimPeer(t, m, fmt.Sprintf("honest:%d", i), chain, i+1))
		}
		for busy := true; busy; {
			busy = false
			for _, s := range sims {
				if len(s.queue) > 0 {
					busy = true
					s.run()
				}
			}
		}
		require.NotEqual(t, 0, len(hidden), "run %d: the liar hid nothing", run)
		_, banned := n.bans.IsBanned("liar:1")
		require.True(t, banned, "run %d: the hidden spend went unnoticed (omissions %d)", run, m.st.Omissions)
		_, ok := w.Txs()[spend.TxHash()]
		require.True(t, ok, "run %d: the wallet lacks the hidden spend", run)
	}
}
