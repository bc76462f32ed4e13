package joint

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"

	"github.com/bloomwatch/bloomwatch/bip37"
)

// MaxExactFormsFilters is the largest number of filters (not counting
// those that match everything) for which Joint.FormsRate computes the
// rate of a several-form candidate exactly when some filter needs only one
// form to match; it works on tables of 2^n subsets. Above it FormsRate
// returns bounds.
const MaxExactFormsFilters = 12

// Joint is the joint false-positive model of a set of BIP37 filters: the
// probability that a random non-member passes every one of them, with the
// correlations that shared hash seeds create.
//
// # The model
//
// Hash function j of a filter with tweak t uses MurmurHash3 with seed
// s = j*0xFBA4C795 + t (bip37.HashSeed) and selects bit h_s(x) mod n, n
// the filter's size in bits. For a random candidate x, the 32-bit values
// h_s(x) of distinct seeds are modelled as independent and uniform, and a
// seed used by several filters gives them all the same value. So
//
//	P(x passes every filter) = prod over distinct seeds s of
//	    P_h[ every filter i using s has bit h mod n_i set ].
//
// Filters share seeds when they share the tweak (hash j with hash j, at
// any sizes and hash counts) or when their tweaks differ by a multiple d
// of 0xFBA4C795 (hash j+d of one with hash j of the other). Filters that
// share no seed multiply; a filter of size 0 or with no hash functions
// matches everything (Core's rule) and contributes nothing.
//
// # Exactness
//
// Each seed's factor is computed exactly for h uniform over Z_L, L the lcm
// of the sizes in bits of the filters using the seed (the residue model):
// by walking the AND of the filters tiled to L bits when L is at most
// 2^24 and 32 times the total of the sizes (equal and nested sizes), and
// otherwise by an exact decomposition (conditioning on h mod gcd, then
// splitting sizes that share no prime into independent factors by the
// Chinese remainder theorem, then conditioning on a prime power). Both
// give the same value up to float64 rounding. For filters of one size the
// factor is X_and/n, so filters of one size, hash count and tweak have
// the rate (X_and/n)^k; one filter has (X/n)^k
// (bip37.Filter.CurrentFPRate); filters sharing no seed have the product
// of those; with nested sizes the smaller filter is tiled over the
// larger.
//
// The hash is a 32-bit value, and 2^32 is not a multiple of L: each
// residue of h mod L has probability floor(2^32/L)/2^32 or one more
// 2^-32, within a relative L/2^32 of 1/L. So when L <= 2^32 the 32-bit
// value of each seed's factor lies within a relative L/2^32 of the
// residue model's (6.7e-5 for a 36,000-byte filter), and the rate within
// a factor (1 ± L/2^32)^seeds of it. When L > 2^32 (two large sizes with a
// small gcd, or three or more that share little) the 32-bit range covers
// less than one period of the residues and this argument gives no bound;
// the residue model is then the equidistributed limit, which the
// validation tests check against real filters in that regime (sizes of
// 1000, 1001 and 1003 bytes, L = 8.0e9). The independence of distinct
// seeds is a model of MurmurHash3, checked by the same tests.
//
// # Use
//
// A Joint is built incrementally: Add a filter (the live meter adds each
// filterload), Update one after a filteradd, read Rate. Factors are
// cached per set of filters sharing a seed, with the AND of their tiled
// bits, so Add and Update recompute only what they touch. A Joint is not
// safe for concurrent use.
type Joint struct {
	filters   []jointFilter
	seedGroup map[uint32]*jointGroup
	groups    map[string]*jointGroup
	limit     uint64 // scalarDirectBudget, lowered by tests
}

// jointFilter is one filter as the model sees it.
type jointFilter struct {
	bits     factor
	k, tweak uint32
	matchAll bool
}

// jointGroup is the set of filters that share one or more seeds (the
// seeds' signature) and the factor one such seed contributes.
type jointGroup struct {
	key     string
	members []int // filter indexes, sorted
	seeds   int   // number of seeds with exactly these members
	valid   bool
	value   float64
	// and is the AND of the members tiled to lcm bits, with a zero
	// padding word, when the factor was enumerated, else nil.
	and []uint64
	lcm uint64
}

