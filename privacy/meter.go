package privacy

import (
	"fmt"
	"math"
	"math/bits"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/transcript"
)

// DefaultMeterHistory is the number of readings a Meter keeps for its
// trend when MeterConfig.History is 0.
const DefaultMeterHistory = 128

// MeterConfig configures a Meter.
type MeterConfig struct {
	// History is the number of readings kept (0: DefaultMeterHistory).
	History int
}

// Reading is the meter's estimate after one transcript record: what the
// peers that received the filters so far can expect to learn, from the
// formulas alone (no scan).
type Reading struct {
	Seq    uint64          `json:"seq"`
	Time   time.Time       `json:"time"`
	Height int32           `json:"height"`
	Peer   string          `json:"peer"`
	Kind   transcript.Kind `json:"kind"`
	Reason string          `json:"reason,omitempty"`
	// Candidates is the universe size |A| the estimate uses.
	Candidates uint64 `json:"candidates"`
	// Members is the wallet size N: the caller's figure, or the latest
	// filter's estimated element count m^.
	Members float64 `json:"members"`
	// EstElements is m^ for the latest filter (-1 when every bit is set).
	EstElements float64 `json:"est_elements"`
	// FPRate is the latest filter's exact rate (X/n)^k.
	FPRate float64 `json:"fp_rate"`
	// ExpectedFP is the false-positive anonymity set of the latest filter
	// alone: f * (|A| - N).
	ExpectedFP float64 `json:"expected_fp"`
	// Filters counts the independent filters sent so far (distinct size,
	// hash count and tweak).
	Filters int `json:"filters"`
	// IntersectionFP is the set left to colluding peers that intersect
	// every filter sent so far: (|A| - N) * prod f_g.
	IntersectionFP float64 `json:"intersection_fp"`
	// Precision and Entropy are the expected precision N/(N+F) and
	// log2 C(N+F, N) for the intersection (the worst case);
	// SinglePrecision and SingleEntropy for the latest filter alone.
	Precision       float64 `json:"precision"`
	Entropy         float64 `json:"entropy_bits"`
	SinglePrecision float64 `json:"single_precision"`
	SingleEntropy   float64 `json:"single_entropy_bits"`
	// Revealed counts the elements sent in clear by filteradd.
	Revealed int `json:"revealed"`
	// IndependentFP is the reference IntersectionFP replaces: the set
	// left if every filter sent so far were independent,
	// (|A| - N) * prod_i f_i (formula 5 for fresh tweaks). It is wrong,
	// by orders of magnitude, for filters that share hash seeds (one
	// tweak), which is what bloomwatch sends.
	IndependentFP float64 `json:"independent_fp"`
	// UniverseSource says, in words, which universe |A| (Candidates) the
	// figures assume and how it was obtained.
	UniverseSource string `json:"universe_source"`
	// AddedElements is the observer's estimate of how many elements the
	// latest filter added over the previous filter of the same tweak and
	// hash count whose size nests with it (bip37.EstimateOverlap's
	// OnlyB), -1 when it cannot be estimated (no such filter, sizes that
	// do not nest, or a saturated union).
	AddedElements float64 `json:"added_elements"`
	// ExpectedTxFPRate is the expected number of false-positive
	// transactions per non-wallet transaction for the latest filter:
	// 1 - (1 - f)^e with e elements tested per transaction (see
	// ElementsPerTx). It is the unit of spv's observed false-positive
	// rate (false positives over non-wallet transactions tested), so the
	// two can be compared side by side; FPRate is per element.
	ExpectedTxFPRate float64 `json:"expected_tx_fp_rate"`
}

// Meter is the live privacy meter: fed every transcript record as it is
// sent and the number of candidate elements on chain so far, it keeps the
// expected anonymity set of the filters sent, and a short trend. It is
// pure and synchronous, not safe for concurrent use; a call costs a
// filter decode and, for the group the record touches, one AND over the
// distinct filters of that group.
type Meter struct {
	history    int
	candidates uint64
	members    float64
	peers      map[string]*meterPeer
	groups     map[groupKey]*meterGroup
	order      []groupKey
	revealed   map[string]bool
	latest     *bip37.Filter
	last       transcript.Record
	readings   []Reading
}

// meterPeer is one peer's current filter.
type meterPeer struct {
	filter *bip37.Filter
	group  *meterGroup
	slot   int // index of the peer's generation in group.states
}

// meterGroup is the filters sharing size, hash count and tweak: they probe
// the same bits, so together they act as the AND of their arrays.
type meterGroup struct {
	states [][]byte // latest bits of each generation in the group
	and    []byte
	k      uint32
}

// NewMeter returns an empty meter.
func NewMeter(cfg MeterConfig) *Meter {
	h := cfg.History
	if h <= 0 {
		h = DefaultMeterHistory
	}
	return &Meter{history: h, peers: map[string]*meterPeer{}, groups: map[groupKey]*meterGroup{}, revealed: map[string]bool{}}
}

