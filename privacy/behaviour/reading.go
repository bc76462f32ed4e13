package behaviour

import (
	"fmt"
	"slices"
	"time"

	"github.com/bloomwatch/bloomwatch/privacy/stats"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

// Score is one signal's suspects at one level (blocks or
// transactions), judged against the level's base rate. The figures that
// need the truth are 0 without it (Verdict VerdictNoTruth).
type Score struct {
	Signal string `json:"signal"`
	// Suspects counts the candidates the signal named; Hits those that
	// are the wallet's.
	Suspects int `json:"suspects"`
	Hits     int `json:"hits"`
	// Precision is Hits / Suspects with its 95 % interval (exact
	// binomial, Clopper-Pearson: a proportion over the suspects).
	Precision   float64        `json:"precision"`
	PrecisionCI stats.Interval `json:"precision_ci"`
	// Recall is Hits over the wallet's candidates, with its 95 %
	// interval (exact binomial).
	Recall   float64        `json:"recall"`
	RecallCI stats.Interval `json:"recall_ci"`
	// Chance bounds the precision of Suspects candidates picked at
	// random: the central 95 % range of the hypergeometric count of
	// wallet items among them, over Suspects (MethodHypergeometric). A
	// behaviour that tells a peer nothing beyond its filter lands
	// inside.
	Chance stats.Interval `json:"chance"`
	// PValue is the two-sided exact (hypergeometric) p-value of Hits
	// under a random pick; PHolm its Holm-adjusted value over the run's
	// family of verdicts (the reading's scores in the meter, every
	// comparison of the report in `privacy analyze`), set with a verdict
	// only.
	PValue float64  `json:"p_value"`
	PHolm  *float64 `json:"p_holm,omitempty"`
	// Power is the probability that the test rejects a random pick at
	// the family's Bonferroni level when each suspect is the wallet's
	// with probability halfway between the base rate and 1 (a signal
	// that points): below MinVerdictPower the score prints
	// VerdictNoPower, whatever the hits (one suspect, a chance range up
	// to 1.00, cannot tell).
	Power   float64 `json:"power"`
	Verdict string  `json:"verdict"`
}

// DefaultMaxListed bounds each list of a Detail: the reloads, the
// re-fetches and the suspects.
const DefaultMaxListed = 1000

// MinVerdictPower is the least power a behaviour verdict needs against
// its alternative (see Score.Power) to be printed; the count
// comparisons use MinComparisonPower.
const MinVerdictPower = 0.8

// test returns the score's family test, among n candidates of which w
// are the wallet's (nil for a score with no suspects or no truth, which
// has nothing to test).
func (s *Score) test(n, w int) *stats.Test {
	if s.Suspects == 0 || n == 0 || s.Verdict == VerdictNoTruth || s.Verdict == VerdictNoSuspects {
		return nil
	}
	k := s.Suspects
	p1 := (1 + float64(w)/float64(n)) / 2
	hg := newHypergeometric(n, w, min(k, n))
	mean := hg.mean()
	return &stats.Test{
		P:        s.PValue,
		Power:    func(level float64) float64 { return hg.powerAgainst(k, p1, level) },
		MinPower: MinVerdictPower,
		Decide: func(power float64, adj *float64) {
			s.Power, s.PHolm = power, adj
			switch {
			case adj == nil:
				s.Verdict = VerdictNoPower
			case *adj >= stats.FamilyAlpha:
				s.Verdict = VerdictChance
			case float64(s.Hits) > mean:
				s.Verdict = VerdictPoints
			default:
				s.Verdict = VerdictAvoids
			}
		},
	}
}

// Tests returns the family tests of a reading's scores.
func Tests(r *Reading) []stats.Test {
	var out []stats.Test
	for _, l := range []*Level{&r.Blocks, &r.Txs} {
		for i := range l.Scores {
			if t := l.Scores[i].test(l.Candidates, l.Wallet); t != nil {
				out = append(out, *t)
			}
		}
	}
	return out
}

// Level is the attack at one level: the candidates a peer's
// filter leaves it (blocks in which a peer sent a transaction, or the
// transactions sent), their wallet share (the base rate: a count over
// every candidate, exact, not a sample) and each signal's score.
type Level struct {
	Candidates int     `json:"candidates"`
	Wallet     int     `json:"wallet"`
	BaseRate   float64 `json:"base_rate"`
	// Scores holds one score per signal: SignalReloadTiming,
	// SignalRefetchStart, SignalAny.
	Scores []Score `json:"scores"`
}

// Score returns the score of signal, or a zero score.
func (l Level) Score(signal string) Score {
	for _, s := range l.Scores {
		if s.Signal == signal {
			return s
		}
	}
	return Score{Signal: signal, Verdict: VerdictNoSuspects}
}

// Reading is what the behaviour attack suspects so far: the
// live meter's reading (Reading.Behaviour) and the summary of the
// analyzer's stage (Report).
type Reading struct {
	HasTruth bool `json:"has_truth"`
	// Reloads counts the filterloads to a peer that held a filter;
	// PointingReloads those that added elements (or whose addition could
	// not be estimated); Pointed those of them that found a sending to
	// point at.
	Reloads         int `json:"reloads"`
	PointingReloads int `json:"pointing_reloads"`
	Pointed         int `json:"pointed"`
	// Ambiguous counts the pointing reloads whose latest sending was one
	// block of a batch (see Attack): they name nothing.
	Ambiguous int `json:"ambiguous"`
	// Refetches counts the getdata runs that asked a peer again.
	Refetches int `json:"refetches"`
	// MedianDelay is the median time, in seconds, from the sending a
	// reload pointed at to the reload (-1 without one).
	MedianDelay float64 `json:"median_delay_s"`
	// DroppedTxs counts the transactions sent past MaxTxs,
	// which the candidates and suspects leave out.
	DroppedTxs int   `json:"dropped_txs,omitempty"`
	Blocks     Level `json:"blocks"`
	Txs        Level `json:"txs"`
	// Verdicts is how the scores' verdicts were decided: one family,
	// Holm-corrected, each with a power check (in a Report, the report's
	// family replaces it: Report.Verdicts).
	Verdicts stats.Family `json:"verdicts"`
}

// Reload is one reload as the attack read it.
type Reload struct {
	Peer   string    `json:"peer"`
	Seq    uint64    `json:"seq"`
	Height int32     `json:"height"`
	Time   time.Time `json:"time"`
	// Added and AddedStdErr are the observer's estimate of the elements
	// the reload added (Nested: from the fold; else the net change); -1
	// when it could not be made (Estimated false).
	Added       float64 `json:"added"`
	AddedStdErr float64 `json:"added_stderr"`
	Nested      bool    `json:"nested"`
	Estimated   bool    `json:"estimated"`
	Pointing    bool    `json:"pointing"`
	// Pointer is the height of the block pointed at, -1 for a mempool
	// relay, -2 for none; PointerTxs the transactions named;
	// DelaySeconds the time from that sending to the reload. Ambiguous
	// marks a reload whose latest sending with a transaction was one
	// block of a batch (it names nothing).
	Ambiguous    bool    `json:"ambiguous"`
	Pointer      int32   `json:"pointer"`
	PointerTxs   int     `json:"pointer_txs"`
	DelaySeconds float64 `json:"delay_s"`
}

// Refetch is one run asked again of a peer.
type Refetch struct {
	Peer string    `json:"peer"`
	Seq  uint64    `json:"seq"`
	Time time.Time `json:"time"`
	// From and To are the heights asked again (from the first height
	// asked before); Pointer the first of them with a transaction the
	// peer sent, -2 for none.
	From    int32 `json:"from"`
	To      int32 `json:"to"`
	Pointer int32 `json:"pointer"`
}

// SuspectBlock is a block the attack names.
type SuspectBlock struct {
	Height  int32    `json:"height"`
	Signals []string `json:"signals"`
	Wallet  bool     `json:"wallet"`
}

// SuspectTx is a transaction the attack names (Height -1 when it was
// only seen relayed).
type SuspectTx struct {
	Txid    string   `json:"txid"`
	Height  int32    `json:"height"`
	Signals []string `json:"signals"`
	Wallet  bool     `json:"wallet"`
}

// Detail is the attack's full account: each reload and re-fetch
// and every suspect (lists truncated at a limit).
type Detail struct {
	ReloadList    []Reload       `json:"reload_list"`
	RefetchList   []Refetch      `json:"refetch_list"`
	SuspectBlocks []SuspectBlock `json:"suspect_blocks"`
	SuspectTxs    []SuspectTx    `json:"suspect_txs"`
	// Truncated reports lists cut at the limit.
	Truncated bool `json:"truncated"`
}

// Signal bits of a suspect.
const (
	bitTiming uint8 = 1 << iota
	bitRefetch
)

// signalsOf names the signals of a suspect's bits.
func signalsOf(bits uint8) []string {
	var out []string
	if bits&bitTiming != 0 {
		out = append(out, SignalReloadTiming)
	}
	if bits&bitRefetch != 0 {
		out = append(out, SignalRefetchStart)
	}
	return out
}

// Reading returns what the attack suspects so far, scored against the
// truth it was fed.
func (b *Attack) Reading() Reading {
	r, _ := b.compute(false, 0)
	return r
}

// Detail returns the reading and every reload, re-fetch and suspect,
// each list cut at limit (0: DefaultMaxListed).
func (b *Attack) Detail(limit int) (Reading, Detail) {
	if limit <= 0 {
		limit = DefaultMaxListed
	}
	return b.compute(true, limit)
}

// compute resolves every pointer and scores the suspects.
func (b *Attack) compute(detail bool, limit int) (Reading, Detail) {
	b.changes = 0
	r := Reading{HasTruth: b.truth, Reloads: len(b.reloads), Refetches: len(b.refetch), MedianDelay: -1,
		DroppedTxs: b.dropped}
	var d Detail
	blocks := map[int32]uint8{}
	txs := map[chainhash.Hash]uint8{}
	name := func(h int32, sent []SentTx, bit uint8) {
		if h >= 0 {
			blocks[h] |= bit
		}
		for _, tx := range sent {
			txs[tx.ID] |= bit
			if c := b.txs[tx.ID]; h < 0 && c != nil && c.height >= 0 {
				blocks[c.height] |= bit // the block that confirmed a relay
			}
		}
	}
	var delays []float64
	for _, rl := range b.reloads {
		row := Reload{Peer: rl.peer, Seq: rl.seq, Height: rl.height, Time: rl.at, Added: rl.added,
			AddedStdErr: rl.addedErr, Nested: rl.nested, Estimated: rl.estimated, Pointing: rl.pointing,
			Pointer: -2, DelaySeconds: -1}
		if rl.pointing {
			r.PointingReloads++
			ptr, state := b.pointer(rl)
			if state == pointerAmbiguous {
				r.Ambiguous++
				row.Ambiguous = true
			}
			if state == pointerFound {
				r.Pointed++
				name(ptr.height, ptr.txs, bitTiming)
				row.Pointer, row.PointerTxs = ptr.height, len(ptr.txs)
				if !ptr.at.IsZero() && !rl.at.IsZero() {
					row.DelaySeconds = rl.at.Sub(ptr.at).Seconds()
					delays = append(delays, row.DelaySeconds)
				}
			}
		}
		if detail && len(d.ReloadList) < limit {
			d.ReloadList = append(d.ReloadList, row)
		}
	}
	for _, f := range b.refetch {
		row := Refetch{Peer: f.peer, Seq: f.seq, Time: f.at, From: f.from, To: f.to, Pointer: -2}
		p := b.peers[f.peer]
		if h, ok := p.matchedIn(f.from, f.to, false); ok {
			name(h, p.sentTxs(h), bitRefetch)
			row.Pointer = h
		}
		if detail && len(d.RefetchList) < limit {
			d.RefetchList = append(d.RefetchList, row)
		}
	}
	d.Truncated = detail && (len(b.reloads) > limit || len(b.refetch) > limit)
	if len(delays) > 0 {
		slices.Sort(delays)
		r.MedianDelay = delays[len(delays)/2]
		if len(delays)%2 == 0 {
			r.MedianDelay = (delays[len(delays)/2-1] + delays[len(delays)/2]) / 2
		}
	}
	r.Blocks = b.blockLevel(blocks)
	r.Txs = b.txLevel(txs)
	r.Verdicts = stats.DecideFamily(Tests(&r))
	if detail {
		d.SuspectBlocks, d.SuspectTxs = b.listSuspects(blocks, txs, limit, &d.Truncated)
	}
	return r, d
}

// blockLevel scores the suspect blocks.
func (b *Attack) blockLevel(sus map[int32]uint8) Level {
	l := Level{Candidates: len(b.blocks)}
	for _, w := range b.blocks {
		if w {
			l.Wallet++
		}
	}
	hits := map[uint8][2]int{} // bits -> suspects, hits
	for h, bits := range sus {
		c := hits[bits]
		c[0]++
		if b.blocks[h] {
			c[1]++
		}
		hits[bits] = c
	}
	b.scoreLevel(&l, hits)
	return l
}

// txLevel scores the suspect transactions.
func (b *Attack) txLevel(sus map[chainhash.Hash]uint8) Level {
	l := Level{Candidates: len(b.txs)}
	for _, c := range b.txs {
		if c.wallet {
			l.Wallet++
		}
	}
	hits := map[uint8][2]int{}
	for id, bits := range sus {
		c := hits[bits]
		c[0]++
		if t := b.txs[id]; t != nil && t.wallet {
			c[1]++
		}
		hits[bits] = c
	}
	b.scoreLevel(&l, hits)
	return l
}

// scoreLevel fills a level's base rate and scores from the suspects
// counted by signal bits.
func (b *Attack) scoreLevel(l *Level, byBits map[uint8][2]int) {
	if l.Candidates > 0 {
		l.BaseRate = float64(l.Wallet) / float64(l.Candidates)
	}
	for _, sig := range []struct {
		name string
		mask uint8
	}{{SignalReloadTiming, bitTiming}, {SignalRefetchStart, bitRefetch}, {SignalAny, bitTiming | bitRefetch}} {
		var suspects, hits int
		for bits, c := range byBits {
			if bits&sig.mask != 0 {
				suspects += c[0]
				hits += c[1]
			}
		}
		l.Scores = append(l.Scores, b.score(sig.name, suspects, hits, l.Candidates, l.Wallet))
	}
}

// score judges suspects with hits among n candidates, w the wallet's.
func (b *Attack) score(signal string, suspects, hits, n, w int) Score {
	s := Score{Signal: signal, Suspects: suspects}
	switch {
	case suspects == 0:
		s.Verdict = VerdictNoSuspects
		return s
	case !b.truth:
		s.Verdict = VerdictNoTruth
		return s
	}
	s.Hits = hits
	s.Precision = float64(hits) / float64(suspects)
	s.PrecisionCI = stats.BinomialInterval(uint64(hits), uint64(suspects), stats.ConfidenceLevel)
	s.RecallCI = stats.BinomialInterval(0, 0, stats.ConfidenceLevel)
	if w > 0 {
		s.Recall = float64(hits) / float64(w)
		s.RecallCI = stats.BinomialInterval(uint64(min(hits, w)), uint64(w), stats.ConfidenceLevel)
	}
	hg := newHypergeometric(n, w, min(suspects, n))
	lo, hi := hg.central(behaviourTail)
	s.Chance = stats.Interval{Lo: float64(lo) / float64(suspects), Hi: float64(hi) / float64(suspects), Method: MethodHypergeometric}
	s.PValue = hg.pValue(hits)
	// The verdict is the family's (stats.DecideFamily over the reading).
	s.Verdict = VerdictNoPower
	return s
}

// listSuspects lists the suspects, oldest first, cut at limit.
func (b *Attack) listSuspects(blocks map[int32]uint8, txs map[chainhash.Hash]uint8, limit int, truncated *bool) ([]SuspectBlock, []SuspectTx) {
	sb := make([]SuspectBlock, 0, min(len(blocks), limit))
	hs := make([]int32, 0, len(blocks))
	for h := range blocks {
		hs = append(hs, h)
	}
	slices.Sort(hs)
	for _, h := range hs {
		if len(sb) == limit {
			*truncated = true
			break
		}
		sb = append(sb, SuspectBlock{Height: h, Signals: signalsOf(blocks[h]), Wallet: b.blocks[h]})
	}
	ids := make([]chainhash.Hash, 0, len(txs))
	for id := range txs {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(x, y chainhash.Hash) int {
		hx, hy := b.txs[x].height, b.txs[y].height
		if hx != hy {
			return int(hx) - int(hy)
		}
		return compareHash(x, y)
	})
	st := make([]SuspectTx, 0, min(len(ids), limit))
	for _, id := range ids {
		if len(st) == limit {
			*truncated = true
			break
		}
		c := b.txs[id]
		st = append(st, SuspectTx{Txid: id.String(), Height: c.height, Signals: signalsOf(txs[id]), Wallet: c.wallet})
	}
	return sb, st
}

// String summarizes a score in one line.
func (s Score) String() string {
	switch s.Verdict {
	case VerdictNoSuspects, VerdictNoTruth:
		return fmt.Sprintf("%s: %d suspects (%s)", s.Signal, s.Suspects, s.Verdict)
	case VerdictNoPower:
		return fmt.Sprintf("%s: %d of %d suspects the wallet's, precision %.2f vs %.2f-%.2f by chance: %s",
			s.Signal, s.Hits, s.Suspects, s.Precision, s.Chance.Lo, s.Chance.Hi, s.NoPowerText())
	}
	return fmt.Sprintf("%s: %d of %d suspects the wallet's, precision %.2f [%.2f, %.2f] vs %.2f-%.2f by chance: %s",
		s.Signal, s.Hits, s.Suspects, s.Precision, s.PrecisionCI.Lo, s.PrecisionCI.Hi, s.Chance.Lo, s.Chance.Hi, s.Verdict)
}

// NoPowerText is the words of VerdictNoPower for the score: how many
// suspects, and that they cannot tell (with the test's power).
func (s Score) NoPowerText() string {
	what := "suspects cannot"
	if s.Suspects == 1 {
		what = "suspect cannot"
	}
	return fmt.Sprintf("%s: %d %s tell (power %.2f)", VerdictNoPower, s.Suspects, what, s.Power)
}
