package privacy

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

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
	// Members is the wallet size N the formulas use: the wallet's
	// candidates in the universe when the truth is known, else the
	// element count estimated from the latest filter's bits.
	Members float64 `json:"members"`
	// EstElements is m^ for the latest filter.
	EstElements float64 `json:"est_elements"`
	// FPRate is the probability that a one-form non-member survives the
	// stage: for intersection, the joint model's rate of every filter the
	// oldest candidates face (Joint.Rate).
	FPRate float64 `json:"fp_rate"`
	// Matched is the size of the adversary's set.
	Matched uint64 `json:"matched"`
	// TruePositives and FalsePositives split Matched when the truth is
	// known; FalsePositives is the measured false-positive anonymity set.
	TruePositives  uint64 `json:"true_positives"`
	FalsePositives uint64 `json:"false_positives"`
	// ExpectedFP is the joint model's false-positive anonymity set: per
	// candidate of F forms, Joint.FormsRate(F, every form where the
	// both-forms test applies) times the non-members. It is exact under
	// the model except when more than MaxExactFormsFilters filters meet
	// several-form candidates under a mixed test: ExpectedFP is then the
	// upper bound and ExpectedFPLower the lower one (equal otherwise).
	ExpectedFP      float64 `json:"expected_fp"`
	ExpectedFPLower float64 `json:"expected_fp_lower"`
	// IndependentFP is the reference the joint model replaces: the same
	// count if every filter were independent (formula 5, the product of
	// the filters' rates). It is wrong, by orders of magnitude, for
	// filters that share a tweak.
	IndependentFP float64 `json:"independent_fp"`
	// Precision, Recall and Entropy are measured (0 without the truth);
	// the Expected ones come from the formulas.
	Precision         float64 `json:"precision"`
	ExpectedPrecision float64 `json:"expected_precision"`
	Recall            float64 `json:"recall"`
	Entropy           float64 `json:"entropy_bits"`
	ExpectedEntropy   float64 `json:"expected_entropy_bits"`
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

// Curve is one stage's collapse curve.
type Curve struct {
	Stage  string  `json:"stage"`
	Points []Point `json:"points"`
}

// csvHeader names the columns WriteCSV writes.
var csvHeader = []string{
	"stage", "step", "kind", "label", "seq", "height", "peer", "filters", "members",
	"est_elements", "fp_rate", "matched", "true_positives", "false_positives", "expected_fp", "expected_fp_lower", "independent_fp",
	"precision", "expected_precision", "recall", "entropy_bits", "expected_entropy_bits",
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
	for _, c := range curves {
		for _, p := range c.Points {
			row := []string{
				c.Stage, strconv.Itoa(p.Step), string(p.Kind), p.Label, u(p.Seq),
				strconv.Itoa(int(p.Height)), p.Peer, strconv.Itoa(p.Filters), f(p.Members),
				f(p.EstElements), f(p.FPRate), u(p.Matched), u(p.TruePositives), u(p.FalsePositives),
				f(p.ExpectedFP), f(p.ExpectedFPLower), f(p.IndependentFP), f(p.Precision), f(p.ExpectedPrecision), f(p.Recall), f(p.Entropy),
				f(p.ExpectedEntropy), strconv.Itoa(p.Revealed), f(p.Fill), u(p.TxMatched), u(p.TxWallet),
			}
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