// NewJoint returns an empty model (rate 1: nothing excludes anyone).
func NewJoint() *Joint {
	return &Joint{seedGroup: map[uint32]*jointGroup{}, groups: map[string]*jointGroup{}, limit: scalarDirectBudget}
}

// Len returns the number of filters added.
func (j *Joint) Len() int { return len(j.filters) }

// Add adds a copy of f's current bits and parameters and returns its
// index for Update. A filter that matches everything is counted but
// constrains nothing.
func (j *Joint) Add(f *bip37.Filter) int {
	i := len(j.filters)
	j.filters = append(j.filters, newJointFilter(i, f))
	j.addSeeds(i)
	return i
}

// newJointFilter copies f's bits.
func newJointFilter(i int, f *bip37.Filter) jointFilter {
	return jointFilter{
		bits:     factorFromBytes(i, f.Bits()),
		k:        f.HashFuncs(),
		tweak:    f.Tweak(),
		matchAll: f.Size() == 0 || f.HashFuncs() == 0,
	}
}

// addSeeds moves each of filter i's seeds to the group of its members
// plus i.
func (j *Joint) addSeeds(i int) {
	jf := &j.filters[i]
	if jf.matchAll {
		return
	}
	moved := map[*jointGroup]*jointGroup{}
	for h := range jf.k {
		s := bip37.HashSeed(jf.tweak, h)
		old := j.seedGroup[s]
		g, ok := moved[old]
		if !ok {
			var members []int
			if old != nil {
				members = old.members
			}
			g = j.group(sortedInsert(members, i))
			moved[old] = g
		}
		j.moveSeed(s, old, g)
	}
}

// removeSeeds moves each of filter i's seeds to the group of its members
// minus i.
func (j *Joint) removeSeeds(i int) {
	jf := &j.filters[i]
	if jf.matchAll {
		return
	}
	moved := map[*jointGroup]*jointGroup{}
	for h := range jf.k {
		s := bip37.HashSeed(jf.tweak, h)
		old := j.seedGroup[s]
		g, ok := moved[old]
		if !ok {
			members := sortedRemove(old.members, i)
			if len(members) > 0 {
				g = j.group(members)
			}
			moved[old] = g
		}
		j.moveSeed(s, old, g)
	}
}

// moveSeed reassigns seed s from group old (nil: none) to g (nil: none).
// A group left with no seed stays cached until the next Rate, so that the
// AND of its members can seed the group that replaced it.
func (j *Joint) moveSeed(s uint32, old, g *jointGroup) {
	if old != nil {
		old.seeds--
	}
	if g == nil {
		delete(j.seedGroup, s)
		return
	}
	g.seeds++
	j.seedGroup[s] = g
}

// group returns the group of the given members, creating it.
func (j *Joint) group(members []int) *jointGroup {
	key := groupKeyOf(members)
	g, ok := j.groups[key]
	if !ok {
		g = &jointGroup{key: key, members: members}
		j.groups[key] = g
	}
	return g
}

// groupKeyOf encodes sorted members as a map key.
func groupKeyOf(members []int) string {
	b := make([]byte, 0, 4*len(members))
	for _, m := range members {
		b = binary.LittleEndian.AppendUint32(b, uint32(m))
	}
	return string(b)
}

// Update replaces filter i (an index Add returned) by f's current state,
// typically the same filter after a filteradd or a server-side update.
// When only bits were added and the parameters are unchanged, the cached
// factors of the seeds i uses are updated at the new bits only; otherwise
// they are recomputed at the next Rate. Update panics if i is not an index
// Add returned.
func (j *Joint) Update(i int, f *bip37.Filter) {
	old := j.filters[i]
	nf := newJointFilter(i, f)
	sameParams := old.bits.n == nf.bits.n && old.k == nf.k && old.tweak == nf.tweak && old.matchAll == nf.matchAll
	if !sameParams {
		j.removeSeeds(i)
		j.filters[i] = nf
		j.addSeeds(i)
		j.invalidate(i)
		return
	}
	var added []uint64
	cleared := false
	for w := range old.bits.w {
		if old.bits.w[w]&^nf.bits.w[w] != 0 {
			cleared = true
			break
		}
		for d := nf.bits.w[w] &^ old.bits.w[w]; d != 0; d &= d - 1 {
			added = append(added, uint64(w)*wordBits+uint64(bits.TrailingZeros64(d)))
		}
	}
	j.filters[i] = nf
	if cleared {
		j.invalidate(i)
		return
	}
	if len(added) == 0 {
		return
	}
	for _, g := range j.groups {
		if _, in := slices.BinarySearch(g.members, i); !in {
			continue
		}
		if !g.valid || g.and == nil || !j.patch(g, i, added) {
			g.valid, g.and = false, nil
		}
	}
}

