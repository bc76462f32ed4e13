package experiments

import (
	"context"
	"fmt"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/scan"
)

// The mitigations experiment: one wallet's life on a synthetic chain
// (payments in, co-spends with change, restarts, a new peer), played by a
// bitcoinj-like client and by clients that apply one mitigation each, and
// all of them. Each transcript goes through the full analyzer (both-forms
// test, intersection across filters, transaction-graph pruning) against
// the chain's own addresses plus a synthetic background universe. The
// life is played mitigationTrials times, each on a chain of its own: the
// chance false positives are Poisson counts given the filters (tested
// against the joint model), the decoys a deterministic count apart, and
// precision, recall and entropy means over the trials.
const (
	mitigationTrials = 5

	mitigationBlocks       = 600
	mitigationTxsPerBlock  = 20
	mitigationUsers        = 2000
	mitigationWalletKeys   = 80
	mitigationReceiveEvery = 15
	mitigationSpendEvery   = 45
	mitigationUniverse     = 4_000_000
	mitigationInterval     = 60
	mitigationRestartEvery = 200
	mitigationPeerAt       = 300
	mitigationPeers        = 2
	// mitigationPersistentHeadroom is the spare capacity of the
	// persistent client: enough for the whole scenario without a resize.
	mitigationPersistentHeadroom = 400
	// mitigationDecoysPerKey is how many near decoys the decoy client
	// inserts per wallet key it will use.
	mitigationDecoysPerKey = 2
)

// Published clustering figures for legacy wallets (bitcoinj before 0.12:
// no change keys, a negligible rate), multi-input heuristic over the
// match set (Nick's thesis p. 20).
const (
	litClusterPrecision = 0.9079
	litClusterRecall    = 0.7976
)

// baselineName names the unmitigated policy.
const baselineName = "baseline (bitcoinj-like)"

// mitigationPolicies returns the baseline and the mitigated policies.
func mitigationPolicies(decoys []Key) []Policy {
	base := Policy{
		Name: baselineName, FPRate: BitcoinjFPRate, BothForms: true,
		Headroom: BitcoinjHeadroom, FilterAdd: true, Flags: bip37.UpdateP2PubKeyOnly,
	}
	oneForm := base
	oneForm.Name, oneForm.BothForms = "one form per key", false
	persistent := base
	persistent.Name, persistent.PersistentTweak, persistent.Headroom = "persistent tweak and capacity", true, mitigationPersistentHeadroom
	noAdd := base
	noAdd.Name, noAdd.FilterAdd = "no filteradd", false
	withDecoys := base
	withDecoys.Name, withDecoys.Decoys = "decoys near the wallet", decoys
	all := persistent
	all.Name, all.BothForms, all.FilterAdd, all.Decoys = "all mitigations", false, false, decoys
	return []Policy{base, oneForm, persistent, noAdd, withDecoys, all}
}

// mitigationScenario derives the wallet's life from the chain. The first
// filter holds the keys first paid in the first interval (a wallet hands
// out addresses before it is paid to them); at the end of each interval
// the client adds the keys of the next one. Restarts and a new peer come
// when their heights are crossed.
func mitigationScenario(seed uint64, sc *SynthChain, blocks int) Scenario {
	s := Scenario{Seed: seed, Peers: mitigationPeers}
	usedBy := func(h int32) int {
		n := 0
		for _, fu := range sc.FirstUse {
			if fu <= h {
				n++
			}
		}
		return n
	}
	s.InitialKeys = max(usedBy(mitigationInterval), 1)
	used := s.InitialKeys
	crossed := func(at, x int32) bool { return at >= x && at-mitigationInterval < x }
	for at := int32(mitigationInterval); at < int32(blocks); at += mitigationInterval {
		if n := usedBy(at+mitigationInterval) - used; n > 0 {
			s.Steps = append(s.Steps, Step{Kind: StepNewKeys, Height: at, Count: n})
			used += n
		}
		if crossed(at, mitigationRestartEvery*(at/mitigationRestartEvery)) && at >= mitigationRestartEvery {
			s.Steps = append(s.Steps, Step{Kind: StepRestart, Height: at})
		}
		if crossed(at, mitigationPeerAt) {
			s.Steps = append(s.Steps, Step{Kind: StepNewPeer, Height: at})
		}
	}
	return s
}

