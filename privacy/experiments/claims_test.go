package experiments

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/bloomwatch/bloomwatch/filterpolicy"
	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/stretchr/testify/require"
)

// The claims docs/RESEARCH.md and the README make, each asserted here on a
// smaller run of the experiment that measured it.

// TestClaimNickFormulaMissesOwnKeyTerm: with rates scaled until wrong
// merges are common (x100), the crawler's wrong merges over several
// populations agree with the full expectation and not with Nick's term
// alone, because a wallet's own keys matching another wallet's filter
// (the left-out term) cause a share of them; the significance rule makes
// none.
func TestClaimNickFormulaMissesOwnKeyTerm(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates populations")
	}
	var measured, nick, both float64
	var sigWrong int
	const reps = 2
	for rep := range reps {
		pop, err := NewPopulation(PopulationConfig{Seed: trialSeed(1, rep), WalletsPerKind: linkingWallets, Blocks: linkingBlocks})
		require.NoError(t, err)
		sessions, err := pop.Simulate(ClientOptions{RateScale: 100})
		require.NoError(t, err)
		v, err := Crawl(context.Background(), pop, sessions, linkingBackground, 3, 2)
		require.NoError(t, err)
		for a := range sessions {
			for b := a + 1; b < len(sessions); b++ {
				if sessions[a].Wallet != sessions[b].Wallet {
					e := v.Pair(a, b)
					nick, both = nick+e.Nick, both+e.Both
				}
			}
		}
		measured += float64(countLinks(v, sessions, v.Overlaps(sessions), LinkAnyOverlap).wrong)
		sigWrong += countLinks(v, sessions, v.Overlaps(sessions), LinkSignificant).wrong
	}
	t.Logf("wrong merges over %d populations: %.0f measured; expected: every term %.4g, Nick's term %.4g", reps, measured, both, nick)
	require.GreaterOrEqual(t, measured, float64(50), "only %.0f wrong merges: the scale does not exercise the formula", measured)
	require.InDelta(t, both, measured, math.Abs(measured-nick), "measured %.0f is not nearer the full expectation %.4g than Nick's term %.4g", measured, both, nick)
	require.GreaterOrEqual(t, measured, nick+3*math.Sqrt(nick), "measured %.0f is not nearer the full expectation %.4g than Nick's term %.4g", measured, both, nick)
	require.LessOrEqual(t, sigWrong, 1, "significant-overlap rule: %d wrong merges", sigWrong)
}

// TestClaimCorrectedRecall: Nick's correction recovers a wallet's recall
// from a match set whose false positives are isolated keys.
func TestClaimCorrectedRecall(t *testing.T) {
	// A wallet of 6 keys in clusters {0,1,2} and {3,4}, {5}; 4 isolated
	// false positives. Recall on the wallet: keys 0-2 see 3/6, 3-4 see
	// 2/6, 5 sees 1/6: (9+4+1)/36.
	rhoW := (3*3 + 2*2 + 1.0) / 36
	m := 10
	rhoM := ((3*3 + 2*2 + 1.0) + 4) / float64(m*m)
	got := CorrectedRecall(rhoM, m, 4)
	require.InDelta(t, rhoW, got, 1e-12, "corrected recall %v, want %v", got, rhoW)
	mean, lo, hi := ClusterCorrection(1, []float64{rhoM}, []int{m}, []float64{4})
	require.True(t, lo <= rhoW+0.1 && hi >= rhoW-0.1, "Monte Carlo correction %v [%v, %v] far from %v", mean, lo, hi, rhoW)
	require.False(t, math.IsNaN(mean), "Monte Carlo correction %v [%v, %v] far from %v", mean, lo, hi, rhoW)
}

// noiseOutcomeOf runs one noise variant on a small population.
func noiseOutcomeOf(t *testing.T, pop *Population, v noiseVariant) noiseOutcome {
	t.Helper()
	o, err := runNoiseVariant(context.Background(), pop, pop.OnChainCandidates(), v, Config{Seed: 3, Workers: 2})
	require.NoError(t, err)
	return o
}

