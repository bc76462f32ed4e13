package experiments

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/filterpolicy"
	"github.com/bloomwatch/bloomwatch/privacy"
)

// The frequency experiment: the frequency-alignment
// attack on Bloom-filter encodings of private record linkage (PPRL) as
// the seeds state it (docs/RESEARCH.md, Sources), against a crawl of
// many clients' filters. The attacker does not use the hash functions: it counts
// identical filters in the crawl, sorts them and a public list of values
// by frequency, pairs the two lists above a threshold, and for each bit
// position p collects c[p]+ (the values paired with filters that have p
// set) and c[p]- (those paired with filters that have it clear); the
// values of p are c[p]+ minus c[p]-. A value's learned positions then
// re-identify it in every other filter of the crawl.
//
// The frequent values are popular scripts (an exchange's deposit
// address, a reused donation address): trackers watch one each, and some
// wallets watch one beside their own keys; the public list ranks them by
// a noisy measure of their use on chain. Three tweak policies: one tweak
// shared by every client (a constant in the code), a random tweak per
// client kept across its sessions (bloomwatch), a fresh tweak per session
// (bitcoinj's restarts). Every filter has one size (bloomwatch's smallest,
// 153 bytes, k = 13), as PPRL's encodings do. For contrast, the direct
// attack BIP37 allows (the tweak is sent in clear in every filterload, so
// every popular script is tested against every filter) is measured too.
const (
	freqPopular   = 50  // popular scripts, Zipf-weighted
	freqTrackers  = 600 // clients watching one popular script
	freqWallets   = 300 // clients with their own keys
	freqWalletPop = 0.5 // share of wallets that also watch a popular script
	freqThreshold = 3   // a filter seen this often is aligned
	freqJitter    = 0.3 // lognormal sigma of the public measure of use
	freqStream    = 8000
)

// freqPolicy is a tweak policy.
type freqPolicy int

const (
	freqShared freqPolicy = iota
	freqPerClient
	freqPerSession
)

// String names the policy.
func (p freqPolicy) String() string {
	switch p {
	case freqShared:
		return "one shared tweak"
	case freqPerClient:
		return "a tweak per client, kept"
	}
	return "a fresh tweak per session"
}

// freqClient is one client of the crawl.
type freqClient struct {
	els     [][]byte
	popular int // the popular script it watches, or -1
	tweak   uint32
}

// freqSession is one filter the crawler recorded.
type freqSession struct {
	client int
	f      *bip37.Filter
}

// freqOutcome is one policy's attack outcomes, per client.
type freqOutcome struct {
	pairs, pairsRight         int
	claims, right, members    []float64 // alignment attack, per client
	dClaims, dRight, dMembers []float64 // direct attack, per client
	learned                   int
}

// runFrequency runs the crawl under each policy and both attacks.
func runFrequency(ctx context.Context, cfg Config) (*Result, error) {
	trackers := orDefault(cfg.Wallets, freqTrackers/3) * 3
	wallets := trackers / 2
	rng := rand.New(rand.NewPCG(cfg.Seed, freqStream))
	popular := make([][]byte, freqPopular)
	weights := make([]float64, freqPopular)
	for i := range popular {
		popular[i] = synthKey(cfg.Seed, freqStream<<32, uint64(i)).Hash160
		weights[i] = 1 / float64(i+1)
	}
	var clients []freqClient
	watchers := make([]float64, freqPopular)
	for range trackers {
		c := drawWeighted(rng, weights)
		clients = append(clients, freqClient{els: [][]byte{popular[c]}, popular: c})
		watchers[c]++
	}
	for w := range wallets {
		c := freqClient{popular: -1}
		for i := range rapporKeys {
			c.els = append(c.els, synthKey(cfg.Seed, freqStream<<32|uint64(w+1), uint64(i)).Hash160)
		}
		if rng.Float64() < freqWalletPop {
			c.popular = drawWeighted(rng, weights)
			c.els = append(c.els, popular[c.popular])
			watchers[c.popular]++
		}
		clients = append(clients, c)
	}
	sessions := make([]int, len(clients))
	for i := range sessions {
		sessions[i] = 1 + poissonDraw(rng, 1)
	}
	// The public measure of each script's use: its watchers, jittered.
	public := make([]float64, freqPopular)
	for i := range public {
		public[i] = watchers[i] * math.Exp(freqJitter*rng.NormFloat64())
	}
	size, k := filterpolicy.FilterSize(rapporKeys+1, rapporRate)
	out := &Result{
		Name:  "frequency",
		Title: "the PPRL frequency-alignment attack on a crawl of filters, per tweak policy, beside the direct test BIP37 allows",
		Params: []Param{
			param("trackers", trackers), param("wallets", wallets), param("popular_scripts", freqPopular),
			param("wallet_keys", rapporKeys), param("filter_bytes", size), param("hash_funcs", k), param("threshold", freqThreshold),
		},
	}
	shared := rng.Uint32()
	var ticks []privacy.Tick
	series := map[string]*privacy.Series{}
	names := []string{"alignment: precision", "alignment: recall", "direct test: precision", "direct test: recall"}
	for _, n := range names {
		series[n] = &privacy.Series{Name: n, Points: true, Group: n}
	}
	for pi, pol := range []freqPolicy{freqShared, freqPerClient, freqPerSession} {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var crawl []freqSession
		for ci := range clients {
			c := &clients[ci]
			c.tweak = rng.Uint32()
			for range sessions[ci] {
				tweak := c.tweak
				switch pol {
				case freqShared:
					tweak = shared
				case freqPerSession:
					tweak = rng.Uint32()
				}
				f, err := bip37.NewFilterFromBits(make([]byte, size), k, tweak, bip37.UpdateAll)
				if err != nil {
					return nil, err
				}
				for _, e := range c.els {
					f.Add(e)
				}
				crawl = append(crawl, freqSession{client: ci, f: f})
			}
		}
		o := freqAttack(crawl, clients, popular, public)
		pre := pol.String() + ": "
		const unit = "clients"
		pairRow := binomialRow(pre+"aligned pairs that pair a filter with its own script", o.pairsRight, o.pairs).
			withNote(fmt.Sprintf("%d filters seen %d times or more paired by rank with the public list", o.pairs, freqThreshold))
		prec := clusterPropRow(pre+"alignment attack: precision of its re-identifications", o.right, o.claims, unit)
		rec := clusterPropRow(pre+"alignment attack: recall of the popular scripts the filters hold", o.right, o.members, unit)
		dprec := clusterPropRow(pre+"direct test (the tweak is in clear): precision", o.dRight, o.dClaims, unit)
		drec := clusterPropRow(pre+"direct test (the tweak is in clear): recall", o.dRight, o.dMembers, unit)
		out.Rows = append(out.Rows, pairRow,
			deterministicRow(pre+"scripts whose bit positions the alignment learned", float64(o.learned)),
			prec, rec, dprec, drec)
		ticks = append(ticks, privacy.Tick{Value: float64(pi), Label: pol.String()})
		for j, r := range []Comparison{prec, rec, dprec, drec} {
			if r.Interval == nil {
				continue
			}
			s := series[names[j]]
			s.X, s.Y = append(s.X, float64(pi)+0.08*float64(j-2)), append(s.Y, r.Measured)
			s.YLo, s.YHi = append(s.YLo, r.Interval[0]), append(s.YHi, r.Interval[1])
		}
	}
	chart := privacy.Chart{Title: "re-identifying popular scripts in a crawl of filters (measured here)", XLabel: "tweak policy", YLabel: "share",
		XTicks: ticks, Notes: []string{fmt.Sprintf("%d trackers and %d wallets, 1 + Poisson(1) sessions each; %d popular scripts; alignment above %d identical filters; 95 %% intervals over clients",
			trackers, wallets, freqPopular, freqThreshold)}}
	for _, n := range names {
		chart.Series = append(chart.Series, *series[n])
	}
	out.Charts = []privacy.Chart{chart}
	return out, nil
}

