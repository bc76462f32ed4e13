package privacy

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/behaviour"
	"github.com/bloomwatch/bloomwatch/privacy/joint"
	"github.com/bloomwatch/bloomwatch/privacy/onpath"
	"github.com/bloomwatch/bloomwatch/privacy/replay"
	"github.com/bloomwatch/bloomwatch/privacy/stats"
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
	// FPRate is the client's false-positive target, which the on-path
	// observer is assumed to know (0: filterpolicy.DefaultFPRate).
	FPRate float64
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
	// Candidates is the universe size |A| the estimate uses: scripts on
	// chain (see UniverseSource).
	Candidates uint64 `json:"candidates"`
	// WalletKnown reports that the client handed the meter its wallet's
	// counts (SetWallet). Without them the meter knows no N: the
	// expected false positives are every candidate's chance match
	// (f * |A|), and Members, the precision and the entropy are zero and
	// left out of the JSON.
	WalletKnown bool `json:"wallet_known"`
	// Members is the wallet size N the precision and entropy use: the
	// wallet's addresses and scripts that received a payment
	// (WalletCounts.OnChain), its candidates in the script universe.
	// Watched counts every address and script watched (unused lookahead
	// included: in the filter, on no chain), Elements what the filter
	// holds for the wallet (one push per watched script and the
	// unspent outpoints), Decoys the decoys beside them
	// (WalletCounts).
	Members  int `json:"members"`
	Watched  int `json:"watched"`
	Elements int `json:"elements"`
	Decoys   int `json:"decoys"`
	// EstElements is m^ for the latest filter (-1 when every bit is set):
	// what an observer estimates the filter holds, elements of every
	// kind, not N. EstElementsCI is its 95 % interval (normal, from its
	// standard error; nil with -1).
	EstElements   float64         `json:"est_elements"`
	EstElementsCI *stats.Interval `json:"est_elements_ci,omitempty"`
	// FPRate is the latest filter's exact rate (X/n)^k: the probability
	// that one element that is not the wallet's matches it.
	FPRate float64 `json:"fp_rate"`
	// ExpectedFP is the false-positive anonymity set of the latest filter
	// alone: the decoys, which match for certain, plus f times the other
	// candidates, D + f * (|A| - N - D) (f * |A| without the wallet's
	// counts).
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
	// every filter sent so far: D + (|A| - N - D) * IntersectionRate
	// (persisted decoys are in every filter).
	IntersectionFP float64 `json:"intersection_fp"`
	// Precision and Entropy are the expected precision E[N/(N+F)] and
	// entropy E[log2 C(N+F, N)] for the intersection (the worst case),
	// over the false-positive count F ~ D + Poisson(IntersectionFP - D)
	// (ExpectedPrecision, ExpectedEntropy); SinglePrecision and
	// SingleEntropy for the latest filter alone. Only with the wallet's
	// counts (WalletKnown).
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
	// Behaviour is what the behaviour attack suspects so far, scored
	// against the client's own truth (Meter.ObserveSent); nil before
	// any request or sending was observed.
	Behaviour *behaviour.Reading `json:"behaviour,omitempty"`
	// ExpectedTxFP is the expected number of false-positive
	// transactions among the ObservedTxTested transactions: for each
	// block's, the per-transaction rate 1 - (1 - f)^e of the filter sent
	// most recently when the block was applied (f its exact rate, e
	// elements tested per transaction: MeterConfig.ElementsPerTx,
	// DefaultElementsPerTx = 5 by assumption). ExpectedTxFPRate is
	// ExpectedTxFP / ObservedTxTested, the same quantity as the observed
	// rate (the same transactions under the same filters); before a
	// transaction was tested it is the latest filter's per-transaction
	// rate. FPRate is per element.
	ExpectedTxFP     float64 `json:"expected_tx_fp"`
	ExpectedTxFPRate float64 `json:"expected_tx_fp_rate"`
	// ObservedTxFP and ObservedTxTested are the false-positive
	// transactions the client received and the transactions it tested
	// that were not its own (SetObserved): ObservedTxFPRate is their
	// ratio, a sample, with ObservedTxFPCI its 95 % interval (binomial,
	// Clopper-Pearson; nil before a transaction was tested). Beyond
	// chance, the expectation departs from it where a transaction offers
	// more or fewer random elements than ElementsPerTx assumes (a
	// script every transaction pays, such as one funder's change, is one
	// fixed element, not a fresh one each time), and under
	// BLOOM_UPDATE_ALL the peer's copy of the filter gains bits the
	// expectation does not count.
	ObservedTxFP     uint64          `json:"observed_tx_fp"`
	ObservedTxTested uint64          `json:"observed_tx_tested"`
	ObservedTxFPRate float64         `json:"observed_tx_fp_rate"`
	ObservedTxFPCI   *stats.Interval `json:"observed_tx_fp_ci,omitempty"`
	// OnPath is what an observer on the path of every connection (an
	// ISP, a Wi-Fi operator) learned so far, beside the peers' figures
	// above: every filter sent over v1, only sizes over v2 (OnPath).
	OnPath onpath.Reading `json:"on_path"`
	// CF is what the BIP157/158 peers learned, in a session over BIP158
	// (nil over BIP37): the client sets it beside the meter's figures,
	// which then describe no filter sent.
	CF *CFReading `json:"compact_filters,omitempty"`
}