// TestClaimNoise: fresh decoys are removed by the intersection, persisted
// random decoys survive it but not graph pruning, persisted graph-near
// decoys survive both, and a looser rate of more bandwidth leaves the
// adversary a higher precision after graph pruning than graph-near decoys.
func TestClaimNoise(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates a population")
	}
	pop, err := NewPopulation(PopulationConfig{Seed: 3, WalletsPerKind: 12, Blocks: 220, Kinds: []WalletKind{KindBloomwatch}})
	require.NoError(t, err)
	fresh := noiseOutcomeOf(t, pop, noiseVariant{kind: KindBloomwatch, noise: NoiseFreshRandom, count: 10})
	s, i := fresh.meanOf(getSingle), fresh.meanOf(getInter)
	require.True(t, s < 0.8 && i > 0.9, "fresh decoys: precision %.3g alone, %.3g after intersection: want < 0.8 then > 0.9", s, i)
	random := noiseOutcomeOf(t, pop, noiseVariant{kind: KindBloomwatch, noise: NoisePersistedRandom, count: 10})
	i, g := random.meanOf(getInter), random.meanOf(getGraph)
	require.True(t, i < 0.8 && g > 0.95, "persisted random decoys: precision %.3g after intersection, %.3g after graph: want < 0.8 then > 0.95", i, g)
	near := noiseOutcomeOf(t, pop, noiseVariant{kind: KindBloomwatch, noise: NoisePersistedNear, count: 10})
	loose := noiseOutcomeOf(t, pop, noiseVariant{kind: KindBloomwatch, opts: ClientOptions{FPRate: 3e-2}})
	nn, nd := near.perWallet(getGraph)
	ln, ld := loose.perWallet(getGraph)
	nr, lr := clusterPropRow("near", nn, nd, "wallets"), clusterPropRow("loose", ln, ld, "wallets")
	t.Logf("graph-near: bandwidth %.3g, precision %.3g %v; rate 0.03: bandwidth %.3g, precision %.3g %v",
		near.bandwidth(), nr.Measured, *nr.Interval, loose.bandwidth(), lr.Measured, *lr.Interval)
	require.True(t, loose.bandwidth() > near.bandwidth() && nr.Interval[1] < lr.Interval[0] && nr.Interval[1] < 0.9, "graph-near decoys (bandwidth %.3g, precision up to %.3g) do not beat the looser rate (bandwidth %.3g, precision from %.3g)", near.bandwidth(), nr.Interval[1], loose.bandwidth(), lr.Interval[0])
}

// TestClaimRequests: bloomwatch's re-fetch points at the block that made
// the wallet derive keys; an aligned window with a delayed reload lowers
// the precision of the blocks pointed at toward the filter's alone; a
// rounded birthday makes many wallets share their first request.
func TestClaimRequests(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates a population")
	}
	pop, err := NewPopulation(PopulationConfig{Seed: 4, WalletsPerKind: 30, Blocks: 240, Kinds: []WalletKind{KindBloomwatch}})
	require.NoError(t, err)
	run := func(rp RequestPolicy) requestOutcome {
		s, err := pop.Simulate(ClientOptions{FPRate: requestsLooseRate, Requests: rp})
		require.NoError(t, err)
		o, err := requestLeak(pop, pop.indexChain(), s)
		require.NoError(t, err)
		return o
	}
	exact := run(RequestPolicy{InFlight: filterpolicy.DefaultWindow})
	mitigated := run(RequestPolicy{InFlight: filterpolicy.DefaultWindow, RoundBirthday: requestsRound, RefetchWindow: requestsRound, ReloadDelay: requestsDelay})
	pe, pm, pf := ratio(exact.pointedWallet, exact.pointed), ratio(mitigated.pointedWallet, mitigated.pointed), ratio(exact.filterOwned, exact.filterOnly)
	t.Logf("precision: pointed exact %.3g, mitigated %.3g, filter alone %.3g; birthday sharing %.3g -> %.3g", pe, pm, pf, exact.sameBirthday, mitigated.sameBirthday)
	require.NotEqual(t, 0, exact.refetches, "%d of %d re-fetches point at the trigger block", exact.refetchHit, exact.refetches)
	require.Equal(t, exact.refetches, exact.refetchHit, "%d of %d re-fetches point at the trigger block", exact.refetchHit, exact.refetches)
	require.True(t, pe > 0.8 && pm < pe-0.2 && pf < pm, "precision of the pointed blocks: exact %.3g, mitigated %.3g, filter alone %.3g", pe, pm, pf)
	require.Equal(t, float64(0), exact.birthdayErr, "birthday: exact error %.3g, sharing %.3g -> %.3g", exact.birthdayErr, exact.sameBirthday, mitigated.sameBirthday)
	require.GreaterOrEqual(t, mitigated.sameBirthday, 5*exact.sameBirthday, "birthday: exact error %.3g, sharing %.3g -> %.3g", exact.birthdayErr, exact.sameBirthday, mitigated.sameBirthday)
}