// freqAttack runs the alignment attack and the direct test on a crawl.
func freqAttack(crawl []freqSession, clients []freqClient, popular [][]byte, public []float64) freqOutcome {
	var o freqOutcome
	n := len(clients)
	o.claims, o.right, o.members = make([]float64, n), make([]float64, n), make([]float64, n)
	o.dClaims, o.dRight, o.dMembers = make([]float64, n), make([]float64, n), make([]float64, n)
	// Identical filters and their frequencies.
	freq := map[string]int{}
	first := map[string]int{}
	for i, s := range crawl {
		key := string(s.f.Bits())
		if freq[key] == 0 {
			first[key] = i
		}
		freq[key]++
	}
	var frequent []string
	for key, c := range freq {
		if c >= freqThreshold {
			frequent = append(frequent, key)
		}
	}
	slices.SortFunc(frequent, func(a, b string) int {
		if freq[a] != freq[b] {
			return freq[b] - freq[a]
		}
		return strings.Compare(a, b)
	})
	values := make([]int, len(public))
	for i := range values {
		values[i] = i
	}
	slices.SortStableFunc(values, func(a, b int) int {
		switch {
		case public[a] > public[b]:
			return -1
		case public[a] < public[b]:
			return 1
		}
		return 0
	})
	pairs := min(len(frequent), len(values))
	o.pairs = pairs
	var nBits int
	if len(crawl) > 0 {
		nBits = int(crawl[0].f.NumBits())
	}
	plus := make([]map[int]bool, nBits)
	minus := make([]map[int]bool, nBits)
	for p := range nBits {
		plus[p], minus[p] = map[int]bool{}, map[int]bool{}
	}
	for i := range pairs {
		key, v := frequent[i], values[i]
		s := crawl[first[key]]
		if c := clients[s.client]; c.popular == v && len(c.els) == 1 {
			o.pairsRight++
		}
		for p := range nBits {
			if key[p/bitsPerByte]&(1<<(p%bitsPerByte)) != 0 {
				plus[p][v] = true
			} else {
				minus[p][v] = true
			}
		}
	}
	learned := map[int][]int{}
	for p := range nBits {
		for v := range plus[p] {
			if !minus[p][v] {
				learned[v] = append(learned[v], p)
			}
		}
	}
	o.learned = len(learned)
	for _, s := range crawl {
		c := clients[s.client]
		bits := s.f.Bits()
		if c.popular >= 0 {
			o.members[s.client]++
			o.dMembers[s.client]++
		}
		for v, ps := range learned {
			all := true
			for _, p := range ps {
				if bits[p/bitsPerByte]&(1<<(p%bitsPerByte)) == 0 {
					all = false
					break
				}
			}
			if all {
				o.claims[s.client]++
				if c.popular == v {
					o.right[s.client]++
				}
			}
		}
		for v, e := range popular {
			if s.f.Matches(e) {
				o.dClaims[s.client]++
				if c.popular == v {
					o.dRight[s.client]++
				}
			}
		}
	}
	return o
}