// invalidate drops the cached factor of every group holding filter i.
func (j *Joint) invalidate(i int) {
	for _, g := range j.groups {
		if _, in := slices.BinarySearch(g.members, i); in {
			g.valid, g.and = false, nil
		}
	}
}

// patch updates g's cached AND for bits newly set in member i, and reports
// false when recomputing would be cheaper.
func (j *Joint) patch(g *jointGroup, i int, added []uint64) bool {
	fi := &j.filters[i].bits
	if uint64(len(added))*(g.lcm/fi.n) > g.lcm/wordBits {
		return false
	}
	acc := factor{n: g.lcm, w: g.and}
	for _, p := range added {
		for x := p; x < g.lcm; x += fi.n {
			if acc.bit(x) != 0 {
				continue
			}
			all := true
			for _, m := range g.members {
				if m != i {
					fm := &j.filters[m].bits
					if fm.bit(x%fm.n) == 0 {
						all = false
						break
					}
				}
			}
			if all {
				acc.set(x)
			}
		}
	}
	g.value = float64(popcount(g.and)) / float64(g.lcm)
	return true
}

// Rate returns the probability that a random single-form non-member
// passes every filter added (1 when none constrains anything).
func (j *Joint) Rate() float64 {
	j.refresh()
	keys := make([]string, 0, len(j.groups))
	for key := range j.groups {
		keys = append(keys, key)
	}
	slices.Sort(keys) // a fixed order of the product: reproducible roundings
	rate := 1.0
	for _, key := range keys {
		g := j.groups[key]
		rate *= powRate(g.value, g.seeds)
	}
	return rate
}

// refresh evaluates every group that has seeds and no valid factor,
// smallest first so that a group's AND can start from a cached subset's,
// and then drops the groups no seed uses.
func (j *Joint) refresh() {
	var todo, bases []*jointGroup
	for _, g := range j.groups {
		switch {
		case g.seeds > 0 && !g.valid:
			todo = append(todo, g)
		case g.valid && g.and != nil:
			bases = append(bases, g)
		}
	}
	slices.SortFunc(todo, func(a, b *jointGroup) int { return len(a.members) - len(b.members) })
	for _, g := range todo {
		j.evaluateGroup(g, bases)
		if g.and != nil {
			bases = append(bases, g)
		}
	}
	for key, g := range j.groups {
		if g.seeds == 0 {
			delete(j.groups, key)
		}
	}
}

// evaluateGroup computes the factor one seed of g contributes, starting
// the AND from the largest of bases (groups with a cached AND) whose
// members are a subset of g's and whose lcm divides g's.
func (j *Joint) evaluateGroup(g *jointGroup, bases []*jointGroup) {
	g.valid = true
	if len(g.members) == 1 {
		f := &j.filters[g.members[0]].bits
		g.value, g.and, g.lcm = float64(f.ones)/float64(f.n), nil, f.n
		return
	}
	fs := make([]factor, len(g.members))
	for x, m := range g.members {
		fs[x] = j.filters[m].bits
	}
	l := lcmUpTo(fs, directLimit(fs, j.limit, scalarDirectRatio))
	if l == 0 {
		g.value, g.and, g.lcm = rateOfFactors(fs, j.limit), nil, 0
		return
	}
	// Start from the largest cached subset whose lcm divides l.
	var base *jointGroup
	for _, h := range bases {
		if l%h.lcm == 0 && len(h.members) < len(g.members) &&
			(base == nil || len(h.members) > len(base.members)) && isSubset(h.members, g.members) {
			base = h
		}
	}
	acc := allOnes(l)
	if base != nil {
		andTiled(acc, &factor{n: base.lcm, w: base.and}, l)
	}
	for x, m := range g.members {
		if base != nil {
			if _, in := slices.BinarySearch(base.members, m); in {
				continue
			}
		}
		andTiled(acc, &fs[x], l)
	}
	tailMask(acc, l)
	g.value, g.and, g.lcm = float64(popcount(acc))/float64(l), acc, l
}