// MarshalJSON writes the reading, leaving out the figures that need the
// wallet's counts when the meter had none (WalletKnown false).
func (rd Reading) MarshalJSON() ([]byte, error) {
	type plain Reading
	if rd.WalletKnown {
		return json.Marshal(plain(rd))
	}
	return json.Marshal(struct {
		plain
		Members         *int     `json:"members,omitempty"`
		Watched         *int     `json:"watched,omitempty"`
		Elements        *int     `json:"elements,omitempty"`
		Decoys          *int     `json:"decoys,omitempty"`
		Precision       *float64 `json:"precision,omitempty"`
		Entropy         *float64 `json:"entropy_bits,omitempty"`
		SinglePrecision *float64 `json:"single_precision,omitempty"`
		SingleEntropy   *float64 `json:"single_entropy_bits,omitempty"`
	}{plain: plain(rd)})
}

// WalletCounts is what the client knows of its own wallet (SetWallet).
// The meter's universe |A| counts scripts on chain, so the wallet's size
// in it, N, is the number of its addresses and scripts that received a
// payment: an unused lookahead address is in the filter (Elements) but
// on no chain, and no observer can find it; outpoints are filter
// elements, not candidate scripts. The filter's own element estimate m^
// counts every element inserted (the watched scripts, gap included, and
// the unspent outpoints), and is what an observer without the truth
// would guess, not N.
type WalletCounts struct {
	// OnChain is N: the watched addresses and scripts that received a
	// payment (wallet.AddressCounts.Used).
	OnChain int
	// Watched counts every watched address and script, derived (gap
	// included) and imported.
	Watched int
	// Elements counts what the filter holds for the wallet: one push per
	// watched script and every unspent outpoint (spv.Elements.Len).
	Elements int
	// Decoys counts the decoys the filters hold beside the wallet's
	// elements (sync --decoys): scripts on chain in every filter, which
	// an observer finds as false positives for certain.
	Decoys int
}

// Meter is the live privacy meter: fed every transcript record as it is
// sent and the universe size, it keeps the expected anonymity set of the
// filters sent under the joint model (one Joint over every distinct
// filter), and a short trend. It is pure and synchronous, not safe for
// concurrent use. Observe costs the joint model's update for the filter it
// touches (Joint.Add or Joint.Update, then one Joint.Rate), not a decode:
// a record's filter is decoded once, by whoever read or sent it
// (transcript.Record.Bloom). The reading is computed when it is read
// (Current, and the history's reading of each filter record): the setters,
// Feed and the other observers record what they are handed and compute
// nothing, so a caller fed many events reads once for all of them.
type Meter struct {
	history       int
	elementsPerTx float64
	candidates    uint64
	source        string
	wallet        WalletCounts
	walletKnown   bool
	obsFP         uint64
	obsTested     uint64
	obsExpected   float64
	peers         map[string]*meterEntry
	joint         *joint.Joint
	entries       []*meterEntry
	byContent     map[string]*meterEntry
	revealed      map[string]bool
	latest        *meterEntry
	last          transcript.Record
	readings      []Reading
	onPath        *onpath.Observer
	behave        meterBehaviour

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
		history: h, elementsPerTx: e, joint: joint.NewJoint(), rate: 1, independent: 1, added: -1, addedErr: -1,
		onPath: onpath.NewObserver(cfg.FPRate),
		peers:  map[string]*meterEntry{}, byContent: map[string]*meterEntry{}, revealed: map[string]bool{},
	}
}

// SetCandidates sets the universe size |A| without saying where it comes
// from; the next Current has it. SetUniverse names the source.
func (m *Meter) SetCandidates(n uint64) {
	m.SetUniverse(n, sourceCaller)
}

