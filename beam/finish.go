package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/experiments"
)

// The crawl's end: the sessions linked into wallets by the overlap of
// their match sets under both of the population experiment's rules
// (experiments.LinkGroups with experiments.SignificantOverlap for the
// second), and the summary. It runs on one worker, from what the
// shuffles produced: each filter's match-set size and every overlapping
// pair of sessions with its shared candidates.

// linkLine is one session's line of linking.jsonl.
type linkLine struct {
	Session int    `json:"session"`
	Name    string `json:"name"`
	Wallet  int    `json:"wallet"`
	// Matches is the size of its match set; AnyGroup and SigGroup its
	// group (the smallest session index in it) by any overlap and by
	// significant overlap.
	Matches  int `json:"matches"`
	AnyGroup int `json:"group_any_overlap"`
	SigGroup int `json:"group_significant_overlap"`
}

// overlapLine is one pair's line of overlaps.jsonl.
type overlapLine struct {
	I           int  `json:"i"`
	J           int  `json:"j"`
	Common      int  `json:"common"`
	Significant bool `json:"significant"`
}

// ruleSummary is what one linking rule made of the sessions.
type ruleSummary struct {
	Rule string `json:"rule"`
	// Groups is the number of wallets the crawler believes in.
	Groups int `json:"groups"`
	// Scored against the wallets the transcripts' names tell, when they
	// do (experiments.CountLinks): Wrong merges, and pairs of sessions of
	// one wallet linked.
	Wrong      *int `json:"wrong_merges,omitempty"`
	SameLinked *int `json:"same_wallet_pairs_linked,omitempty"`
	SamePairs  *int `json:"same_wallet_pairs,omitempty"`
}

// kindSummary is one wallet kind's filters and match sets.
type kindSummary struct {
	Kind        string  `json:"kind"`
	Sessions    int     `json:"sessions"`
	MeanBytes   float64 `json:"mean_filter_bytes"`
	MeanRate    float64 `json:"mean_fp_rate"`
	MeanMatches float64 `json:"mean_match_set"`
}

// summary is the crawl's summary.json.
type summary struct {
	Sessions   int    `json:"sessions"`
	Wallets    int    `json:"wallets,omitempty"`
	Candidates uint64 `json:"candidates"`
	OneForm    uint64 `json:"candidates_1_form"`
	TwoForms   uint64 `json:"candidates_2_forms"`
	Probes     uint64 `json:"probes"`
	Matches    uint64 `json:"matches"`
	// ChanceMatches is the matches the filters' rates (CrawlRates)
	// expect by chance: the universe's candidates by forms times each
	// filter's rate, summed (every candidate counted as none of the
	// wallets', so slightly above the chance matches of a crawl whose
	// universe holds its wallets' keys).
	ChanceMatches    float64       `json:"expected_chance_matches"`
	OverlappingPairs int           `json:"overlapping_pairs"`
	Rules            []ruleSummary `json:"rules"`
	Kinds            []kindSummary `json:"kinds"`
}

// linking is the crawl's end: every session's groups, every overlap and
// the summary.
type linking struct {
	Sessions []linkLine
	Overlaps []overlapLine
	Summary  summary
}

