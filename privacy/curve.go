package privacy

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/bloomwatch/bloomwatch/privacy/stats"
	"github.com/bloomwatch/bloomwatch/transcript"
)

// Stage names of the collapse curves. The set stages stack: each adds one
// technique to the one before it. Saturation is a separate, per-block view
// of the server's copy of the filter.
const (
	StageSingle       = "single"
	StageBothForms    = "both-forms"
	StageIntersection = "intersection"
	StageGraph        = "graph"
	StageSaturation   = "saturation"
)

// Point kinds beyond the transcript's record kinds.
const (
	// KindBlock marks a saturation point: one block of server-side updates.
	KindBlock transcript.Kind = "block"
)

// Point is the adversary's position after one observed event.
type Point struct {
	// Step is the point's position on its curve.
	Step   int             `json:"step"`
	Kind   transcript.Kind `json:"kind"`
	Label  string          `json:"label"`
	Seq    uint64          `json:"seq"`
	Height int32           `json:"height"`
	Peer   string          `json:"peer,omitempty"`
	// Filters is the number of distinct filters the stage combines.
	Filters int `json:"filters"`
	// Scored reports that the wallet's elements were known
	// (Input.Truth): Members and every figure that needs them (true and
	// false positives, precision, recall, entropy, their intervals, the
	// expected precision and entropy, the comparison) are set. Without
	// it they are zero and left out of the JSON (MarshalJSON), and the
	// table and the CSV leave them blank.
	Scored bool `json:"scored"`
	// Members is the wallet size N the precision and entropy formulas
	// use: the wallet's candidates in the universe (Report.Members).
	// Only with the truth: the filter's element estimate m^ counts
	// every element inserted (unused lookahead keys, outpoints, decoys),
	// not the wallet's candidates on chain.
	Members float64 `json:"members"`
	// EstElements is m^ for the latest filter (-1 when every bit is
	// set), EstElementsCI its 95 % interval (normal, from its standard
	// error; nil with it).
	EstElements   float64         `json:"est_elements"`
	EstElementsCI *stats.Interval `json:"est_elements_ci,omitempty"`
	// FPRate is the probability that a one-form non-member survives the
	// stage: for intersection, the joint model's rate of every filter the
	// oldest candidates face (Joint.Rate).
	FPRate float64 `json:"fp_rate"`
	// Matched is the size of the adversary's set: a count over the whole
	// universe, deterministic given it (no interval).
	Matched uint64 `json:"matched"`
	// TruePositives and FalsePositives split Matched when the truth is
	// known; FalsePositives is the measured false-positive anonymity set,
	// FalsePositivesCI the 95 % interval of its mean (Poisson, Garwood:
	// each candidate that is not the wallet's matches on its own hashes,
	// independently of the others).
	TruePositives    uint64          `json:"true_positives"`
	FalsePositives   uint64          `json:"false_positives"`
	FalsePositivesCI *stats.Interval `json:"false_positives_ci,omitempty"`
	// ExpectedFP is the joint model's false-positive anonymity set: per
	// candidate of F forms, Joint.FormsRate(F, every form where the
	// both-forms test applies) times the candidates not known to be the
	// wallet's: every candidate without the truth (f * |A|), the
	// non-members with it (f * (|A| - N)). It is exact under the model
	// except when more than MaxExactFormsFilters filters meet
	// several-form candidates under a mixed test: ExpectedFP is then the
	// upper bound and ExpectedFPLower the lower one (equal otherwise).
	// An expectation, not a measurement: no interval.
	ExpectedFP      float64 `json:"expected_fp"`
	ExpectedFPLower float64 `json:"expected_fp_lower"`
	// Comparison says whether ExpectedFP (the range down to
	// ExpectedFPLower) lies inside the measured count's interval at the
	// run's family-wise level (ComparisonInside or ComparisonOutside:
	// Holm over every comparison the run prints, so an "outside" is a
	// false alarm in at most FamilyAlpha of runs whose model is right);
	// ComparisonNoVerdict where the comparison could hardly fail
	// (ComparisonPower, at the family's Bonferroni level, below
	// MinComparisonPower: a small expectation); empty without the truth
	// and for the graph stage, which the model does not cover.
	// ComparisonPower is the probability that it comes out outside if
	// the model were wrong by a factor of two; ComparisonP the exact
	// two-sided Poisson p-value of the measured count against the
	// expectation, ComparisonPHolm its Holm-adjusted value over the run
	// (set with a verdict only).
	Comparison      string   `json:"comparison,omitempty"`
	ComparisonPower float64  `json:"comparison_power,omitempty"`
	ComparisonP     float64  `json:"comparison_p,omitempty"`
	ComparisonPHolm *float64 `json:"comparison_p_holm,omitempty"`
	// compare marks a point whose comparison joins the run's family.
	compare bool
	// IndependentFP is the reference the joint model replaces: the same
	// count if every filter were independent (formula 5, the product of
	// the filters' rates). It is wrong, by orders of magnitude, for
	// filters that share a tweak.
	IndependentFP float64 `json:"independent_fp"`
	// Precision TP/(TP+FP), Recall TP/N and Entropy log2 C(TP+FP, TP)
	// are measured. N is fixed by the truth and only FP is random, so
	// the precision's and the entropy's 95 % intervals are the ends of
	// the false-positive count's Garwood interval mapped through them
	// (MethodPoissonMapped); the recall is certain (a Bloom filter has no
	// false negatives, and the graph stage prunes deterministically given
	// the chain) and has no interval. ExpectedPrecision and ExpectedEntropy are the
	// model's: E[N/(N+F)] and E[log2 C(N+F, N)] over F ~
	// Poisson(ExpectedFP) (ExpectedPrecision, ExpectedEntropy). All of
	// them only with the truth (Scored).
	Precision         float64         `json:"precision"`
	PrecisionCI       *stats.Interval `json:"precision_ci,omitempty"`
	ExpectedPrecision float64         `json:"expected_precision"`
	Recall            float64         `json:"recall"`
	Entropy           float64         `json:"entropy_bits"`
	EntropyCI         *stats.Interval `json:"entropy_ci,omitempty"`
	ExpectedEntropy   float64         `json:"expected_entropy_bits"`
	// Revealed counts the elements sent in clear by filteradd so far.
	Revealed int `json:"revealed"`
	// Fill is the share of the filter's bits that are set (saturation).
	Fill float64 `json:"fill,omitempty"`
	// TxMatched and TxWallet count, cumulatively over the replayed
	// blocks, the transactions the server sent and those that were the
	// wallet's (saturation).
	TxMatched uint64 `json:"tx_matched,omitempty"`
	TxWallet  uint64 `json:"tx_wallet,omitempty"`
}