// SetUniverse sets the universe size |A| and the words UniverseSource
// reports for it (see element.UniverseFromTxs, element.MainnetChainTxData); the next
// Current has them.
func (m *Meter) SetUniverse(n uint64, source string) {
	m.candidates, m.source = n, source
}

// SetWallet hands the meter the wallet's own counts (the client knows
// them exactly; see WalletCounts for which count is N); the next Current
// has them.
func (m *Meter) SetWallet(c WalletCounts) {
	m.wallet, m.walletKnown = c, true
}

// SetObserved sets the false-positive transactions the client received
// and the transactions that were not its own it tested, so far; the next
// Current has them. The client calls it after each block it applies: the transactions tested
// since the last call were served under the filter sent most recently,
// so each adds that filter's per-transaction rate to the expectation
// (ExpectedTxFP), and the expectation and the observed count cover the
// same transactions under the same filters. A count lower than the last
// (a new session) starts both afresh.
func (m *Meter) SetObserved(falsePositives, tested uint64) {
	if tested < m.obsTested {
		m.obsTested, m.obsExpected = 0, 0
	}
	m.obsExpected += float64(tested-m.obsTested) * m.txRate()
	m.obsFP, m.obsTested = falsePositives, tested
}

// txRate is the latest filter's per-transaction false-positive rate
// 1 - (1 - f)^e, e elements tested per transaction (0 before a filter:
// a peer without one sends no transaction).
func (m *Meter) txRate() float64 {
	if m.latest == nil {
		return 0
	}
	f := math.Min(m.latest.filter.CurrentFPRate(), 1)
	return -math.Expm1(m.elementsPerTx * math.Log1p(-f))
}

// Observe feeds one record, as sent (Feed), and returns the new reading
// (Current).
func (m *Meter) Observe(r transcript.Record) (Reading, error) {
	err := m.Feed(r)
	return m.Current(), err
}

// Feed feeds one record, as sent. A filter record brings the model up to
// date and appends its reading to the history; a getdata record changes
// no filter and adds no reading (the behaviour attack and the on-path
// observer read it), and computes nothing: the next Current has it. A
// filterload whose filter a node would reject returns an error wrapping
// ErrBadFilterRecord and changes nothing; an unknown kind returns an
// error wrapping transcript.ErrBad.
func (m *Meter) Feed(r transcript.Record) error {
	m.onPath.Observe(r)
	if r.Kind == transcript.KindGetData {
		m.behave.observe(r)
		return nil
	}
	if err := m.fold(r); err != nil {
		return err
	}
	m.refresh()
	m.record()
	return nil
}

// Restore feeds the records an earlier run sent (a transcript read at
// start-up), in order, as Observe would one by one, but brings the model
// up to date once, after the last: the state, Current and the next
// readings are those of Observe record by record, and History holds the
// final reading only (not one per record). A record Observe would refuse
// is skipped; the first such error is returned with the reading.
func (m *Meter) Restore(recs []transcript.Record) (Reading, error) {
	var first error
	folded := false
	for _, r := range recs {
		m.onPath.Observe(r)
		if r.Kind == transcript.KindGetData {
			m.behave.observe(r)
			continue
		}
		if err := m.fold(r); err != nil {
			first = cmp.Or(first, err)
			continue
		}
		folded = true
	}
	if !folded {
		return m.Current(), first
	}
	m.refresh()
	return m.record(), first
}