// mitigationTally is one policy's figures over the trials.
type mitigationTally struct {
	chanceSingle, chanceInter       uint64
	expectSingle, expectInter       float64
	decoys, records, loads, reveals []float64
	fpAll, prec, rec, entropy, ones []float64
}

// trialSeed derives trial t's seed from the run's seed.
func trialSeed(seed uint64, t int) uint64 {
	if t == 0 {
		return seed
	}
	return seed ^ (uint64(t) * 0x9e3779b97f4a7c15)
}

// runMitigations analyzes each policy's transcripts.
func runMitigations(ctx context.Context, cfg Config) (*Result, error) {
	blocks := orDefault(cfg.Blocks, mitigationBlocks)
	u := orDefault(cfg.Universe, mitigationUniverse)
	trials := orDefault(cfg.Trials, mitigationTrials)
	out := &Result{
		Name:  "mitigations",
		Title: "mitigations: the adversary's set after every event, per client policy",
		Params: []Param{
			param("blocks", blocks), param("txs_per_block", mitigationTxsPerBlock), param("trials", trials),
			param("background_candidates", u),
		},
	}
	singleChart := privacy.Chart{Title: "false positives of the latest filter alone, after each event (first trial)", XLabel: "height of the event",
		YLabel: "false positives", LogY: true}
	fpChart := privacy.Chart{Title: "false-positive anonymity set after each event, all attacks (first trial)", XLabel: "height of the event",
		YLabel: "false positives", LogY: true}
	precChart := privacy.Chart{Title: "adversary precision after each event, all attacks (first trial)", XLabel: "height of the event", YLabel: "precision"}
	tallies := map[string]*mitigationTally{}
	var names []string
	for t := range trials {
		cfg.progress("trials", t, trials)
		seed := trialSeed(cfg.Seed, t)
		sc, err := NewSynthChain(ChainConfig{
			Seed: seed, Blocks: blocks, TxsPerBlock: mitigationTxsPerBlock, Users: mitigationUsers,
			WalletKeys: mitigationWalletKeys, WalletReceiveEvery: mitigationReceiveEvery,
			WalletSpendEvery: mitigationSpendEvery,
		})
		if err != nil {
			return nil, err
		}
		onChain, err := element.ChainUniverse(ctx, sc.Chain, -1)
		if err != nil {
			return nil, err
		}
		universe := element.NewConcat(onChain, scan.Synthetic{Seed: seed, Count: u, PubKeys: true})
		scenario := mitigationScenario(seed, sc, blocks)
		truth := sc.WalletCandidates(sc.UsedKeys)
		decoys := sc.NearDecoys(mitigationDecoysPerKey * sc.UsedKeys)
		for _, p := range mitigationPolicies(decoys) {
			records, err := Simulate(p, scenario, sc.Wallet)
			if err != nil {
				return nil, err
			}
			rep, err := privacy.Analyze(ctx, privacy.Input{
				Records: records, Universe: element.Stream(universe), Truth: truth, Chain: sc.Chain,
				Attacks: privacy.Attacks{BothForms: true, Intersection: true, Graph: true}, Workers: cfg.Workers,
			})
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p.Name, err)
			}
			tl := tallies[p.Name]
			if tl == nil {
				tl = &mitigationTally{}
				tallies[p.Name] = tl
				names = append(names, p.Name)
			}
			single, inter, graph := rep.Curve(privacy.StageSingle), rep.Curve(privacy.StageIntersection), rep.Curve(privacy.StageGraph)
			ls, li, lg := single.Points[len(single.Points)-1], inter.Points[len(inter.Points)-1], graph.Points[len(graph.Points)-1]
			d := uint64(len(p.Decoys))
			// Every decoy is on chain and in every filter: it matches
			// for certain and is counted apart from the chance matches.
			tl.chanceSingle += ls.FalsePositives - min(d, ls.FalsePositives)
			tl.chanceInter += li.FalsePositives - min(d, li.FalsePositives)
			tl.expectSingle += ls.ExpectedFP
			tl.expectInter += li.ExpectedFP
			tl.decoys = append(tl.decoys, float64(d))
			tl.records = append(tl.records, float64(len(records)))
			tl.loads = append(tl.loads, float64(len(rep.Filters)))
			tl.reveals = append(tl.reveals, float64(li.Revealed))
			tl.fpAll = append(tl.fpAll, float64(lg.FalsePositives))
			tl.prec, tl.rec, tl.entropy = append(tl.prec, lg.Precision), append(tl.rec, lg.Recall), append(tl.entropy, lg.Entropy)
			tl.ones = append(tl.ones, 1)
			if t > 0 {
				continue
			}
			var x, sfp, fp, prec []float64
			for i, pt := range graph.Points {
				x = append(x, float64(pt.Height))
				sfp = append(sfp, float64(single.Points[i].FalsePositives))
				fp = append(fp, float64(pt.FalsePositives))
				prec = append(prec, pt.Precision)
			}
			singleChart.Series = append(singleChart.Series, privacy.Series{Name: p.Name, X: x, Y: sfp})
			fpChart.Series = append(fpChart.Series, privacy.Series{Name: p.Name, X: x, Y: fp})
			precChart.Series = append(precChart.Series, privacy.Series{Name: p.Name, X: x, Y: prec})
		}
	}
	cfg.progress("trials", trials, trials)
	const unit = "wallets (a chain each)"
	tf := float64(trials)
	for _, name := range names {
		tl := tallies[name]
		pre := name + ": "
		prec := clusterPropRow(pre+"precision, all attacks (mean over wallets)", tl.prec, tl.ones, unit)
		rec := clusterPropRow(pre+"recall, all attacks (mean over wallets)", tl.rec, tl.ones, unit)
		if name == baselineName {
			src := srcNickPage("p. 20") + ": legacy wallets (bitcoinj < 0.12), multi-input clustering, 37,585 real filters"
			prec = prec.withPublished(litClusterPrecision, src).formOnly()
			rec = rec.withPublished(litClusterRecall, src).formOnly()
		}
		out.Rows = append(out.Rows,
			poissonRow(pre+"chance false positives, latest filter alone (per wallet)", tl.chanceSingle, tf).
				withFormula(tl.expectSingle/tf).withSource("joint model of the filters").test(altFactor(2)).
				withNote("decoys, which match for certain, counted apart"),
			poissonRow(pre+"chance false positives, intersection of every filter (per wallet)", tl.chanceInter, tf).
				withFormula(tl.expectInter/tf).withSource("joint model of the filters").test(altFactor(2)),
			deterministicRow(pre+"decoys in every filter (per wallet)", sumOf(tl.decoys)/tf).
				withNote(fmt.Sprintf("%.3g records, %.3g filterloads, %.3g elements revealed by filteradd per wallet",
					sumOf(tl.records)/tf, sumOf(tl.loads)/tf, sumOf(tl.reveals)/tf)),
			clusterMeanRow(pre+"false positives, all attacks (per wallet)", tl.fpAll, tl.ones, true, unit).
				withNote("graph pruning has no closed form"),
			prec, rec,
			clusterMeanRow(pre+"entropy bits, all attacks (mean over wallets)", tl.entropy, tl.ones, false, unit),
		)
	}
	out.Charts = []privacy.Chart{singleChart, fpChart, precChart}
	return out, nil
}
