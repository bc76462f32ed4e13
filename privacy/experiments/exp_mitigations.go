package experiments

import (
	"context"
	"fmt"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy"
)

// The mitigations experiment: one wallet's life on a synthetic chain
// (payments in, co-spends with change, restarts, a new peer), played by a
// bitcoinj-like client and by clients that apply one mitigation each, and
// all of them. Each transcript goes through the full analyzer (both-forms
// test, intersection across filters, transaction-graph pruning) against
// the chain's own addresses plus a synthetic background universe.
const (
	mitigationBlocks       = 600
	mitigationTxsPerBlock  = 20
	mitigationUsers        = 2000
	mitigationWalletKeys   = 80
	mitigationReceiveEvery = 15
	mitigationSpendEvery   = 45
	mitigationUniverse     = 10_000_000
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

// Published clustering figures for legacy wallets (multi-input heuristic
// over the match set).
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

// runMitigations analyzes each policy's transcript.
func runMitigations(ctx context.Context, cfg Config) (*Result, error) {
	blocks := orDefault(cfg.Blocks, mitigationBlocks)
	u := orDefault(cfg.Universe, mitigationUniverse)
	sc, err := NewSynthChain(ChainConfig{
		Seed: cfg.Seed, Blocks: blocks, TxsPerBlock: mitigationTxsPerBlock, Users: mitigationUsers,
		WalletKeys: mitigationWalletKeys, WalletReceiveEvery: mitigationReceiveEvery,
		WalletSpendEvery: mitigationSpendEvery,
	})
	if err != nil {
		return nil, err
	}
	onChain, err := privacy.ChainUniverse(ctx, sc.Chain, -1)
	if err != nil {
		return nil, err
	}
	universe := privacy.NewConcat(onChain, privacy.Synthetic{Seed: cfg.Seed, Count: u, PubKeys: true})
	scenario := mitigationScenario(cfg.Seed, sc, blocks)
	truth := sc.WalletCandidates(sc.UsedKeys)
	out := &Result{
		Name:  "mitigations",
		Title: "mitigations: the adversary's set after every event, per client policy",
		Params: []Param{
			param("blocks", blocks), param("txs_per_block", mitigationTxsPerBlock),
			param("wallet_keys_used", sc.UsedKeys), param("on_chain_candidates", onChain.Len()),
			param("background_candidates", u), param("steps", len(scenario.Steps)), param("seed", cfg.Seed),
		},
	}
	singleChart := privacy.Chart{Title: "false positives of the latest filter alone, after each event", XLabel: "height of the event",
		YLabel: "false positives", LogY: true}
	fpChart := privacy.Chart{Title: "false-positive anonymity set after each event (all attacks)", XLabel: "height of the event",
		YLabel: "false positives", LogY: true}
	precChart := privacy.Chart{Title: "adversary precision after each event (all attacks)", XLabel: "height of the event", YLabel: "precision"}
	decoys := sc.NearDecoys(mitigationDecoysPerKey * sc.UsedKeys)
	for _, p := range mitigationPolicies(decoys) {
		records, err := Simulate(p, scenario, sc.Wallet)
		if err != nil {
			return nil, err
		}
		rep, err := privacy.Analyze(ctx, privacy.Input{
			Records: records, Universe: privacy.Stream(universe), Truth: truth, Chain: sc.Chain,
			Attacks: privacy.Attacks{BothForms: true, Intersection: true, Graph: true}, Workers: cfg.Workers,
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.Name, err)
		}
		inter, graph := rep.Curve(privacy.StageIntersection), rep.Curve(privacy.StageGraph)
		li, lg := inter.Points[len(inter.Points)-1], graph.Points[len(graph.Points)-1]
		precLit, recLit, clustering := (*float64)(nil), (*float64)(nil), ""
		if p.Name == baselineName {
			precLit, recLit = literature(litClusterPrecision), literature(litClusterRecall)
			clustering = srcNick + " (legacy wallets, multi-input clustering)"
		}
		single := rep.Curve(privacy.StageSingle)
		ls := single.Points[len(single.Points)-1]
		out.Rows = append(out.Rows,
			compare(p.Name+": false positives, latest filter alone", float64(ls.FalsePositives), ls.ExpectedFP+float64(len(p.Decoys)), nil, srcFormula).
				withInterval(PoissonInterval(ls.FalsePositives, Z95)),
			compare(p.Name+": false positives, intersection", float64(li.FalsePositives), li.ExpectedFP+float64(len(p.Decoys)), nil, srcFormula).
				withInterval(PoissonInterval(li.FalsePositives, Z95)).
				withNote(fmt.Sprintf("%d records, %d filterloads, %d elements revealed by filteradd; formula counts the %d decoys as certain",
					len(records), len(rep.Filters), li.Revealed, len(p.Decoys))),
			measuredOnly(p.Name+": false positives, all attacks", float64(lg.FalsePositives), nil, "").
				withNote("graph pruning has no closed form"),
			formOnlyIf(measuredOnly(p.Name+": precision, all attacks", lg.Precision, precLit, clustering)),
			formOnlyIf(measuredOnly(p.Name+": recall, all attacks", lg.Recall, recLit, clustering)),
			measuredOnly(p.Name+": entropy bits, all attacks", lg.Entropy, nil, ""),
		)
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
	out.Charts = []privacy.Chart{singleChart, fpChart, precChart}
	return out, nil
}