// fold applies one filter record to the filters held, without bringing
// the model up to date (refresh). A record it refuses changes nothing.
func (m *Meter) fold(r transcript.Record) error {
	switch r.Kind {
	case transcript.KindFilterLoad:
		f, err := r.Bloom() // shared with the record's other readers: never modified here
		if err != nil {
			return fmt.Errorf("%w: seq %d: %w", replay.ErrBadFilterRecord, r.Seq, err)
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
		return fmt.Errorf("%w: seq %d: unknown kind %q", transcript.ErrBad, r.Seq, r.Kind)
	}
	m.behave.observe(r)
	m.last = r
	return nil
}

// record appends the current reading to the history and returns it.
func (m *Meter) record() Reading {
	rd := m.Current()
	m.readings = append(m.readings, rd)
	if len(m.readings) > m.history {
		m.readings = m.readings[len(m.readings)-m.history:]
	}
	return rd
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
	// A filter from a record is shared (transcript.Record.Bloom): the
	// grown state is a copy.
	e.filter = e.filter.Clone()
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
		if !replay.MatchesAll(e.filter) {
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

// Current computes the reading for everything observed so far. It costs
// no filter pass (the rates are cached by Feed), but the intervals and
// the expected entropies: read it once for a batch of events.
func (m *Meter) Current() Reading {
	r := m.last
	rd := Reading{
		Seq: r.Seq, Time: r.Time, Height: r.Height, Peer: r.Peer, Kind: r.Kind, Reason: r.Reason,
		Candidates: m.candidates, UniverseSource: m.source, Filters: len(m.entries), Revealed: len(m.revealed),
		AddedElements: m.added, AddedStdErr: m.addedErr, IntersectionRate: m.rate,
		ObservedTxFP: m.obsFP, ObservedTxTested: m.obsTested, Behaviour: m.behave.reading(false),
	}
	if m.walletKnown {
		rd.WalletKnown = true
		rd.Members, rd.Watched, rd.Elements, rd.Decoys = m.wallet.OnChain, m.wallet.Watched, m.wallet.Elements, m.wallet.Decoys
	}
	if m.obsTested > 0 {
		rd.ObservedTxFPRate = float64(m.obsFP) / float64(m.obsTested)
		ci := stats.BinomialInterval(min(m.obsFP, m.obsTested), m.obsTested, stats.ConfidenceLevel)
		rd.ObservedTxFPCI = &ci
	}
	rd.OnPath = m.onPath.Reading(m.candidates, m.walletKnown, m.wallet.OnChain, m.wallet.Decoys)
	if m.latest == nil {
		return rd
	}
	f := m.latest.filter
	rd.EstElements = finiteOr(f.EstimatedElements(), -1)
	rd.EstElementsCI = estElementsInterval(f)
	rd.FPRate = f.CurrentFPRate()
	rd.ExpectedTxFPRate = m.txRate()
	if m.obsTested > 0 {
		rd.ExpectedTxFP = m.obsExpected
		rd.ExpectedTxFPRate = m.obsExpected / float64(m.obsTested)
	}
	// Candidates not known to be the wallet's or a decoy: each matches
	// by chance.
	others := float64(m.candidates)
	decoys := 0.0
	if m.walletKnown {
		decoys = float64(min(uint64(m.wallet.Decoys), m.candidates))
		others = math.Max(others-float64(m.wallet.OnChain)-decoys, 0)
	}
	rd.ExpectedFP = decoys + rd.FPRate*others
	rd.IntersectionFP = decoys + m.rate*others
	rd.IndependentFP = decoys + m.independent*others
	if m.walletKnown {
		n := float64(m.wallet.OnChain)
		rd.SinglePrecision = stats.ExpectedPrecision(n, decoys, rd.FPRate*others)
		rd.SingleEntropy = stats.ExpectedEntropy(n, decoys, rd.FPRate*others)
		rd.Precision = stats.ExpectedPrecision(n, decoys, m.rate*others)
		rd.Entropy = stats.ExpectedEntropy(n, decoys, m.rate*others)
	}
	return rd
}

// History returns the last readings, oldest first (a copy).
func (m *Meter) History() []Reading {
	return append([]Reading(nil), m.readings...)
}

// ObserveBlock feeds the on-path observer one delivered filtered block:
// matched transactions (false positives included) and the wallet's among
// them. The reading stands; the next Current has it.
func (m *Meter) ObserveBlock(matched, relevant int) {
	m.onPath.ObserveBlock(matched, relevant)
}

// ObserveSent feeds one transaction a peer sent the client: in the
// filtered block at height, or relayed from its mempool (height -1) at
// time at, which every peer holding a filter is taken to have announced
// (behaviour.Attack.RelayedByAll). tx.Wallet is the client's own verdict (relevant, not a false
// positive), false when not judged yet: a transaction fed again with
// Wallet set becomes the wallet's. The behaviour attack
// (Reading.Behaviour) sets what the peers sent against the client's
// reloads and requests, as the peer would; the reading is refreshed at
// the next filterload, every behaviourRefreshEvery sendings, or by
// Settle.
func (m *Meter) ObserveSent(at time.Time, peer string, height int32, tx behaviour.SentTx) {
	m.behave.active = true
	b := m.behave.attack()
	if height >= 0 {
		b.Sent(peer, height, []behaviour.SentTx{tx})
		return
	}
	b.RelayedByAll(at, []behaviour.SentTx{tx})
}

// Settle returns the current reading with the behaviour attack
// recomputed from everything observed (Current may show one a few
// sendings old).
func (m *Meter) Settle() Reading {
	m.behave.reading(true)
	return m.Current()
}
