package spv_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet/hostile"
	"github.com/bloomwatch/bloomwatch/watch/watchtest"
)

// TestCFHostilePeers syncs over BIP158 with a hostile compact-filter peer
// listed first and waited for (so it is the download peer: it serves the
// filters and the blocks) and an honest btcd: a peer serving a filter its
// headers do not commit to, a consistent chain of filter headers of
// filters that match nothing, or notfound for the matching blocks is
// banned, and the watcher still ends equal to the truth.
func TestCFHostilePeers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h, k := demoHarness(t)
	scripts := keyScripts(t, k, 6)
	_, start, _ := h.Node().BestBlock()
	truth := buildChain(t, h, k, scripts, 40, 3, 11)
	_, tip, _ := h.Node().BestBlock()
	for _, sc := range hostile.CFScenarios() {
		t.Run(string(sc), func(t *testing.T) {
			t.Parallel()
			hp, err := hostile.Start(context.Background(), hostile.Config{
				Upstream: h.Node().RPC(), Params: h.Params(), Scenario: sc,
			})
			require.NoError(t, err)
			defer hp.Close()
			w := watchtest.NewMemWatcher(start+1, scripts...)
			dl := newDLLog()
			cfg := hostileFirst(t, hp, sc, h.Node().P2PAddr(), w, t.TempDir())
			cfg.Protocol = spv.ProtocolBIP158
			cfg.Log = slog.New(dl)
			n := startNodeWith(t, cfg)
			waitSynced(t, n, tip)
			checkTruth(t, w, truth)
			require.True(t, dl.servedFirst(hp.Addr()), "the hostile peer was the first download peer (picked: %v)", dl.Picks())
			require.Positive(t, hp.Stats().Applied, "the misbehaviour was carried out")
			banned := false
			for _, b := range n.Bans() {
				banned = banned || b.Addr == hp.Addr()
			}
			st := n.Status()
			t.Logf("%s: banned %v, conflicts %d, filters %d, blocks %d, applied %d", sc, banned, st.CF.Conflicts, st.CF.Filters, st.CF.Blocks, hp.Stats().Applied)
			require.True(t, banned, "hostile peer banned (bans %+v)", n.Bans())
			if sc == hostile.CFWrongHeader {
				require.Positive(t, st.CF.Conflicts, "the block settled a filter-header conflict")
			}
		})
	}
}
