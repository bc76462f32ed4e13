package privacy

import (
	"fmt"
	"math"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/transcript"
)

// DefaultMeterHistory is the number of readings a Meter keeps for its
// trend when MeterConfig.History is 0.
const DefaultMeterHistory = 128

// DefaultElementsPerTx is the number of elements a BIP37 server tests per
// transaction that the meter assumes for ExpectedTxFPRate when
// MeterConfig.ElementsPerTx is 0: the txid, one data push per output and
// one outpoint per input of a two-input, two-output segwit transaction
// (1 + 2 + 2). It is an assumption, not a measurement: legacy inputs add
// their scriptSig pushes (a signature and a public key each), larger
// transactions more outputs and inputs.
const DefaultElementsPerTx = 5

// sourceCaller is the UniverseSource of a universe set by SetCandidates.
const sourceCaller = "set by the caller (no source given)"

// MeterConfig configures a Meter.
type MeterConfig struct {
	// History is the number of readings kept (0: DefaultMeterHistory).
	History int
	// ElementsPerTx is the number of elements tested per transaction
	// that ExpectedTxFPRate assumes (0: DefaultElementsPerTx).
	ElementsPerTx float64
}

// Reading is the meter's estimate after one transcript record: what the
// peers that received the filters so far can expect to learn, from the
// joint model (no scan).
type Reading struct {
	Seq    uint64          `json:"seq"`
	Time   time.Time       `json:"time"`
	Height int32           `json:"height"`
	Peer   string          `json:"peer"`
	Kind   transcript.Kind `json:"kind"`
	Reason string          `json:"reason,omitempty"`
	// Candidates is the universe size |A| the estimate uses; see
	// UniverseSource.
	Candidates uint64 `json:"candidates"`
	// Members is the wallet size N: the caller's figure, or the latest
	// filter's estimated element count m^.
	Members float64 `json:"members"`
	// EstElements is m^ for the latest filter (-1 when every bit is set).
	EstElements float64 `json:"est_elements"`
	// FPRate is the latest filter's exact rate (X/n)^k: the probability
	// that one element that is not the wallet's matches it.
	FPRate float64 `json:"fp_rate"`
	// ExpectedFP is the false-positive anonymity set of the latest filter
	// alone: f * (|A| - N).
	ExpectedFP float64 `json:"expected_fp"`
	// Filters counts the distinct filters sent so far (by content: the
	// same filter sent to several peers counts once; a filter grown by
	// filteradd replaces its generation's earlier state).
	Filters int `json:"filters"`
	// IntersectionRate is the joint model's probability that a random
	// one-form non-member matches every filter sent so far (Joint.Rate):
	// filters that share hash seeds (one tweak) are modelled together,
	// not multiplied.
	IntersectionRate float64 `json:"intersection_rate"`
	// IntersectionFP is the set left to colluding peers that intersect
	// every filter sent so far: (|A| - N) * IntersectionRate.
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
	// hash count (bip37.EstimateOverlap's OnlyB, the larger filter folded
	// onto the smaller size), -1 when it cannot be estimated: no such
	// filter, sizes that do not divide one another, or a saturated
	// union. AddedStdErr is its standard error (-1 with it).
	AddedElements float64 `json:"added_elements"`
	AddedStdErr   float64 `json:"added_stderr"`
	// ExpectedTxFPRate is the expected number of false-positive
	// transactions per non-wallet transaction for the latest filter as
	// sent: 1 - (1 - FPRate)^e, with e elements tested per transaction
	// (MeterConfig.ElementsPerTx, DefaultElementsPerTx = 5 by
	// assumption). It is the unit of spv's observed false-positive rate
	// (false positives over the non-wallet transactions tested), so the
	// two compare side by side; FPRate is per element. The server's copy
	// of the filter only gains bits under BLOOM_UPDATE_ALL, so the
	// observed rate runs at or above this figure.
	ExpectedTxFPRate float64 `json:"expected_tx_fp_rate"`
}

