package experiments

import (
	"context"
	"fmt"

	"github.com/bloomwatch/bloomwatch/privacy"
)

// The linking experiment: how often the crawler's
// de-duplication by match-set overlap merges sessions of different
// wallets, measured on one population at target rates scaled up until
// wrong merges are common, beside Nick's formula (a candidate of neither
// wallet matching both filters) and the term it leaves out (a wallet's own
// key matching the other wallet's filter), and the same for a rule that
// merges only an overlap improbable by chance (LinkSignificant).
//
// Pairs of sessions are not independent (one background candidate that
// matches many filters merges many pairs at once), so a Poisson interval
// on the pair count is too narrow. The experiment runs linkingReplicates
// populations (a seed each) and takes the interval over them: a bootstrap
// over replicates, widened to the Poisson interval of the pooled count.
const (
	linkingWallets    = 40
	linkingBlocks     = 200
	linkingBackground = 200_000
	linkingReplicates = 5
)

// linkingScales multiply every kind's target rate.
var linkingScales = []float64{1, 10, 30, 100}

// linkCount is one rule's outcome at one scale.
type linkCount struct {
	wrong, sameLinked, samePairs int
}

// linkTally is one scale's figures over the replicates.
type linkTally struct {
	anyWrong, sigWrong []float64
	nick, own, both    float64
	sameAny, pairsAny  []float64
	sameSig            []float64
	ones               []float64
	rates              map[WalletKind][]float64
}

// runLinking measures the wrong merges at each rate scale.
func runLinking(ctx context.Context, cfg Config) (*Result, error) {
	reps := orDefault(cfg.Trials, linkingReplicates)
	bg := orDefault(cfg.Universe, linkingBackground)
	tallies := make([]linkTally, len(linkingScales))
	var wallets, blocks int
	for rep := range reps {
		pc := populationConfig(cfg)
		pc.Seed = trialSeed(cfg.Seed, rep)
		pc.WalletsPerKind = orDefault(cfg.Wallets, linkingWallets)
		pc.Blocks = orDefault(cfg.Blocks, linkingBlocks)
		pop, err := NewPopulation(pc)
		if err != nil {
			return nil, err
		}
		wallets, blocks = len(pop.Wallets), len(pop.Chain)
		for i, scale := range linkingScales {
			stage := fmt.Sprintf("replicate %d scale %g", rep+1, scale)
			sessions, err := pop.SimulateProgress(ClientOptions{RateScale: scale}, func(_ string, d, n int) { cfg.progress(stage+" clients", d, n) })
			if err != nil {
				return nil, err
			}
			view, err := CrawlProgress(ctx, pop, sessions, bg, pc.Seed+uint64(i), cfg.Workers, func(_ string, d, n int) { cfg.progress(stage+" crawl", d, n) })
			if err != nil {
				return nil, err
			}
			overlaps := view.Overlaps(sessions)
			tl := &tallies[i]
			for a := range sessions {
				for b := a + 1; b < len(sessions); b++ {
					if sessions[a].Wallet != sessions[b].Wallet {
						e := view.Pair(a, b)
						tl.nick, tl.own, tl.both = tl.nick+e.Nick, tl.own+e.Own, tl.both+e.Both
					}
				}
			}
			anyRule := countLinks(view, sessions, overlaps, LinkAnyOverlap)
			sigRule := countLinks(view, sessions, overlaps, LinkSignificant)
			tl.anyWrong = append(tl.anyWrong, float64(anyRule.wrong))
			tl.sigWrong = append(tl.sigWrong, float64(sigRule.wrong))
			tl.sameAny = append(tl.sameAny, float64(anyRule.sameLinked))
			tl.sameSig = append(tl.sameSig, float64(sigRule.sameLinked))
			tl.pairsAny = append(tl.pairsAny, float64(anyRule.samePairs))
			tl.ones = append(tl.ones, 1)
			if tl.rates == nil {
				tl.rates = map[WalletKind][]float64{}
			}
			for j, s := range sessions {
				tl.rates[s.Kind] = append(tl.rates[s.Kind], view.Filters[j].CurrentFPRate())
			}
		}
	}
	out := &Result{
		Name:  "linking",
		Title: "the crawler's wrong merges by match-set overlap: Nick's formula, the term it leaves out, measured",
		Params: []Param{
			param("wallets", wallets), param("blocks", blocks), param("background_candidates", bg),
			param("rate_scales", fmt.Sprint(linkingScales)), param("replicates", reps),
		},
	}
	const unit = "replicates (a population each)"
	var xs, nickY, ownY, bothY, measY, measLo, measHi, sigY, sigLo, sigHi, sameAny, sameAnyLo, sameAnyHi, sameSig, sameSigLo, sameSigHi []float64
	rf := float64(reps)
	for i, scale := range linkingScales {
		tl := tallies[i]
		pre := fmt.Sprintf("rates x%g: ", scale)
		var rates string
		for _, k := range Kinds {
			if v := tl.rates[k]; len(v) > 0 {
				rates += fmt.Sprintf("%s %.3g; ", k, sumOf(v)/float64(len(v)))
			}
		}
		anyRow := clusterMeanRow(pre+"wrong merges per population, any overlap", tl.anyWrong, tl.ones, true, unit).
			withFormula(tl.both / rf).withSource("expectation, every term").test(altFactor(1.5)).
			withNote(fmt.Sprintf("Nick's term alone expects %.4g, the own-key term he leaves out %.4g; mean first-filter rates: %s", tl.nick/rf, tl.own/rf, rates))
		nickRow := clusterMeanRow(pre+"wrong merges per population, any overlap, against Nick's term alone", tl.anyWrong, tl.ones, true, unit).
			withFormula(tl.nick / rf).withSource(srcNickPage("p. 15") + ": his formula, computed here").test(altFactor(1.5))
		sigRow := clusterMeanRow(pre+"wrong merges per population, significant overlap (P < 1e-6 by chance)", tl.sigWrong, tl.ones, true, unit).
			withFormula(0).withNote("no merge of different wallets is expected above the 1e-6 level times the pairs")
		sameA := clusterPropRow(pre+"sessions of one wallet linked, any overlap", tl.sameAny, tl.pairsAny, unit)
		sameS := clusterPropRow(pre+"sessions of one wallet linked, significant overlap", tl.sameSig, tl.pairsAny, unit)
		out.Rows = append(out.Rows, anyRow, nickRow, sigRow, sameA, sameS)
		xs = append(xs, scale)
		nickY, ownY, bothY = append(nickY, tl.nick/rf), append(ownY, tl.own/rf), append(bothY, tl.both/rf)
		measY, measLo, measHi = append(measY, anyRow.Measured), append(measLo, anyRow.Interval[0]), append(measHi, anyRow.Interval[1])
		sigY, sigLo, sigHi = append(sigY, sigRow.Measured), append(sigLo, sigRow.Interval[0]), append(sigHi, sigRow.Interval[1])
		sameAny, sameAnyLo, sameAnyHi = append(sameAny, sameA.Measured), append(sameAnyLo, sameA.Interval[0]), append(sameAnyHi, sameA.Interval[1])
		sameSig, sameSigLo, sameSigHi = append(sameSig, sameS.Measured), append(sameSigLo, sameS.Interval[0]), append(sameSigHi, sameS.Interval[1])
	}
	out.Charts = []privacy.Chart{
		{
			Title: "wrong merges among pairs of sessions of different wallets (measured here)", XLabel: "target rates scaled by (1: the kinds' defaults)",
			YLabel: "pairs merged per population", LogY: true, LogX: true,
			Notes: []string{fmt.Sprintf("%d populations of %d wallets; intervals: bootstrap over populations and Poisson", reps, wallets)},
			Series: []privacy.Series{
				{Name: "Nick's formula (neither wallet's key)", X: xs, Y: nickY},
				{Name: "left-out term (a wallet's own key)", X: xs, Y: ownY},
				{Name: "every term", X: xs, Y: bothY, Group: "any"},
				{Name: "measured, any overlap", X: xs, Y: measY, YLo: measLo, YHi: measHi, Points: true, Group: "any"},
				{Name: "measured, significant overlap only (drawn 8 % to the right)", X: scaled(xs, 1.08), Y: sigY, YLo: sigLo, YHi: sigHi, Points: true},
			},
		},
		{
			Title: "sessions of one wallet the crawler links (measured here)", XLabel: "target rates scaled by", YLabel: "share of pairs",
			LogX: true,
			Series: []privacy.Series{
				{Name: "any overlap", X: xs, Y: sameAny, YLo: sameAnyLo, YHi: sameAnyHi, Points: true},
				{Name: "significant overlap", X: xs, Y: sameSig, YLo: sameSigLo, YHi: sameSigHi, Points: true},
			},
		},
	}
	return out, nil
}