// TestClaimTweakPolicy: at bloomwatch's default rate a wallet's filters
// under a tweak per peer are linked by their match sets' overlap alone,
// and the peers that link them intersect them to nothing, where one
// tweak leaves them one filter's cover; only when the chance overlap
// sqrt(|A| f^2) exceeds the shared keys does overlap fail to link.
func TestClaimTweakPolicy(t *testing.T) {
	if testing.Short() {
		t.Skip("scans a synthetic universe")
	}
	cfg := Config{Seed: 5, Workers: 2}
	def, err := tweakSetting(context.Background(), cfg, filterpolicy.DefaultFPRate, 10, 6, 6, 100_000)
	require.NoError(t, err)
	lo, _ := WilsonInterval(float64(def.sameLinked), float64(def.samePairs), Z95)
	require.GreaterOrEqual(t, lo, 0.9, "default rate: %d of %d own pairs linked (lower bound %.3g), %d wrong links", def.sameLinked, def.samePairs, lo, def.wrongLinked)
	require.Equal(t, 0, def.wrongLinked, "default rate: %d of %d own pairs linked (lower bound %.3g), %d wrong links", def.sameLinked, def.samePairs, lo, def.wrongLinked)
	require.Equal(t, uint64(0), def.perFP, "default rate, tweak per peer: %d false positives left (%.3g expected)", def.perFP, def.perExpected)
	require.LessOrEqual(t, def.perExpected, 1e-20, "default rate, tweak per peer: %d false positives left (%.3g expected)", def.perFP, def.perExpected)
	loose, err := tweakSetting(context.Background(), cfg, 0.1, 50, 6, 6, 100_000)
	require.NoError(t, err)
	require.GreaterOrEqual(t, loose.oneFP, uint64(1000), "rate 0.1: one tweak leaves %d false positives, tweak per peer %d: want one filter's cover vs the intersection's", loose.oneFP, loose.perFP)
	require.LessOrEqual(t, float64(loose.perFP), float64(loose.oneFP)/100, "rate 0.1: one tweak leaves %d false positives, tweak per peer %d: want one filter's cover vs the intersection's", loose.oneFP, loose.perFP)
	wide, err := tweakSetting(context.Background(), cfg, 0.3, 10, 6, 6, 100_000)
	require.NoError(t, err)
	x := math.Sqrt(wide.chance) / 10
	require.GreaterOrEqual(t, x, float64(1), "rate 0.3: chance overlap per key %.3g, %d of %d linked: want x > 1 and almost none linked", x, wide.sameLinked, wide.samePairs)
	require.LessOrEqual(t, ratio(wide.sameLinked, wide.samePairs), 0.05, "rate 0.3: chance overlap per key %.3g, %d of %d linked: want x > 1 and almost none linked", x, wide.sameLinked, wide.samePairs)
}