// AllFormsRate returns Rate()^forms: the probability that a candidate of
// forms independent forms (a public key and its hash, say) matches every
// filter through every form, the both-forms test. It is exact under the
// model (forms are distinct strings, so their hashes are independent).
func (j *Joint) AllFormsRate(forms int) float64 {
	if forms <= 0 {
		return 0
	}
	return math.Pow(j.Rate(), float64(forms))
}

// RateBounds is a probability known exactly (Lower == Upper) or bounded.
type RateBounds struct {
	Lower, Upper float64
}

// Exact reports whether the bounds coincide.
func (b RateBounds) Exact() bool { return b.Lower == b.Upper }

// exactly returns the bounds of a known value.
func exactly(v float64) RateBounds { return RateBounds{v, v} }

// AnyFormRate returns FormsRate(forms, nil): the probability that a
// candidate of forms independent forms matches every filter through at
// least one of its forms (the plain intersection test).
func (j *Joint) AnyFormRate(forms int) RateBounds {
	return j.FormsRate(forms, nil)
}

// FormsRate returns the probability that a candidate of forms independent
// forms passes a mixed test: every filter i with everyForm[i] must match
// every form, and every other filter at least one form (everyForm may be
// shorter than the filter count, or nil: missing entries are false).
//
// Across correlated filters "at least one form per filter" is not a
// product: the forms that pass differ from filter to filter. With P(U)
// the probability that one form passes every filter of the set U (a joint
// rate) and pi(A) the probability that it passes exactly the filters of
// A (from P by inclusion-exclusion over the supersets of A), the rate is
// the probability that the sets passed by the forms, each containing the
// everyForm filters B, cover every filter:
//
//	forms = 2:  sum over A ⊇ B of pi(A) * P(complement(A) ∪ B),
//
// and for more forms the OR-convolution of pi over the first forms - 1.
// Every term is non-negative, and each is at most a rounding error
// 2^-53 * 2^n times a lower bound of the result, so the relative error is
// about forms * 4^n * 2^-53 (under 1e-8 for n = 12 filters).
//
// This is exact under the model when at most MaxExactFormsFilters filters
// constrain anything, and always when every filter is in everyForm (the
// rate is then AllFormsRate) or forms is 1 (Rate). Otherwise it returns
// bounds: below, the probability that every form passes B and one of them
// passes everything, P(B)^forms - (P(B) - P(all))^forms; above, the least
// of P(B)^forms and the exact rate over the MaxExactFormsFilters filters
// with the lowest single rates (fewer constraints can only pass more).
// forms <= 0 gives 0 (a candidate without forms matches nothing).
func (j *Joint) FormsRate(forms int, everyForm []bool) RateBounds {
	if forms <= 0 {
		return exactly(0)
	}
	var live, every, some []int
	for i := range j.filters {
		if j.filters[i].matchAll {
			continue
		}
		live = append(live, i)
		if i < len(everyForm) && everyForm[i] {
			every = append(every, i)
		} else {
			some = append(some, i)
		}
	}
	all := j.Rate()
	switch {
	case len(live) == 0:
		return exactly(1)
	case forms == 1:
		return exactly(all)
	case len(some) == 0:
		return exactly(math.Pow(all, float64(forms)))
	case len(live) <= MaxExactFormsFilters:
		return exactly(j.formsExact(live, everyForm, forms))
	}
	pb := j.subsetRate(every)
	f := float64(forms)
	lower := 0.0
	if pb > 0 {
		// P(B)^F (1 - (1 - P(all)/P(B))^F), without cancellation.
		lower = math.Pow(pb, f) * -math.Expm1(f*math.Log1p(-math.Min(all/pb, 1)))
	}
	// The most selective filters, by single rate.
	sel := slices.Clone(live)
	single := func(i int) float64 {
		jf := &j.filters[i]
		return math.Pow(float64(jf.bits.ones)/float64(jf.bits.n), float64(jf.k))
	}
	slices.SortStableFunc(sel, func(a, b int) int {
		sa, sb := single(a), single(b)
		switch {
		case sa < sb:
			return -1
		case sa > sb:
			return 1
		}
		return 0
	})
	sel = sel[:MaxExactFormsFilters]
	slices.Sort(sel)
	upper := math.Min(math.Pow(pb, f), j.formsExact(sel, everyForm, forms))
	return RateBounds{Lower: math.Min(lower, upper), Upper: upper}
}