// SetCandidates sets the universe size |A|, e.g. about two candidates per
// output script seen on chain so far, and returns the updated reading
// (without adding it to the history).
func (m *Meter) SetCandidates(n uint64) Reading {
	m.candidates = n
	return m.Current()
}

// SetMembers sets the wallet size N when the caller knows it (0 returns to
// estimating it from the latest filter).
func (m *Meter) SetMembers(n float64) {
	m.members = n
}

// Observe feeds one record, as sent, and returns the new reading, which is
// also appended to the history. A filterload whose filter a node would
// reject returns an error wrapping ErrBadFilterRecord and changes nothing.
func (m *Meter) Observe(r transcript.Record) (Reading, error) {
	p := m.peers[r.Peer]
	switch r.Kind {
	case transcript.KindFilterLoad:
		f, err := bip37.Deserialize(r.Filter)
		if err != nil {
			return m.Current(), fmt.Errorf("%w: seq %d: %w", ErrBadFilterRecord, r.Seq, err)
		}
		p = &meterPeer{filter: f}
		m.peers[r.Peer] = p
		if !matchesAll(f) {
			m.join(p)
		}
		m.latest = f
	case transcript.KindFilterAdd:
		m.revealed[string(r.Data)] = true
		if p != nil && p.filter != nil && bip37.CheckFilterAdd(r.Data) == nil {
			p.filter.Add(r.Data)
			if p.group != nil {
				p.group.states[p.slot] = p.filter.Bits()
				p.group.recompute()
			}
			m.latest = p.filter
		}
	case transcript.KindFilterClear:
		if p != nil {
			p.filter = nil
		}
	default:
		return m.Current(), fmt.Errorf("%w: seq %d: unknown kind %q", transcript.ErrBad, r.Seq, r.Kind)
	}
	m.last = r
	rd := m.Current()
	m.readings = append(m.readings, rd)
	if len(m.readings) > m.history {
		m.readings = m.readings[len(m.readings)-m.history:]
	}
	return rd, nil
}

// join adds a peer's new filter to its group.
func (m *Meter) join(p *meterPeer) {
	f := p.filter
	key := groupKey{f.Size(), f.HashFuncs(), f.Tweak()}
	g, ok := m.groups[key]
	if !ok {
		g = &meterGroup{k: f.HashFuncs()}
		m.groups[key] = g
		m.order = append(m.order, key)
	}
	p.group, p.slot = g, len(g.states)
	g.states = append(g.states, f.Bits())
	g.recompute()
}

// recompute ANDs the group's states. A state that equals another adds
// nothing but costs one pass.
func (g *meterGroup) recompute() {
	g.and = append(g.and[:0], g.states[0]...)
	for _, s := range g.states[1:] {
		for i, b := range s {
			g.and[i] &= b
		}
	}
}

// rate returns the group's false-positive rate (X_and/n)^k.
func (g *meterGroup) rate() float64 {
	set := 0
	for _, b := range g.and {
		set += bits.OnesCount8(b)
	}
	return math.Pow(float64(set)/float64(len(g.and)*bitsPerByte), float64(g.k))
}

// Current returns the reading for the records observed so far.
func (m *Meter) Current() Reading {
	r := m.last
	rd := Reading{
		Seq: r.Seq, Time: r.Time, Height: r.Height, Peer: r.Peer, Kind: r.Kind, Reason: r.Reason,
		Candidates: m.candidates, Filters: len(m.order), Revealed: len(m.revealed),
	}
	if m.latest == nil {
		return rd
	}
	rd.EstElements = finiteOr(m.latest.EstimatedElements(), -1)
	rd.FPRate = m.latest.CurrentFPRate()
	rd.Members = m.members
	if rd.Members <= 0 {
		rd.Members = math.Max(rd.EstElements, 0)
	}
	nonMembers := math.Max(float64(m.candidates)-rd.Members, 0)
	rd.ExpectedFP = rd.FPRate * nonMembers
	rate := 1.0
	for _, key := range m.order {
		rate *= m.groups[key].rate()
	}
	rd.IntersectionFP = rate * nonMembers
	rd.SinglePrecision = Precision(rd.Members, rd.ExpectedFP)
	rd.SingleEntropy = Entropy(rd.Members, rd.ExpectedFP)
	rd.Precision = Precision(rd.Members, rd.IntersectionFP)
	rd.Entropy = Entropy(rd.Members, rd.IntersectionFP)
	return rd
}

// History returns the last readings, oldest first (a copy).
func (m *Meter) History() []Reading {
	return append([]Reading(nil), m.readings...)
}

// finiteOr returns v, or alt when v is infinite or NaN.
func finiteOr(v, alt float64) float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return alt
	}
	return v
}