// TestClaimPeers: one tweak shows every colluding peer the same match
// set; a tweak per peer lets two colluding peers cut the false positives
// a hundredfold; sharding shows c of P peers c/P of the keys.
func TestClaimPeers(t *testing.T) {
	r, err := Run(context.Background(), "peers", Config{Seed: 6, Workers: 2, Universe: 300_000, Trials: 3, Peers: 4, Keys: 40})
	require.NoError(t, err)
	get := func(q string) Comparison { return rowByName(t, r, q) }
	one1, one4 := get("1 of 4 peers collude, "+policySame+": false positives per wallet"), get("4 of 4 peers collude, "+policySame+": false positives per wallet")
	per1, per2 := get("1 of 4 peers collude, "+policyPerPeer+": false positives per wallet"), get("2 of 4 peers collude, "+policyPerPeer+": false positives per wallet")
	require.Equal(t, one4.Measured, one1.Measured, "one tweak: %v false positives to 1 peer, %v to 4", one1.Measured, one4.Measured)
	require.GreaterOrEqual(t, one1.Measured, float64(10), "one tweak: %v false positives to 1 peer, %v to 4", one1.Measured, one4.Measured)
	require.LessOrEqual(t, per2.Measured*100, per1.Measured, "tweak per peer: %v false positives to 1 peer, %v to 2", per1.Measured, per2.Measured)
}

// TestPopulationTranscriptsAnalyze checks that a session's transcript,
// with its getdata records, goes through the analyzer, and that each
// session starts with a filterload and requests blocks.
func TestPopulationTranscriptsAnalyze(t *testing.T) {
	pop, err := NewPopulation(PopulationConfig{Seed: 7, WalletsPerKind: 2, Blocks: 80})
	require.NoError(t, err)
	sessions, err := pop.Simulate(ClientOptions{})
	require.NoError(t, err)
	kinds := map[WalletKind]bool{}
	for _, s := range sessions {
		kinds[s.Kind] = true
		require.GreaterOrEqual(t, len(s.Records), 2, "wallet %d session %d: records %d", s.Wallet, s.Index, len(s.Records))
		require.False(t, s.Records[0].Kind != "filterload", "wallet %d session %d: records %d", s.Wallet, s.Index, len(s.Records))
		rep, err := privacy.Analyze(context.Background(), privacy.Input{Records: s.Records, Universe: element.Stream(pop.OnChainCandidates()),
			Truth: walletTruth(pop, pop.Wallets[s.Wallet]), Workers: 2})
		require.NoError(t, err, "wallet %d session %d", s.Wallet, s.Index)
		require.False(t, rep.Members > 0 && rep.Curve(privacy.StageSingle).Points[0].TruePositives == 0, "wallet %d session %d: the filter matches none of the wallet's keys", s.Wallet, s.Index)
	}
	require.Len(t, kinds, len(Kinds), "kinds simulated: %v", kinds)
}

// TestClaimRappor: RAPPOR's two-sided responses make a wallet miss almost
// all its own elements at f = 0.5, p = 0.5, q = 0.75; the one-sided
// variant misses none, and memoized one-sided noise survives the
// intersection of reloads where noise drawn fresh per filter does not.
func TestClaimRappor(t *testing.T) {
	r, err := Run(context.Background(), "rappor", Config{Seed: 8, Workers: 2, Wallets: 10, Universe: 50_000, Filters: 3})
	require.NoError(t, err)
	miss := rowByName(t, r, "two-sided f=0.5 p=0.5 q=0.75: the wallet's own elements missed (false negatives)")
	one := rowByName(t, r, "one-sided f=1: the wallet's own elements missed")
	memo := rowByName(t, r, "one-sided f=1: false positives left after intersecting the 3 reloads, memoized noise (per wallet)")
	fresh := rowByName(t, r, "one-sided f=1: false positives left after intersecting the 3 reloads, noise fresh per filterload (per wallet)")
	require.GreaterOrEqual(t, miss.Measured, 0.95, "missed %v (two-sided), %v (one-sided); after intersection memoized %v, fresh %v", miss.Measured, one.Measured, *memo.Interval, *fresh.Interval)
	require.Equal(t, float64(0), one.Measured, "missed %v (two-sided), %v (one-sided); after intersection memoized %v, fresh %v", miss.Measured, one.Measured, *memo.Interval, *fresh.Interval)
	require.True(t, memo.Interval[0] > fresh.Interval[1], "missed %v (two-sided), %v (one-sided); after intersection memoized %v, fresh %v", miss.Measured, one.Measured, *memo.Interval, *fresh.Interval)
}

