package experiments

import (
	"context"
	"fmt"
	"strconv"

	"github.com/bloomwatch/bloomwatch/privacy"
)

// The linking experiment (issue 20, item 2): how often the crawler's
// de-duplication by match-set overlap merges sessions of different
// wallets, measured on one population at target rates scaled up until
// wrong merges are common, beside Nick's formula (a candidate of neither
// wallet matching both filters) and the term it leaves out (a wallet's own
// key matching the other wallet's filter), and the same for a rule that
// merges only an overlap improbable by chance (LinkSignificant).
const (
	linkingWallets    = 40
	linkingBlocks     = 200
	linkingBackground = 200_000
)

// linkingScales multiply every kind's target rate.
var linkingScales = []float64{1, 10, 30, 100}

// linkCount is one rule's outcome at one scale.
type linkCount struct {
	wrong, sameLinked, samePairs int
}

// runLinking measures the wrong merges at each rate scale.
func runLinking(ctx context.Context, cfg Config) (*Result, error) {
	pc := populationConfig(cfg)
	pc.WalletsPerKind = orDefault(cfg.Wallets, linkingWallets)
	pc.Blocks = orDefault(cfg.Blocks, linkingBlocks)
	bg := orDefault(cfg.Universe, linkingBackground)
	pop, err := NewPopulation(pc)
	if err != nil {
		return nil, err
	}
	out := &Result{
		Name:  "linking",
		Title: "the crawler's wrong merges by match-set overlap: Nick's formula, the term it leaves out, measured",
		Params: []Param{
			param("wallets", len(pop.Wallets)), param("blocks", len(pop.Chain)), param("background_candidates", bg),
			param("rate_scales", fmt.Sprint(linkingScales)), param("seed", cfg.Seed),
		},
	}
	var xs, nickY, ownY, bothY, measY, measLo, measHi, sigY, sameAny, sameSig []float64
	for i, scale := range linkingScales {
		stage := "scale " + strconv.FormatFloat(scale, 'g', -1, 64)
		sessions, err := pop.SimulateProgress(ClientOptions{RateScale: scale}, func(_ string, d, n int) { cfg.progress(stage+" clients", d, n) })
		if err != nil {
			return nil, err
		}
		view, err := CrawlProgress(ctx, pop, sessions, bg, cfg.Seed+uint64(i), cfg.Workers, func(_ string, d, n int) { cfg.progress(stage+" crawl", d, n) })
		if err != nil {
			return nil, err
		}
		overlaps := view.Overlaps(sessions)
		var nick, own, both float64
		for a := range sessions {
			for b := a + 1; b < len(sessions); b++ {
				if sessions[a].Wallet != sessions[b].Wallet {
					e := view.Pair(a, b)
					nick, own, both = nick+e.Nick, own+e.Own, both+e.Both
				}
			}
		}
		anyRule := countLinks(view, sessions, overlaps, LinkAnyOverlap)
		sigRule := countLinks(view, sessions, overlaps, LinkSignificant)
		lo, hi := PoissonInterval(uint64(anyRule.wrong), Z95)
		pre := fmt.Sprintf("rates x%g: ", scale)
		var rates string
		for _, k := range Kinds {
			var sum float64
			var n int
			for j, s := range sessions {
				if s.Kind == k {
					sum += view.Filters[j].CurrentFPRate()
					n++
				}
			}
			rates += fmt.Sprintf("%s %.3g; ", k, sum/float64(max(n, 1)))
		}
		out.Rows = append(out.Rows,
			compare(pre+"wrong merges, any overlap (every term)", float64(anyRule.wrong), both, nil, srcFormula).
				withInterval(lo, hi).withNote("mean first-filter rates: "+rates),
			compare(pre+"wrong merges, any overlap, Nick's formula alone", float64(anyRule.wrong), nick, nil, srcNick+"'s formula").
				withInterval(lo, hi).withNote(fmt.Sprintf("the own-key term he leaves out expects %.4g", own)),
			measuredOnly(pre+"wrong merges, significant overlap (P < 1e-6 by chance)", float64(sigRule.wrong), nil, "").
				withInterval(PoissonInterval(uint64(sigRule.wrong), Z95)),
			linkShareRow(pre+"sessions of one wallet linked, any overlap", anyRule),
			linkShareRow(pre+"sessions of one wallet linked, significant overlap", sigRule),
		)
		xs = append(xs, scale)
		nickY, ownY, bothY = append(nickY, nick), append(ownY, own), append(bothY, both)
		measY, measLo, measHi = append(measY, float64(anyRule.wrong)), append(measLo, lo), append(measHi, hi)
		sigY = append(sigY, float64(sigRule.wrong))
		sameAny = append(sameAny, ratio(anyRule.sameLinked, anyRule.samePairs))
		sameSig = append(sameSig, ratio(sigRule.sameLinked, sigRule.samePairs))
	}
	out.Charts = []privacy.Chart{
		{
			Title: "wrong merges among pairs of sessions of different wallets (measured here)", XLabel: "target rates scaled by (1: the kinds' defaults)",
			YLabel: "pairs merged", LogY: true, LogX: true,
			Series: []privacy.Series{
				{Name: "Nick's formula (neither wallet's key)", X: xs, Y: nickY},
				{Name: "left-out term (a wallet's own key)", X: xs, Y: ownY},
				{Name: "every term", X: xs, Y: bothY},
				{Name: "measured, any overlap (95 % Poisson interval)", X: xs, Y: measY, YLo: measLo, YHi: measHi, Points: true},
				{Name: "measured, significant overlap only", X: xs, Y: sigY, Points: true},
			},
		},
		{
			Title: "sessions of one wallet the crawler links (measured here)", XLabel: "target rates scaled by", YLabel: "share of pairs",
			LogX: true,
			Series: []privacy.Series{
				{Name: "any overlap", X: xs, Y: sameAny, Points: true},
				{Name: "significant overlap", X: xs, Y: sameSig, Points: true},
			},
		},
	}
	return out, nil
}

// countLinks links the sessions by rule and counts the pairs of sessions
// merged into one group: of different wallets (wrong) and of one wallet.
func countLinks(v *CrawlerView, sessions []*Session, overlaps []Overlap, rule LinkRule) linkCount {
	groups := v.Link(sessions, overlaps, rule)
	var c linkCount
	for a := range sessions {
		for b := a + 1; b < len(sessions); b++ {
			same := groups[a] == groups[b]
			if sessions[a].Wallet == sessions[b].Wallet {
				c.samePairs++
				if same {
					c.sameLinked++
				}
			} else if same && directlyOverlap(overlaps, a, b) {
				c.wrong++
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

// linkShareRow is the share of one wallet's session pairs linked.
func linkShareRow(q string, c linkCount) Comparison {
	lo, hi := WilsonInterval(c.sameLinked, c.samePairs, Z95)
	return measuredOnly(q, ratio(c.sameLinked, c.samePairs), nil, "").withInterval(lo, hi).
		withNote(fmt.Sprintf("%d of %d pairs", c.sameLinked, c.samePairs))
}
