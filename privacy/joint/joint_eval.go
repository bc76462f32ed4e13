package joint

import (
	"cmp"
	"encoding/binary"
	"github.com/bloomwatch/bloomwatch/internal/unionfind"
	"math"
	"math/bits"
	"slices"
)

// The residue-model evaluator behind Joint: for the filters that share
// one hash seed, the probability that a uniform h sets (every one of, or a
// given subset of) their bits h mod n_i. See Joint for the model and its
// exactness.

// Direct-enumeration budgets: the largest lcm of the sizes, in bits,
// evaluated by walking every residue. Above them the evaluator
// decomposes the problem (gcd, coprime components, prime powers).
const (
	// scalarDirectBudget bounds the AND of the filters tiled to the lcm:
	// 2^24 bits is 2 MiB of words, a few milliseconds per filter.
	scalarDirectBudget = 1 << 24
	// histDirectBudget bounds the per-position mask histogram, which
	// costs a few operations per bit and filter.
	histDirectBudget = 1 << 20
)

// Direct-enumeration ratios: the largest lcm enumerated directly, as a
// multiple of the total size of the factors. Enumerating costs about one
// word operation per 64 residues and factor (one operation per residue
// and factor for a histogram); decomposing costs a few operations per bit
// of every factor, so enumeration wins only when the lcm is within a
// small multiple of the sizes (equal or nested sizes).
const (
	scalarDirectRatio = 32
	histDirectRatio   = 4
)

// wordBits is the number of bits per word of a factor's bit array.
const wordBits = 64

// factor is a 0/1 function on Z_n held as a bit array: the bits of one
// filter, or of a filter restricted to a residue class. w has one zero
// word of padding past the last bit so that a 64-bit read starting at any
// x < n stays in range.
type factor struct {
	id   int // the factor's bit in a mask (histogram mode)
	n    uint64
	ones uint64
	w    []uint64
}

// newFactor returns an all-zero factor of n bits.
func newFactor(id int, n uint64) factor {
	return factor{id: id, n: n, w: make([]uint64, n/wordBits+2)}
}

// factorFromBytes returns the factor of a filter's bit array (bit x is
// bit x%8 of byte x/8, as BIP37 addresses it).
func factorFromBytes(id int, data []byte) factor {
	f := newFactor(id, uint64(len(data))*bitsPerByte)
	i := 0
	for ; i+8 <= len(data); i += 8 {
		f.w[i/8] = binary.LittleEndian.Uint64(data[i:])
	}
	for ; i < len(data); i++ {
		f.w[i/8] |= uint64(data[i]) << (8 * (i % 8))
	}
	f.ones = popcount(f.w)
	return f
}

// bit returns bit x (x < n) as 0 or 1.
func (f *factor) bit(x uint64) uint64 {
	return f.w[x/wordBits] >> (x % wordBits) & 1
}

// set sets bit x.
func (f *factor) set(x uint64) {
	f.w[x/wordBits] |= 1 << (x % wordBits)
}

// popcount returns the number of bits set in w.
func popcount(w []uint64) uint64 {
	var n int
	for _, x := range w {
		n += bits.OnesCount64(x)
	}
	return uint64(n)
}

// readBits returns c <= 64 bits of f starting at x, with x+c <= n.
func (f *factor) readBits(x, c uint64) uint64 {
	i, s := x/wordBits, x%wordBits
	v := f.w[i] >> s
	if s != 0 {
		v |= f.w[i+1] << (wordBits - s)
	}
	if c < wordBits {
		v &= 1<<c - 1
	}
	return v
}

// window returns the 64 bits of f tiled periodically, starting at x < n:
// bit b of the result is bit (x+b) mod n of f.
func (f *factor) window(x uint64) uint64 {
	var out uint64
	for got := uint64(0); got < wordBits; {
		c := min(wordBits-got, f.n-x)
		out |= f.readBits(x, c) << got
		got += c
		x += c
		if x == f.n {
			x = 0
		}
	}
	return out
}