// subsetRate returns the joint rate of the given filters alone.
func (j *Joint) subsetRate(idx []int) float64 {
	sub := &Joint{seedGroup: map[uint32]*jointGroup{}, groups: map[string]*jointGroup{}, limit: j.limit}
	for x, i := range idx {
		jf := j.filters[i]
		jf.bits.id = x
		sub.filters = append(sub.filters, jf)
		sub.addSeeds(x)
	}
	return sub.Rate()
}

// formsExact computes FormsRate exactly over the filters idx (at most
// MaxExactFormsFilters, none matching everything).
func (j *Joint) formsExact(idx []int, everyForm []bool, forms int) float64 {
	r := len(idx)
	size := 1 << r
	full := uint32(size - 1)
	var mustAll uint32
	for x, i := range idx {
		if i < len(everyForm) && everyForm[i] {
			mustAll |= 1 << x
		}
	}
	// Seeds by the set of filters (local bits) using them.
	sets := map[uint32]uint32{}
	var order []uint32
	seedSet := map[uint32]uint32{}
	for x, i := range idx {
		jf := &j.filters[i]
		for h := range jf.k {
			seedSet[bip37.HashSeed(jf.tweak, h)] |= 1 << x
		}
	}
	for _, m := range seedSet {
		if sets[m] == 0 {
			order = append(order, m)
		}
		sets[m]++
	}
	slices.Sort(order)
	// p[U] = P(one form passes every filter of U) = product over seed
	// sets S of P(the bits of U ∩ S are set)^(seeds with set S).
	p := make([]float64, size)
	for u := range p {
		p[u] = 1
	}
	for _, s := range order {
		var fs []factor
		for x := range r {
			if s&(1<<x) != 0 {
				f := j.filters[idx[x]].bits
				f.id = x
				fs = append(fs, f)
			}
		}
		sup := distOfFactors(fs, r, histDirectBudget)
		// Superset sums over the bits of s: sup[V] = P(mask ⊇ V).
		for x := range r {
			b := 1 << x
			if s&uint32(b) == 0 {
				continue
			}
			for v := range size {
				if v&b == 0 {
					sup[v] += sup[v|b]
				}
			}
		}
		mult := float64(sets[s])
		for u := range p {
			p[u] *= math.Pow(math.Min(sup[uint32(u)&s], 1), mult)
		}
	}
	// pi[A] = P(one form passes exactly A): Möbius inversion over
	// supersets, restricted to A ⊇ mustAll.
	pi := slices.Clone(p)
	for x := range r {
		b := 1 << x
		for a := range size {
			if a&b == 0 {
				pi[a] -= pi[a|b]
			}
		}
	}
	for a := range pi {
		if pi[a] < 0 || uint32(a)&mustAll != mustAll {
			pi[a] = 0
		}
	}
	// d[C] = P(the first forms-1 forms pass sets whose union is C).
	d := pi
	for range forms - 2 {
		next := make([]float64, size)
		for a, pa := range d {
			if pa == 0 {
				continue
			}
			for b, pb := range pi {
				if pb != 0 {
					next[a|b] += pa * pb
				}
			}
		}
		d = next
	}
	// The last form passes mustAll and everything the others missed.
	rate := 0.0
	for a, pa := range d {
		if pa != 0 {
			rate += pa * p[(full&^uint32(a))|mustAll]
		}
	}
	return math.Min(rate, 1)
}

// JointRate returns the joint rate of the filters (see Joint): the
// probability that a random single-form non-member passes all of them.
func JointRate(filters []*bip37.Filter) float64 {
	j := NewJoint()
	for _, f := range filters {
		j.Add(f)
	}
	return j.Rate()
}

// IndependentRate returns prod (X_i/n_i)^(k_i), the rate of the filters
// treated as independent (formula 5 for fresh tweaks). It is the
// reference the joint model replaces: for filters that share hash seeds
// it is wrong, by orders of magnitude when the same elements sit in
// nested sizes. Filters that match everything contribute 1.
func IndependentRate(filters []*bip37.Filter) float64 {
	rate := 1.0
	for _, f := range filters {
		rate *= f.CurrentFPRate()
	}
	return rate
}