// Meter is the live privacy meter: fed every transcript record as it is
// sent and the universe size, it keeps the expected anonymity set of the
// filters sent under the joint model (one Joint over every distinct
// filter), and a short trend. It is pure and synchronous, not safe for
// concurrent use. Observe costs a filter decode and the joint model's
// update for the filter it touches (Joint.Add or Joint.Update, then one
// Joint.Rate); Current and SetCandidates reuse the cached rates.
type Meter struct {
	history       int
	elementsPerTx float64
	candidates    uint64
	source        string
	members       float64
	peers         map[string]*meterEntry
	joint         *Joint
	entries       []*meterEntry
	byContent     map[string]*meterEntry
	revealed      map[string]bool
	latest        *meterEntry
	last          transcript.Record
	readings      []Reading

	// The cache Current reads, refreshed by Observe.
	rate, independent float64
	added, addedErr   float64
}

// meterEntry is one distinct filter state the adversary holds: the
// latest state of one or more generations (filterloads, each grown by
// its filteradds).
type meterEntry struct {
	idx    int // index in the Joint
	filter *bip37.Filter
	key    string // serialization the entry is indexed by in byContent
	gens   int    // generations whose latest state this is
}

// NewMeter returns an empty meter.
func NewMeter(cfg MeterConfig) *Meter {
	h := cfg.History
	if h <= 0 {
		h = DefaultMeterHistory
	}
	e := cfg.ElementsPerTx
	if !(e > 0) {
		e = DefaultElementsPerTx
	}
	return &Meter{
		history: h, elementsPerTx: e, joint: NewJoint(), rate: 1, independent: 1, added: -1, addedErr: -1,
		peers: map[string]*meterEntry{}, byContent: map[string]*meterEntry{}, revealed: map[string]bool{},
	}
}

// SetCandidates sets the universe size |A| without saying where it comes
// from, and returns the updated reading (without adding it to the
// history). SetUniverse names the source.
func (m *Meter) SetCandidates(n uint64) Reading {
	return m.SetUniverse(n, sourceCaller)
}

// SetUniverse sets the universe size |A| and the words UniverseSource
// reports for it (see UniverseFromTxs, MainnetChainTxData), and returns
// the updated reading (without adding it to the history). It is cheap:
// the rates are cached.
func (m *Meter) SetUniverse(n uint64, source string) Reading {
	m.candidates, m.source = n, source
	return m.Current()
}

// SetMembers sets the wallet size N when the caller knows it (0 returns to
// estimating it from the latest filter).
func (m *Meter) SetMembers(n float64) {
	m.members = n
}

// Observe feeds one record, as sent, and returns the new reading, which is
// also appended to the history. A filterload whose filter a node would
// reject returns an error wrapping ErrBadFilterRecord and changes nothing;
// an unknown kind returns an error wrapping transcript.ErrBad. A getdata
// record changes nothing and adds no reading.
func (m *Meter) Observe(r transcript.Record) (Reading, error) {
	switch r.Kind {
	case transcript.KindGetData:
		// A request changes no filter: the reading stands.
		return m.Current(), nil
	case transcript.KindFilterLoad:
		f, err := bip37.Deserialize(r.Filter)
		if err != nil {
			return m.Current(), fmt.Errorf("%w: seq %d: %w", ErrBadFilterRecord, r.Seq, err)
		}
		m.load(r.Peer, f, string(r.Filter))
	case transcript.KindFilterAdd:
		m.revealed[string(r.Data)] = true
		if e := m.peers[r.Peer]; e != nil && bip37.CheckFilterAdd(r.Data) == nil {
			m.add(r.Peer, e, r.Data)
		}
	case transcript.KindFilterClear:
		delete(m.peers, r.Peer)
	default:
		return m.Current(), fmt.Errorf("%w: seq %d: unknown kind %q", transcript.ErrBad, r.Seq, r.Kind)
	}
	m.last = r
	m.refresh()
	rd := m.Current()
	m.readings = append(m.readings, rd)
	if len(m.readings) > m.history {
		m.readings = m.readings[len(m.readings)-m.history:]
	}
	return rd, nil
}