// andTiled ANDs f, tiled periodically, into acc, which holds l bits.
func andTiled(acc []uint64, f *factor, l uint64) {
	nw := (l + wordBits - 1) / wordBits
	switch {
	case f.n == l:
		for i := range nw {
			acc[i] &= f.w[i]
		}
	case f.n%wordBits == 0:
		fw := f.n / wordBits
		for i := range nw {
			acc[i] &= f.w[i%fw]
		}
	default:
		x := uint64(0)
		for i := range nw {
			acc[i] &= f.window(x)
			x = (x + wordBits) % f.n
		}
	}
}

// tailMask clears the bits of acc past l.
func tailMask(acc []uint64, l uint64) {
	if r := l % wordBits; r != 0 {
		acc[l/wordBits] &= 1<<r - 1
	}
	for i := (l + wordBits - 1) / wordBits; i < uint64(len(acc)); i++ {
		acc[i] = 0
	}
}

// allOnes returns l bits set, in words, with a zero padding word (so
// that it can serve as a factor's bits).
func allOnes(l uint64) []uint64 {
	acc := make([]uint64, (l+wordBits-1)/wordBits+1)
	for i := range acc {
		acc[i] = ^uint64(0)
	}
	tailMask(acc, l)
	return acc
}

// gcd64 returns the greatest common divisor of a and b.
func gcd64(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// lcmUpTo returns the lcm of the factors' sizes, or 0 when it exceeds
// limit.
func lcmUpTo(fs []factor, limit uint64) uint64 {
	l := uint64(1)
	for i := range fs {
		n := fs[i].n
		q := l / gcd64(l, n)
		if hi, lo := bits.Mul64(q, n); hi != 0 || lo > limit {
			return 0
		}
		l = q * n
	}
	return l
}

// algebra is what the evaluator computes: the probability that every
// factor's bit is set (scalar), or the distribution of the set of factors
// whose bit is set (histogram). V is the value of a sub-problem.
type algebra[V any] interface {
	// budget is the largest lcm enumerated directly, and ratio the
	// largest as a multiple of the factors' total size.
	budget() uint64
	ratio() uint64
	// constant is a factor whose bit is always set (or never).
	constant(id int, set bool) V
	// leaf is a single non-constant factor.
	leaf(f *factor) V
	// direct enumerates the l residues (l = lcm of the sizes).
	direct(fs []factor, l uint64) V
	// one is the value of no factor; zero the value of an empty sum.
	one() V
	zero() V
	// mul combines independent sub-problems over disjoint factors.
	mul(a, b V) V
	// addScaled returns acc + w*v.
	addScaled(acc, v V, w float64) V
	// isZero reports a value that no further factor can change.
	isZero(v V) bool
	// mergeable reports that only the event "every factor's bit is set"
	// matters (the scalar algebra), so factors may be merged: see
	// mergeNested.
	mergeable() bool
}

// evaluate returns the value of the factors under the residue model: h
// uniform over Z_L, L the lcm of their sizes, factor i looking at bit
// h mod n_i. It enumerates when L is within the algebra's budget and
// otherwise decomposes exactly:
//
//   - conditioning on r = h mod g, g the gcd of the sizes: factor i then
//     looks at r + g*(u mod n_i/g) with u uniform mod L/g;
//   - factors whose sizes share no prime are independent (by the Chinese
//     remainder theorem h mod n_i and h mod n_j are then independent
//     uniform): the value is the product over such components;
//   - otherwise conditioning on h mod p^e for a prime p dividing several
//     sizes (p^e its largest power in L): each such factor then looks at
//     the residue of h modulo its size with the power of p removed.
//
// For the scalar algebra the factors are first merged (mergeNested): a
// factor whose size divides another's is ANDed into it, tiled, which is
// exact (bit h mod n of the smaller is bit (h mod m) mod n) and leaves one
// factor per size that divides no other, however many filters share it.
func evaluate[V any, A algebra[V]](a A, fs []factor) V {
	if a.mergeable() {
		fs = mergeNested(fs)
	}
	acc := a.one()
	rest := make([]factor, 0, len(fs))
	for i := range fs {
		f := &fs[i]
		switch f.ones {
		case 0:
			acc = a.mul(acc, a.constant(f.id, false))
			if a.isZero(acc) {
				return acc
			}
		case f.n:
			acc = a.mul(acc, a.constant(f.id, true))
		default:
			rest = append(rest, *f)
		}
	}
	switch len(rest) {
	case 0:
		return acc
	case 1:
		return a.mul(acc, a.leaf(&rest[0]))
	}
	if l := lcmUpTo(rest, directLimit(rest, a.budget(), a.ratio())); l != 0 {
		return a.mul(acc, a.direct(rest, l))
	}
	g := rest[0].n
	for i := range rest[1:] {
		g = gcd64(g, rest[i+1].n)
	}
	if g > 1 {
		parts := restrictResidues(rest, g)
		sum := a.zero()
		for r := range parts {
			sum = a.addScaled(sum, evaluate(a, parts[r]), 1/float64(g))
		}
		return a.mul(acc, sum)
	}
	if comps := components(rest); len(comps) > 1 {
		for _, c := range comps {
			acc = a.mul(acc, evaluate(a, c))
			if a.isZero(acc) {
				return acc
			}
		}
		return acc
	}
	p, q := pivotPrime(rest)
	sum := a.zero()
	for c := range q {
		sum = a.addScaled(sum, evaluate(a, conditionPrime(rest, p, c)), 1/float64(q))
	}
	return a.mul(acc, sum)
}

// directLimit returns the largest lcm worth enumerating for fs: at most
// budget, and at most ratio times the total of the sizes.
func directLimit(fs []factor, budget, ratio uint64) uint64 {
	var total uint64
	for i := range fs {
		total += fs[i].n
	}
	if total > budget/ratio {
		return budget
	}
	return min(budget, ratio*total)
}

// mergeNested returns the factors with every factor whose size divides
// another's ANDed, tiled, into the largest such (equal sizes into one):
// for the event that every factor's bit is set the result is equivalent,
// and its sizes divide one another nowhere. The factors' bit arrays are
// not modified (merged factors are copies); ids are those of the kept
// factors, so the result is only for the scalar algebra.
func mergeNested(fs []factor) []factor {
	if len(fs) < 2 {
		return fs
	}
	order := make([]int, len(fs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(fs[y].n, fs[x].n) })
	var kept []factor
	owned := map[int]bool{} // kept factors whose words are a private copy
	merged := false
	for _, i := range order {
		f := &fs[i]
		into := -1
		for j := range kept {
			if kept[j].n%f.n == 0 {
				into = j
				break
			}
		}
		if into < 0 {
			kept = append(kept, *f)
			continue
		}
		merged = true
		g := &kept[into]
		if !owned[into] {
			g.w = slices.Clone(g.w)
			owned[into] = true
		}
		andTiled(g.w, f, g.n)
		tailMask(g.w, g.n)
	}
	if !merged {
		return fs
	}
	for j := range kept {
		if owned[j] {
			kept[j].ones = popcount(kept[j].w)
		}
	}
	return kept
}

// restrictResidues returns, for every r < g (g dividing every size), the
// factors restricted to the residue class r mod g: bit u of part r's
// factor i is bit r + g*u of fs[i].
func restrictResidues(fs []factor, g uint64) [][]factor {
	parts := make([][]factor, g)
	for r := range parts {
		parts[r] = make([]factor, len(fs))
		for i := range fs {
			parts[r][i] = newFactor(fs[i].id, fs[i].n/g)
		}
	}
	for i := range fs {
		f := &fs[i]
		for x := range f.n {
			if f.bit(x) != 0 {
				p := &parts[x%g][i]
				p.set(x / g)
				p.ones++
			}
		}
	}
	return parts
}

// primeFactors returns the distinct primes dividing n and their
// exponents.
func primeFactors(n uint64) (ps, es []uint64) {
	for p := uint64(2); p*p <= n; p++ {
		if n%p != 0 {
			continue
		}
		e := uint64(0)
		for n%p == 0 {
			n /= p
			e++
		}
		ps, es = append(ps, p), append(es, e)
	}
	if n > 1 {
		ps, es = append(ps, n), append(es, 1)
	}
	return ps, es
}

// components splits the factors into groups whose sizes share no prime
// with any other group's (transitively), in order of first factor.
func components(fs []factor) [][]factor {
	sets := unionfind.New(len(fs))
	owner := map[uint64]int{}
	for i := range fs {
		ps, _ := primeFactors(fs[i].n)
		for _, p := range ps {
			if j, ok := owner[p]; ok {
				sets.Union(i, j)
			} else {
				owner[p] = i
			}
		}
	}
	index := map[int]int{}
	var out [][]factor
	for i := range fs {
		root := sets.Find(i)
		c, ok := index[root]
		if !ok {
			c = len(out)
			index[root] = c
			out = append(out, nil)
		}
		out[c] = append(out[c], fs[i])
	}
	return out
}

// pivotPrime returns the prime dividing the most sizes (ties: the
// smallest largest power) and its largest power q among the sizes.
func pivotPrime(fs []factor) (p, q uint64) {
	count := map[uint64]int{}
	power := map[uint64]uint64{}
	for i := range fs {
		ps, es := primeFactors(fs[i].n)
		for j, pr := range ps {
			count[pr]++
			pe := uint64(1)
			for range es[j] {
				pe *= pr
			}
			power[pr] = max(power[pr], pe)
		}
	}
	for pr, c := range count {
		if p == 0 || c > count[p] || c == count[p] && power[pr] < power[p] {
			p = pr
		}
	}
	return p, power[p]
}

// conditionPrime returns the factors given h ≡ c (mod q), q the largest
// power of the prime p among the sizes: a factor of size n = p^e * m
// (p not dividing m, e >= 1) becomes the factor of size m whose bit v is
// bit x of the original, x the residue mod n with x ≡ c (mod p^e) and
// x ≡ v (mod m). Factors whose size p does not divide are unchanged.
func conditionPrime(fs []factor, p, c uint64) []factor {
	out := make([]factor, len(fs))
	for i := range fs {
		f := &fs[i]
		pe := uint64(1)
		for f.n%(pe*p) == 0 {
			pe *= p
		}
		if pe == 1 {
			out[i] = *f
			continue
		}
		m := f.n / pe
		// x = (c mod pe)*m*inv(m, pe) + v*pe*inv(pe, m)  (mod n).
		c1 := mulMod((c%pe)*m%f.n, modInverse(m%pe, pe), f.n)
		c2 := mulMod(pe, modInverse(pe%m, m), f.n)
		g := newFactor(f.id, m)
		x := c1
		for v := range m {
			if f.bit(x) != 0 {
				g.set(v)
				g.ones++
			}
			x += c2
			if x >= f.n {
				x -= f.n
			}
		}
		out[i] = g
	}
	return out
}

// mulMod returns a*b mod n.
func mulMod(a, b, n uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	_, rem := bits.Div64(hi%n, lo, n)
	return rem
}

// modInverse returns the inverse of a modulo m (a and m coprime); 0 when
// m is 1.
func modInverse(a, m uint64) uint64 {
	if m == 1 {
		return 0
	}
	t, newT := int64(0), int64(1)
	r, newR := int64(m), int64(a)
	for newR != 0 {
		q := r / newR
		t, newT = newT, t-q*newT
		r, newR = newR, r-q*newR
	}
	if t < 0 {
		t += int64(m)
	}
	return uint64(t)
}

// allSet is the scalar algebra: the probability that every factor's bit
// is set.
type allSet struct{ limit uint64 }

func (s allSet) budget() uint64 { return s.limit }
func (allSet) ratio() uint64    { return scalarDirectRatio }

func (allSet) constant(_ int, set bool) float64 {
	if set {
		return 1
	}
	return 0
}

func (allSet) leaf(f *factor) float64 { return float64(f.ones) / float64(f.n) }

func (allSet) direct(fs []factor, l uint64) float64 {
	acc := andAll(fs, l)
	return float64(popcount(acc)) / float64(l)
}

func (allSet) one() float64                                { return 1 }
func (allSet) zero() float64                               { return 0 }
func (allSet) mul(a, b float64) float64                    { return a * b }
func (allSet) addScaled(acc, v float64, w float64) float64 { return acc + w*v }
func (allSet) isZero(v float64) bool                       { return v == 0 }
func (allSet) mergeable() bool                             { return true }

// andAll returns the AND of the factors tiled to l bits (l a multiple of
// every size).
func andAll(fs []factor, l uint64) []uint64 {
	acc := allOnes(l)
	for i := range fs {
		andTiled(acc, &fs[i], l)
	}
	tailMask(acc, l)
	return acc
}

// maskDist is a distribution over the sets of factors whose bit is set,
// keyed by the mask of their ids.
type maskDist map[uint32]float64

// setMasks is the histogram algebra: the distribution of the set of
// factors whose bit is set. Factor ids must be below 32.
type setMasks struct{ limit uint64 }

func (s setMasks) budget() uint64 { return s.limit }
func (setMasks) ratio() uint64    { return histDirectRatio }

func (setMasks) constant(id int, set bool) maskDist {
	if set {
		return maskDist{1 << id: 1}
	}
	return maskDist{0: 1}
}

func (setMasks) leaf(f *factor) maskDist {
	a := float64(f.ones) / float64(f.n)
	return maskDist{0: 1 - a, 1 << f.id: a}
}

func (setMasks) direct(fs []factor, l uint64) maskDist {
	maxID := 0
	for i := range fs {
		maxID = max(maxID, fs[i].id)
	}
	counts := make([]uint64, 2<<maxID)
	x := make([]uint64, len(fs)) // each factor's position at the word's start
	for w := uint64(0); w < l; w += wordBits {
		var masks [wordBits]uint32
		for i := range fs {
			win := fs[i].window(x[i])
			for b := range wordBits {
				masks[b] |= uint32(win>>b&1) << fs[i].id
			}
			x[i] = (x[i] + wordBits) % fs[i].n
		}
		for b := range min(wordBits, l-w) {
			counts[masks[b]]++
		}
	}
	out := maskDist{}
	for m, c := range counts {
		if c != 0 {
			out[uint32(m)] = float64(c) / float64(l)
		}
	}
	return out
}

func (setMasks) one() maskDist  { return maskDist{0: 1} }
func (setMasks) zero() maskDist { return maskDist{} }

func (setMasks) mul(a, b maskDist) maskDist {
	out := make(maskDist, len(a)*len(b))
	for ma, pa := range a {
		for mb, pb := range b {
			out[ma|mb] += pa * pb
		}
	}
	return out
}

func (setMasks) addScaled(acc, v maskDist, w float64) maskDist {
	for m, p := range v {
		acc[m] += w * p
	}
	return acc
}

func (setMasks) isZero(v maskDist) bool { return len(v) == 0 }
func (setMasks) mergeable() bool        { return false }

// rateOfFactors returns the probability that every factor's bit is set.
func rateOfFactors(fs []factor, limit uint64) float64 {
	return evaluate[float64](allSet{limit}, fs)
}

// distOfFactors returns the distribution of the set of factors whose bit
// is set, as a dense slice indexed by mask over ids 0..width-1.
func distOfFactors(fs []factor, width int, limit uint64) []float64 {
	out := make([]float64, 1<<width)
	for m, p := range evaluate[maskDist](setMasks{limit}, fs) {
		out[m] += p
	}
	return out
}

// sortedInsert returns members with i inserted in order (members sorted,
// i absent), as a new slice.
func sortedInsert(members []int, i int) []int {
	at, _ := slices.BinarySearch(members, i)
	return slices.Insert(slices.Clone(members), at, i)
}

// sortedRemove returns members without i, as a new slice.
func sortedRemove(members []int, i int) []int {
	at, ok := slices.BinarySearch(members, i)
	if !ok {
		return slices.Clone(members)
	}
	return slices.Delete(slices.Clone(members), at, at+1)
}

// isSubset reports whether sorted a is a subset of sorted b.
func isSubset(a, b []int) bool {
	j := 0
	for _, x := range a {
		for j < len(b) && b[j] < x {
			j++
		}
		if j == len(b) || b[j] != x {
			return false
		}
		j++
	}
	return true
}

// powRate returns v^e for a probability v and a count e, 0 for v == 0.
func powRate(v float64, e int) float64 {
	if v == 0 {
		return 0
	}
	return math.Pow(v, float64(e))
}

// bitsPerByte converts filter sizes to bits.
const bitsPerByte = 8