// TestClaimFrequency: on a crawl of filters that share popular scripts,
// under one shared tweak c[p]- removes candidates, raises the share of
// true (position, script) candidates and the recall of the claims in
// filters never aligned, at a precision near 1; a tweak per client or per
// session leaves the attack nothing to align, while the direct test
// finds every script under every policy.
func TestClaimFrequency(t *testing.T) {
	r, err := Run(context.Background(), "frequency", Config{Seed: 1})
	require.NoError(t, err)
	pre := "one shared tweak: "
	require.Greater(t, rowByName(t, r, pre+"of them removed by c[p]-").Measured, 0.0, "c[p]- removes candidates")
	plusTrue := rowByName(t, r, pre+"candidates in c[p]+ that are true (the script sets the position under an aligned filter's tweak)")
	candTrue := rowByName(t, r, pre+"candidates in c[p]+ minus c[p]- that are true")
	require.Greater(t, candTrue.Interval[0], plusTrue.Interval[1])
	rec := rowByName(t, r, pre+"claims with c[p]-: recall of the popular scripts those filters hold")
	plusRec := rowByName(t, r, pre+"claims with c[p]+ alone: recall")
	require.Greater(t, rec.Interval[0], 2*plusRec.Interval[1])
	require.Greater(t, rowByName(t, r, pre+"claims of popular scripts in never-aligned filters, with c[p]-: precision").Interval[0], 0.9)
	for _, pol := range []string{"a tweak per client, kept: ", "a fresh tweak per session: "} {
		require.Zero(t, rowByName(t, r, pol+"claims with c[p]-: recall of the popular scripts those filters hold").Measured, pol)
		require.Greater(t, rowByName(t, r, pol+"direct test: recall").Measured, 0.99, pol)
	}
}

// TestClaimBIP158: on a chain of mainnet-like density, with both update
// flags measured at the rates clients run (no interpolation), BIP158's
// block server is left a tenth of the BIP37 peer's precision or less at
// every wallet size, and UPDATE_ALL costs at least UPDATE_NONE's bytes.
func TestClaimBIP158(t *testing.T) {
	r, err := Run(context.Background(), "bip158", Config{Seed: 10, Wallets: 1, Blocks: 6})
	require.NoError(t, err)
	dense := false
	for _, p := range r.Params {
		if p.Name == "txs_per_block" {
			n, err := strconv.Atoi(p.Value)
			require.NoError(t, err)
			dense = n >= 2000 && n <= 3000
		}
	}
	require.True(t, dense, "a chain of 2,000-3,000 transactions a block")
	for _, row := range r.Rows {
		require.NotContains(t, row.Quantity, "interpolated")
	}
	for _, size := range bip158Sizes {
		pre := fmt.Sprintf("%d scripts: ", size)
		gcs := rowByName(t, r, pre+"BIP158: the block server's precision")
		for _, op := range bip37Operating {
			rp := fmt.Sprintf("%sBIP37 at %g (%s): ", pre, op.rate, op.who)
			none := rowByName(t, r, rp+"kB downloaded, BLOOM_UPDATE_NONE")
			all := rowByName(t, r, rp+"kB downloaded, BLOOM_UPDATE_ALL (reload at 10x the rate)")
			require.GreaterOrEqual(t, all.Measured, none.Measured, rp)
		}
		def := rowByName(t, r, fmt.Sprintf("%sBIP37 at %g (bloomwatch default): the peer's precision (the loaded filter, either flag)", pre, filterpolicy.DefaultFPRate))
		require.Less(t, 10*gcs.Measured, def.Measured, "%d scripts: BIP158 %v, BIP37 %v", size, gcs.Measured, def.Measured)
	}
}