// finish links the sessions from their match-set sizes and overlaps
// (any order; each pair once, I < J) over a universe of forms
// candidates.
func finish(ss []session, fs []*bip37.Filter, sizes []int, overlaps []experiments.Overlap, forms formCount) *linking {
	slices.SortFunc(overlaps, func(a, b experiments.Overlap) int {
		if a.I != b.I {
			return a.I - b.I
		}
		return a.J - b.J
	})
	formCounts := [3]uint64{0, forms.One, forms.Two}
	rates := make([][3]float64, len(ss))
	walletSize := make([]float64, len(ss))
	for j, s := range ss {
		rates[j] = experiments.CrawlRates(fs[j], s.Both)
		walletSize[j] = experiments.CrawlWalletSize(fs[j], s.Both, sizes[j])
	}
	significant := func(o experiments.Overlap) bool {
		return experiments.SignificantOverlap(o.Common, formCounts, rates[o.I], rates[o.J], walletSize[o.I], walletSize[o.J])
	}
	anyGroups := experiments.LinkGroups(len(ss), overlaps, func(experiments.Overlap) bool { return true })
	sigGroups := experiments.LinkGroups(len(ss), overlaps, significant)
	out := &linking{}
	for j, s := range ss {
		out.Sessions = append(out.Sessions, linkLine{Session: j, Name: s.Name, Wallet: s.Wallet, Matches: sizes[j],
			AnyGroup: anyGroups[j], SigGroup: sigGroups[j]})
	}
	for _, o := range overlaps {
		out.Overlaps = append(out.Overlaps, overlapLine{I: o.I, J: o.J, Common: o.Common, Significant: significant(o)})
	}
	sum := &out.Summary
	sum.Sessions = len(ss)
	sum.OneForm, sum.TwoForms = forms.One, forms.Two
	sum.Candidates = forms.One + forms.Two
	sum.Probes = sum.Candidates * uint64(len(ss))
	sum.OverlappingPairs = len(overlaps)
	for _, n := range sizes {
		sum.Matches += uint64(n)
	}
	for j := range ss {
		for f := 1; f < len(formCounts); f++ {
			sum.ChanceMatches += float64(formCounts[f]) * rates[j][f]
		}
	}
	known := walletsKnown(ss)
	wallets := make([]int, len(ss))
	seen := map[int]bool{}
	for j, s := range ss {
		wallets[j] = s.Wallet
		seen[s.Wallet] = true
	}
	if known {
		sum.Wallets = len(seen)
	}
	for _, r := range []struct {
		name   string
		groups []int
	}{{experiments.LinkAnyOverlap.String(), anyGroups}, {experiments.LinkSignificant.String(), sigGroups}} {
		rs := ruleSummary{Rule: r.name, Groups: countDistinct(r.groups)}
		if known {
			c := experiments.CountLinks(r.groups, wallets, overlaps)
			rs.Wrong, rs.SameLinked, rs.SamePairs = &c.Wrong, &c.SameLinked, &c.SamePairs
		}
		sum.Rules = append(sum.Rules, rs)
	}
	byKind := map[string]*kindSummary{}
	var kinds []string
	for j, s := range ss {
		k := s.Kind
		if k == "" {
			k = "unknown kind"
		}
		ks := byKind[k]
		if ks == nil {
			ks = &kindSummary{Kind: k}
			byKind[k] = ks
			kinds = append(kinds, k)
		}
		ks.Sessions++
		ks.MeanBytes += float64(fs[j].Size())
		ks.MeanRate += fs[j].CurrentFPRate()
		ks.MeanMatches += float64(sizes[j])
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		ks := byKind[k]
		n := float64(ks.Sessions)
		ks.MeanBytes, ks.MeanRate, ks.MeanMatches = ks.MeanBytes/n, ks.MeanRate/n, ks.MeanMatches/n
		sum.Kinds = append(sum.Kinds, *ks)
	}
	return out
}

// countDistinct returns the number of distinct values of xs.
func countDistinct(xs []int) int {
	seen := map[int]bool{}
	for _, x := range xs {
		seen[x] = true
	}
	return len(seen)
}

// writeText prints the summary as a table.
func (s *summary) writeText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	p := func(format string, a ...any) { fmt.Fprintf(tw, format+"\n", a...) }
	p("sessions (one filter each, the first filterload)\t%d", s.Sessions)
	if s.Wallets > 0 {
		p("wallets (from the transcripts' names)\t%d", s.Wallets)
	}
	p("candidates (1 form / 2 forms)\t%d (%d / %d)", s.Candidates, s.OneForm, s.TwoForms)
	p("probes (candidates x filters)\t%.4g", float64(s.Probes))
	p("matches (sum of the match sets)\t%d (by chance, the filters' rates expect %.3g)", s.Matches, s.ChanceMatches)
	p("pairs of sessions whose match sets overlap\t%d", s.OverlappingPairs)
	for _, r := range s.Rules {
		line := fmt.Sprintf("linked by %s: wallets found\t%d", r.Rule, r.Groups)
		if r.Wrong != nil {
			line += fmt.Sprintf("; wrong merges %d; pairs of one wallet's sessions linked %d of %d (%s)",
				*r.Wrong, *r.SameLinked, *r.SamePairs, percent(*r.SameLinked, *r.SamePairs))
		}
		p("%s", line)
	}
	for _, k := range s.Kinds {
		p("%s: sessions, mean filter bytes, mean rate (X/n)^k, mean match set\t%d, %.0f, %.3g, %.1f",
			k.Kind, k.Sessions, k.MeanBytes, k.MeanRate, k.MeanMatches)
	}
	return tw.Flush()
}

// percent formats a/b as a percentage.
func percent(a, b int) string {
	if b == 0 {
		return "no pair"
	}
	return strings.TrimSuffix(fmt.Sprintf("%.1f", 100*float64(a)/float64(b)), ".0") + " %"
}

// overlapsOf computes the overlapping pairs of sets (each sorted), as the
// shuffle does: for every candidate, every pair of the sets holding it.
func overlapsOf(sets map[string][]int) []experiments.Overlap {
	acc := map[[2]int]int{}
	for _, js := range sets {
		slices.Sort(js)
		for a := range js {
			for b := a + 1; b < len(js); b++ {
				acc[[2]int{js[a], js[b]}]++
			}
		}
	}
	out := make([]experiments.Overlap, 0, len(acc))
	for k, n := range acc {
		out = append(out, experiments.Overlap{I: k[0], J: k[1], Common: n})
	}
	return out
}

// writeJSON prints v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