// MarshalJSON writes the point, leaving out the figures that need the
// truth when it was not known (Scored false): a zero there would read as
// a measurement.
func (p Point) MarshalJSON() ([]byte, error) {
	type plain Point
	if p.Scored {
		return json.Marshal(plain(p))
	}
	// The outer fields shadow the embedded ones of the same JSON name;
	// nil, they are omitted.
	return json.Marshal(struct {
		plain
		Members           *float64 `json:"members,omitempty"`
		TruePositives     *uint64  `json:"true_positives,omitempty"`
		FalsePositives    *uint64  `json:"false_positives,omitempty"`
		Precision         *float64 `json:"precision,omitempty"`
		ExpectedPrecision *float64 `json:"expected_precision,omitempty"`
		Recall            *float64 `json:"recall,omitempty"`
		Entropy           *float64 `json:"entropy_bits,omitempty"`
		ExpectedEntropy   *float64 `json:"expected_entropy_bits,omitempty"`
	}{plain: plain(p)})
}

// Curve is one stage's collapse curve.
type Curve struct {
	Stage  string  `json:"stage"`
	Points []Point `json:"points"`
}

// csvHeader names the columns WriteCSV writes. A figure that needs the
// truth is blank without it, an interval blank where there is none; each
// interval's _method column names how it was computed (Interval.Method).
var csvHeader = []string{
	"stage", "step", "kind", "label", "seq", "height", "peer", "filters", "scored", "members",
	"est_elements", "est_elements_lo", "est_elements_hi", "est_elements_method", "fp_rate", "matched", "true_positives",
	"false_positives", "false_positives_lo", "false_positives_hi", "false_positives_method", "expected_fp", "expected_fp_lower",
	"comparison", "comparison_power", "comparison_p", "comparison_p_holm", "independent_fp",
	"precision", "precision_lo", "precision_hi", "precision_method", "expected_precision", "recall",
	"entropy_bits", "entropy_lo", "entropy_hi", "entropy_method", "expected_entropy_bits",
	"revealed", "fill", "tx_matched", "tx_wallet",
}

// floatFormat prints floats in CSV with full precision and no exponent
// surprises for spreadsheets.
const (
	floatFormat    = 'g'
	floatPrecision = -1
	floatBits      = 64
	decimal        = 10
)

// WriteCSV writes every point of every curve as one CSV row, with a
// header.
func WriteCSV(w io.Writer, curves []Curve) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	f := func(v float64) string { return strconv.FormatFloat(v, floatFormat, floatPrecision, floatBits) }
	u := func(v uint64) string { return strconv.FormatUint(v, decimal) }
	ci := func(iv *stats.Interval) []string {
		if iv == nil {
			return []string{"", "", ""}
		}
		return []string{f(iv.Lo), f(iv.Hi), iv.Method}
	}
	for _, c := range curves {
		for _, p := range c.Points {
			// Blank unless scored.
			sf := func(v float64) string {
				if !p.Scored {
					return ""
				}
				return f(v)
			}
			su := func(v uint64) string {
				if !p.Scored {
					return ""
				}
				return u(v)
			}
			power, pv, pHolm := "", "", ""
			if p.Scored && p.ComparisonPower > 0 {
				power, pv = f(p.ComparisonPower), f(p.ComparisonP)
			}
			if p.ComparisonPHolm != nil {
				pHolm = f(*p.ComparisonPHolm)
			}
			row := []string{c.Stage, strconv.Itoa(p.Step), string(p.Kind), p.Label, u(p.Seq),
				strconv.Itoa(int(p.Height)), p.Peer, strconv.Itoa(p.Filters), strconv.FormatBool(p.Scored), sf(p.Members),
				f(p.EstElements)}
			row = append(row, ci(p.EstElementsCI)...)
			row = append(row, f(p.FPRate), u(p.Matched), su(p.TruePositives), su(p.FalsePositives))
			row = append(row, ci(p.FalsePositivesCI)...)
			row = append(row, f(p.ExpectedFP), f(p.ExpectedFPLower), p.Comparison, power, pv, pHolm, f(p.IndependentFP), sf(p.Precision))
			row = append(row, ci(p.PrecisionCI)...)
			row = append(row, sf(p.ExpectedPrecision), sf(p.Recall), sf(p.Entropy))
			row = append(row, ci(p.EntropyCI)...)
			row = append(row, sf(p.ExpectedEntropy), strconv.Itoa(p.Revealed), f(p.Fill), u(p.TxMatched), su(p.TxWallet))
			if err := cw.Write(row); err != nil {
				return fmt.Errorf("write csv: %w", err)
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}
