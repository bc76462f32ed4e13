package replay

import (
	"errors"
	"math"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/stats"
)

// ReloadEstimate is what an observer infers about one reload: a filter
// that shares tweak and hash count with an earlier, different filter.
type ReloadEstimate struct {
	// Generation and PrevGeneration index Report.Filters: the reload and
	// the most recent earlier generation of the same tweak and hash count
	// holding a different filter; Seq and PrevSeq are their filterloads'
	// transcript record numbers, the numbers the filters go by.
	Generation     int    `json:"-"`
	PrevGeneration int    `json:"-"`
	Seq            uint64 `json:"seq"`
	PrevSeq        uint64 `json:"prev_seq"`
	Height         int32  `json:"height"`
	Peer           string `json:"peer"`
	Reason         string `json:"reason,omitempty"`
	Bytes          int    `json:"bytes"`
	PrevBytes      int    `json:"prev_bytes"`
	Tweak          uint32 `json:"tweak"`
	// Nested reports that one size divides the other: the larger filter
	// then folds exactly onto the smaller (bip37.Fold), and the union
	// and intersection of the two element sets are estimated
	// (bip37.EstimateOverlap).
	Nested bool `json:"nested"`
	// Added and Dropped are the estimated elements the reload holds that
	// the earlier filter did not, and the reverse (Overlap.OnlyB and
	// OnlyA), with their standard errors; -1 when the sizes do not nest or
	// the union is saturated.
	Added         float64 `json:"added"`
	AddedStdErr   float64 `json:"added_stderr"`
	Dropped       float64 `json:"dropped"`
	DroppedStdErr float64 `json:"dropped_stderr"`
	// AddedCI and DroppedCI are their 95 % intervals (normal, clipped at
	// 0; nil when they cannot be estimated).
	AddedCI   *stats.Interval `json:"added_ci,omitempty"`
	DroppedCI *stats.Interval `json:"dropped_ci,omitempty"`
	// NetChange is m^(reload) - m^(earlier), each filter's element
	// estimate at its own size, available at any sizes; NetStdErr its
	// standard error, treating the two estimates as independent.
	NetChange float64 `json:"net_change"`
	NetStdErr float64 `json:"net_stderr"`
	// NetChangeCI is its 95 % interval (normal; nil with -1).
	NetChangeCI *stats.Interval `json:"net_change_ci,omitempty"`
	// TrueAdded and TrueDropped count, when the truth is known, the
	// wallet's elements (every form of Input.Truth) that match the reload
	// and not the earlier filter, and the reverse: the real counts up to
	// the rare truth element that matches a filter it is not in (rate f),
	// and only among the elements the truth lists. -1 without the truth.
	TrueAdded   int `json:"true_added"`
	TrueDropped int `json:"true_dropped"`
}

// ElementStdErr returns the standard error of the element estimate m^ of
// a filter of n bits and k hash functions holding m elements:
// sqrt(n phi(k m / n)) / k, phi(t) = e^t - 1 - t (bip37.Overlap.StdErr).
func ElementStdErr(nBits uint64, k uint32, m float64) float64 {
	if nBits == 0 || k == 0 {
		return math.NaN()
	}
	n, kk := float64(nBits), float64(k)
	t := kk * math.Max(m, 0) / n
	return math.Sqrt(n*(math.Expm1(t)-t)) / kk
}

// EstimateReload compares a reload b with an earlier filter a of the same
// tweak and hash count, as an observer does: the fold estimates when the
// sizes nest, the net change always. It returns bip37.ErrParamsDiffer when
// the filters do not share tweak and hash count, and
// bip37.ErrNoElementInfo when either matches everything. The generation
// and truth fields are left for the caller (TrueAdded and TrueDropped
// -1).
func EstimateReload(a, b *bip37.Filter) (ReloadEstimate, error) {
	r := ReloadEstimate{Bytes: b.Size(), PrevBytes: a.Size(), Tweak: b.Tweak(),
		Added: -1, AddedStdErr: -1, Dropped: -1, DroppedStdErr: -1, TrueAdded: -1, TrueDropped: -1}
	o, err := bip37.EstimateOverlap(a, b)
	switch {
	case err == nil:
		r.Nested = true
		_, dropErr, addErr := o.StdErr()
		r.Added, r.AddedStdErr, r.Dropped, r.DroppedStdErr = o.OnlyB(), addErr, o.OnlyA(), dropErr
		r.AddedCI, r.DroppedCI = stats.NormalInterval(r.Added, addErr, 0), stats.NormalInterval(r.Dropped, dropErr, 0)
	case errors.Is(err, bip37.ErrSaturated):
		r.Nested = true
	case errors.Is(err, bip37.ErrSizesNotNested):
	default:
		return r, err
	}
	ma, mb := a.EstimatedElements(), b.EstimatedElements()
	r.NetChange = mb - ma
	r.NetStdErr = math.Hypot(ElementStdErr(a.NumBits(), a.HashFuncs(), ma), ElementStdErr(b.NumBits(), b.HashFuncs(), mb))
	if math.IsInf(r.NetChange, 0) || math.IsNaN(r.NetChange) {
		r.NetChange, r.NetStdErr = -1, -1
	} else {
		r.NetChangeCI = stats.NormalInterval(r.NetChange, r.NetStdErr, math.Inf(-1))
	}
	return r, nil
}
