package experiments

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/internal/unionfind"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/scan"
)

// The crawler: a node that collects one filter per
// client session, as Nick's crawlers did (they disconnected after the
// filterload), tests every candidate on chain against each, and links the
// sessions into wallets by the overlap of their match sets.
//
// The test per filter follows what the crawler sees (the client's user
// agent, and the filter's content): a filter holding public keys and
// hashes (Session.BothForms, bitcoinj's) gets the both-forms test, so its
// match set is the candidates whose revealed public key AND hash160 both
// match (Nick's match set: only revealed keys can be tested); the other
// filters hold hash160s, so a candidate matches through its hash160
// alone.

// CrawlerView is what the crawler learned: one match set per session.
type CrawlerView struct {
	// Filters are the sessions' first filters, by session index.
	Filters []*bip37.Filter
	// Sets[j] lists the candidate ids matching filter j, sorted.
	Sets [][]int32
	// Candidates[c] is candidate c: every candidate some filter's scan
	// hit, in the order the scan returned them.
	Candidates []element.Candidate
	// Owner[c] is the owner of candidate c: a wallet index, or -1 for a
	// background user or a synthetic candidate.
	Owner []int32
	// Forms[c] is candidate c's number of forms (1, or 2 with a revealed
	// public key).
	Forms []uint8
	// Chain[c] reports a candidate of the population's chain (the rest
	// are synthetic background candidates with no transactions).
	Chain []bool
	// KeyID[c] is the population key of chain candidate c (-1 for
	// synthetic ones).
	KeyID []int32
	// FormCounts[F] counts the universe's candidates with F forms.
	FormCounts [3]uint64
	// Rate[j][F] is filter j's test rate for a candidate of F forms that
	// is not its wallet's: f^2 for both forms, f for the hash alone, 0
	// when the test excludes such candidates.
	Rate [][3]float64
	// Members[j][F] counts filter j's own wallet's candidates with F
	// forms in the universe that it holds (they always match).
	Members [][3]uint64
	// BothForms[j] reports that filter j gets the both-forms test.
	BothForms []bool
}

// Crawl scans the population's chain candidates and background
// synthetic ones (PubKeys forms, so that bitcoinj's test applies) through
// the first filter of every session.
func Crawl(ctx context.Context, p *Population, sessions []*Session, background uint64, seed uint64, workers int) (*CrawlerView, error) {
	return CrawlProgress(ctx, p, sessions, background, seed, workers, nil)
}

// CrawlProgress is Crawl, telling progress (when not nil) of the scan's
// advance, chunk by chunk, as stage "crawl".
func CrawlProgress(ctx context.Context, p *Population, sessions []*Session, background uint64, seed uint64, workers int, progress ProgressFunc) (*CrawlerView, error) {
	v := &CrawlerView{}
	for _, s := range sessions {
		if len(s.Loads) == 0 {
			return nil, fmt.Errorf("%w: session without a filter", ErrBadConfig)
		}
		v.Filters = append(v.Filters, s.Loads[0].Filter)
	}
	onChain := p.OnChainCandidates()
	u := element.NewConcat(onChain, scan.Synthetic{Seed: seed, Count: background, PubKeys: true})
	hits, err := scanChunks(ctx, u, scan.Config{Filters: v.Filters, Workers: workers}, stageCrawl, progress)
	if err != nil {
		return nil, err
	}
	for _, c := range onChain {
		v.FormCounts[len(c.Forms)]++
	}
	v.FormCounts[2] += background
	v.Sets = make([][]int32, len(sessions))
	for _, h := range hits {
		id := int32(len(v.Owner))
		key := p.keyOfPush(h.Candidate.Forms[0])
		owner := int32(-1)
		if key >= 0 {
			owner = max(p.Keys[key].Owner, -1)
		}
		v.Candidates = append(v.Candidates, h.Candidate)
		v.Owner = append(v.Owner, owner)
		v.Forms = append(v.Forms, uint8(len(h.Candidate.Forms)))
		v.Chain = append(v.Chain, key >= 0)
		v.KeyID = append(v.KeyID, key)
		for j, s := range sessions {
			if CrawlTest(v.Filters[j], s.BothForms, &h, j) {
				v.Sets[j] = append(v.Sets[j], id)
			}
		}
	}
	v.Rate = make([][3]float64, len(sessions))
	v.Members = make([][3]uint64, len(sessions))
	v.BothForms = make([]bool, len(sessions))
	for j, s := range sessions {
		v.BothForms[j] = s.BothForms
		v.Rate[j] = CrawlRates(v.Filters[j], s.BothForms)
		w := p.Wallets[s.Wallet]
		for i := range s.Loads[0].Keys {
			if i >= len(w.KeyIDs) || w.KeyIDs[i] < 0 {
				continue
			}
			forms := 1
			if p.Keys[w.KeyIDs[i]].Revealed {
				forms = 2
			}
			if v.Rate[j][forms] > 0 {
				v.Members[j][forms]++
			}
		}
	}
	return v, nil
}