// scaled returns v times f, to set two series' markers apart on a log
// axis.
func scaled(v []float64, f float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = x * f
	}
	return out
}

// countLinks links the sessions by rule and counts the pairs of sessions
// merged into one group: of different wallets (wrong) and of one wallet.
func countLinks(v *CrawlerView, sessions []*Session, overlaps []Overlap, rule LinkRule) linkCount {
	wallets := make([]int, len(sessions))
	for j, s := range sessions {
		wallets[j] = s.Wallet
	}
	c := CountLinks(v.Link(sessions, overlaps, rule), wallets, overlaps)
	return linkCount{wrong: c.Wrong, sameLinked: c.SameLinked, samePairs: c.SamePairs}
}

// LinkCounts is what a linking did to the pairs of sessions, scored
// against their wallets.
type LinkCounts struct {
	// Wrong counts the pairs of sessions of different wallets that the
	// linking put in one group and whose match sets overlap (the wrong
	// merges); SameLinked the pairs of sessions of one wallet it put in
	// one group, of SamePairs such pairs.
	Wrong, SameLinked, SamePairs int
}

// CountLinks scores a linking: groups[j] is session j's group (Link,
// LinkGroups), wallets[j] its wallet, overlaps every overlapping pair
// ordered by (I, J).
func CountLinks(groups, wallets []int, overlaps []Overlap) LinkCounts {
	var c LinkCounts
	for a := range groups {
		for b := a + 1; b < len(groups); b++ {
			same := groups[a] == groups[b]
			if wallets[a] == wallets[b] {
				c.SamePairs++
				if same {
					c.SameLinked++
				}
			} else if same && directlyOverlap(overlaps, a, b) {
				c.Wrong++
			}
		}
	}
	return c
}

// directlyOverlap reports whether sessions a < b overlap.
func directlyOverlap(overlaps []Overlap, a, b int) bool {
	lo, hi := 0, len(overlaps)
	for lo < hi {
		m := (lo + hi) / 2
		o := overlaps[m]
		if o.I < a || (o.I == a && o.J < b) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo < len(overlaps) && overlaps[lo].I == a && overlaps[lo].J == b
}