// load starts a generation on peer with filter f (serialized as key): the
// entry of an identical filter already held, or a new one.
func (m *Meter) load(peer string, f *bip37.Filter, key string) {
	e, ok := m.byContent[key]
	if !ok {
		e = &meterEntry{idx: m.joint.Add(f), filter: f, key: key}
		m.entries = append(m.entries, e)
		m.byContent[key] = e
	}
	e.gens++
	m.peers[peer] = e
	m.latest = e
}

// add applies a filteradd of data to peer's generation, whose latest
// state is e. When other generations share e, the peer's generation
// gets a state of its own; otherwise e grows in place.
func (m *Meter) add(peer string, e *meterEntry, data []byte) {
	if e.gens > 1 {
		f := e.filter.Clone()
		f.Add(data)
		e.gens--
		key := string(f.Serialize())
		ne, ok := m.byContent[key]
		if !ok {
			ne = &meterEntry{idx: m.joint.Add(f), filter: f, key: key}
			m.entries = append(m.entries, ne)
			m.byContent[key] = ne
		}
		ne.gens++
		m.peers[peer], m.latest = ne, ne
		return
	}
	e.filter.Add(data)
	m.joint.Update(e.idx, e.filter)
	if m.byContent[e.key] == e {
		delete(m.byContent, e.key)
	}
	e.key = string(e.filter.Serialize())
	if _, taken := m.byContent[e.key]; !taken {
		m.byContent[e.key] = e
	}
	m.latest = e
}

// refresh recomputes the cached rates and the estimator after a change.
func (m *Meter) refresh() {
	m.rate = m.joint.Rate()
	m.independent = 1
	for _, e := range m.entries {
		if !matchesAll(e.filter) {
			m.independent *= e.filter.CurrentFPRate()
		}
	}
	m.added, m.addedErr = -1, -1
	if m.latest == nil {
		return
	}
	var prev *meterEntry
	for i := len(m.entries) - 1; i >= 0; i-- {
		e := m.entries[i]
		if e != m.latest && e.filter.Tweak() == m.latest.filter.Tweak() &&
			e.filter.HashFuncs() == m.latest.filter.HashFuncs() && e.idx < m.latest.idx {
			prev = e
			break
		}
	}
	if prev == nil {
		return
	}
	if o, err := bip37.EstimateOverlap(prev.filter, m.latest.filter); err == nil {
		_, _, se := o.StdErr()
		m.added, m.addedErr = o.OnlyB(), se
	}
}

// Current returns the reading for the records observed so far. It costs
// no filter pass: the rates are cached by Observe.
func (m *Meter) Current() Reading {
	r := m.last
	rd := Reading{
		Seq: r.Seq, Time: r.Time, Height: r.Height, Peer: r.Peer, Kind: r.Kind, Reason: r.Reason,
		Candidates: m.candidates, UniverseSource: m.source, Filters: len(m.entries), Revealed: len(m.revealed),
		AddedElements: m.added, AddedStdErr: m.addedErr, IntersectionRate: m.rate,
	}
	if m.latest == nil {
		return rd
	}
	f := m.latest.filter
	rd.EstElements = finiteOr(f.EstimatedElements(), -1)
	rd.FPRate = f.CurrentFPRate()
	rd.ExpectedTxFPRate = -math.Expm1(m.elementsPerTx * math.Log1p(-math.Min(rd.FPRate, 1)))
	rd.Members = m.members
	if rd.Members <= 0 {
		rd.Members = math.Max(rd.EstElements, 0)
	}
	nonMembers := math.Max(float64(m.candidates)-rd.Members, 0)
	rd.ExpectedFP = rd.FPRate * nonMembers
	rd.IntersectionFP = m.rate * nonMembers
	rd.IndependentFP = m.independent * nonMembers
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