// CrawlTest is the crawler's test of a scanned candidate against filter
// f, the scan's filter j: with the both-forms test (bothForms) the hit
// must carry two forms and match f through every one (h.All), otherwise
// its primary form must match f. A hit of a scan that did not hold f as
// filter j gives a meaningless answer.
func CrawlTest(f *bip37.Filter, bothForms bool, h *scan.Hit, j int) bool {
	if !h.Any.Has(j) {
		return false
	}
	if bothForms {
		return len(h.Candidate.Forms) >= 2 && h.All.Has(j)
	}
	return f.Matches(h.Candidate.Forms[0])
}

// CrawlRates returns the crawler's test rate of filter f for a
// candidate of F forms that is not its wallet's, by F: f^2 for the
// both-forms test (which a one-form candidate never passes), f for the
// primary form alone, with f = f.CurrentFPRate().
func CrawlRates(f *bip37.Filter, bothForms bool) [3]float64 {
	r := f.CurrentFPRate()
	if bothForms {
		return [3]float64{0, 0, r * r}
	}
	return [3]float64{0, r, r}
}

// scanChunkMin is the smallest chunk scanChunks scans at once.
const scanChunkMin = 1 << 16

// progressSteps is about how many progress reports a chunked scan makes.
const progressSteps = 100

// scanChunks scans u chunk by chunk (scan.Run on each index range)
// so that progress can be told, and returns every chunk's hits.
func scanChunks(ctx context.Context, u element.IndexedUniverse, cfg scan.Config, stage string, progress ProgressFunc) ([]scan.Hit, error) {
	total := u.Len()
	chunk := max(uint64(scanChunkMin), total/progressSteps)
	var hits []scan.Hit
	for lo := uint64(0); lo < total; lo += chunk {
		hi := min(total, lo+chunk)
		res, err := scan.Run(ctx, element.StreamRange(u, lo, hi), cfg)
		if err != nil {
			return nil, err
		}
		hits = append(hits, res.Hits...)
		if progress != nil {
			progress(stage, int(hi), int(total))
		}
	}
	return hits, nil
}

// ExpectedFP returns the false positives expected in filter j's match
// set: the universe's non-members times the test rate.
func (v *CrawlerView) ExpectedFP(j int) float64 {
	var e float64
	for f := 1; f < len(v.FormCounts); f++ {
		e += (float64(v.FormCounts[f]) - float64(v.Members[j][f])) * v.Rate[j][f]
	}
	return e
}

// PairExpectation is the chance that the match sets of two sessions of
// different wallets overlap, split by its causes.
type PairExpectation struct {
	// Nick is Nick's formula, 1 - (1 - phi_i phi_j)^(|P| - |w_i| - |w_j|),
	// per form count: a candidate of neither wallet matching both.
	Nick float64
	// Own is the term Nick's formula leaves out: a candidate of one
	// wallet (always in its own set) matching the other's filter,
	// 1 - prod (1 - phi_j)^|w_i| (1 - phi_i)^|w_j|.
	Own float64
	// Both is the probability of any overlap.
	Both float64
}

// Pair returns the overlap probability of sessions i and j of different
// wallets.
func (v *CrawlerView) Pair(i, j int) PairExpectation {
	var nick, own float64
	for f := 1; f < len(v.FormCounts); f++ {
		ri, rj := v.Rate[i][f], v.Rate[j][f]
		rest := float64(v.FormCounts[f]) - float64(v.Members[i][f]) - float64(v.Members[j][f])
		nick += rest * ri * rj
		own += float64(v.Members[i][f])*rj + float64(v.Members[j][f])*ri
	}
	return PairExpectation{Nick: -math.Expm1(-nick), Own: -math.Expm1(-own), Both: -math.Expm1(-nick - own)}
}

// Overlap is one pair of sessions whose match sets intersect.
type Overlap struct {
	I, J int
	// Common counts the shared candidates; OwnCause those of them owned
	// by one of the two sessions' wallets (the term Nick's formula leaves
	// out when the wallets differ).
	Common, OwnCause int
}

// Overlaps returns every pair of sessions whose match sets share a
// candidate, ordered by (I, J).
func (v *CrawlerView) Overlaps(sessions []*Session) []Overlap {
	bySet := map[int32][]int{}
	for j, set := range v.Sets {
		for _, c := range set {
			bySet[c] = append(bySet[c], j)
		}
	}
	type pair struct{ i, j int }
	acc := map[pair]*Overlap{}
	for c, js := range bySet {
		for a := range js {
			for b := a + 1; b < len(js); b++ {
				k := pair{js[a], js[b]}
				o := acc[k]
				if o == nil {
					o = &Overlap{I: k.i, J: k.j}
					acc[k] = o
				}
				o.Common++
				if own := v.Owner[c]; own >= 0 && (own == int32(sessions[k.i].Wallet) || own == int32(sessions[k.j].Wallet)) {
					o.OwnCause++
				}
			}
		}
	}
	out := make([]Overlap, 0, len(acc))
	for _, o := range acc {
		out = append(out, *o)
	}
	slices.SortFunc(out, func(a, b Overlap) int {
		if a.I != b.I {
			return a.I - b.I
		}
		return a.J - b.J
	})
	return out
}

// LinkRule decides whether two overlapping sessions are one wallet.
type LinkRule int

// The linking rules.
const (
	// LinkAnyOverlap merges any two sessions whose match sets share a
	// candidate (Nick's de-duplication).
	LinkAnyOverlap LinkRule = iota + 1
	// LinkSignificant merges two sessions only when their overlap is
	// improbable by chance: P(Poisson(lambda) >= common) < LinkAlpha,
	// with lambda the chance overlap the crawler computes from the two
	// filters' rates and match-set sizes (every term, the left-out ones
	// included).
	LinkSignificant
)

// LinkAlpha is the significance level of LinkSignificant.
const LinkAlpha = 1e-6

// String names the rule.
func (r LinkRule) String() string {
	if r == LinkSignificant {
		return "significant overlap"
	}
	return "any overlap (Nick)"
}

// Link groups the sessions into wallets by rule: group[j] is the group of
// session j (the smallest session index in it).
func (v *CrawlerView) Link(sessions []*Session, overlaps []Overlap, rule LinkRule) []int {
	return LinkGroups(len(sessions), overlaps, func(o Overlap) bool {
		return rule != LinkSignificant || v.significant(o)
	})
}

// LinkGroups groups n sessions by the overlaps merge accepts (the
// union of every accepted pair, transitively): group[j] is the group of
// session j, the smallest session index in it.
func LinkGroups(n int, overlaps []Overlap, merge func(Overlap) bool) []int {
	sets := unionfind.New(n)
	for _, o := range overlaps {
		if merge(o) {
			sets.Union(o.I, o.J)
		}
	}
	out := make([]int, n)
	for i := range out {
		out[i] = sets.Find(i)
	}
	return out
}

// significant reports whether an overlap is improbable by chance, using
// only what the crawler knows (SignificantOverlap).
func (v *CrawlerView) significant(o Overlap) bool {
	return SignificantOverlap(o.Common, v.FormCounts, v.Rate[o.I], v.Rate[o.J], v.WalletSize(o.I), v.WalletSize(o.J))
}

// SignificantOverlap is LinkSignificant's test of an overlap of common
// candidates between the match sets of two filters, from what the
// crawler knows: the universe's candidates by form count, the filters'
// test rates (CrawlRates) and their wallets' sizes estimated from the
// filters (CrawlWalletSize). It reports P(Poisson(lambda) >= common) <
// LinkAlpha, lambda the overlap expected by chance: candidates of
// neither wallet matching both filters, and each wallet's own matching
// the other's filter.
func SignificantOverlap(common int, formCounts [3]uint64, rateI, rateJ [3]float64, sizeI, sizeJ float64) bool {
	var lambda float64
	for f := 1; f < len(formCounts); f++ {
		ri, rj := rateI[f], rateJ[f]
		lambda += float64(formCounts[f]) * ri * rj
		lambda += sizeI*rj + sizeJ*ri
	}
	return poissonTail(uint64(common), lambda) < LinkAlpha
}

// WalletSize is the crawler's estimate of the candidates filter j's
// wallet holds (CrawlWalletSize).
func (v *CrawlerView) WalletSize(j int) float64 {
	return CrawlWalletSize(v.Filters[j], v.BothForms[j], len(v.Sets[j]))
}

// CrawlWalletSize is the crawler's estimate of the candidates filter f's
// wallet holds: the elements the filter's bits imply (bip37's m^, halved
// for a filter of public keys and hashes, bothForms), at most matches,
// the size of its match set.
func CrawlWalletSize(f *bip37.Filter, bothForms bool, matches int) float64 {
	est := f.EstimatedElements()
	if bothForms {
		est /= 2
	}
	if math.IsNaN(est) || math.IsInf(est, 0) {
		est = math.Inf(1)
	}
	return math.Min(est, float64(matches))
}

// poissonTail returns P(X >= c) for X ~ Poisson(lambda).
func poissonTail(c uint64, lambda float64) float64 {
	if c == 0 {
		return 1
	}
	return poissonSF(float64(c), lambda)
}
