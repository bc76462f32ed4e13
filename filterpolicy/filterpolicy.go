package filterpolicy

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/watch"
)

// MinFilterCapacity is the smallest capacity a filter is sized for, so
// that a new wallet's first outputs and the server's UPDATE_ALL insertions
// do not force a reload at once.
const MinFilterCapacity = 64

// FilterFlags are the update flags every filter is loaded with:
// BLOOM_UPDATE_ALL, so the server inserts the outpoint of every matched
// output and the spends of coins received since the load still match
// (P2WPKH spends can only be matched through their outpoints).
const FilterFlags = bip37.UpdateAll

// ErrFilterMatchesAll is returned when a filter would match every
// transaction (zero length or zero hash functions): sending it would hand
// the peer the whole chain's cost and no privacy.
var ErrFilterMatchesAll = errors.New("filterpolicy: filter would match everything")

// FilterCapacity returns the element capacity a filter for n elements is
// sized with: twice n rounded up to a power of two, at least
// MinFilterCapacity. The headroom absorbs the outpoints a BLOOM_UPDATE_ALL
// server inserts for matched outputs, false positives included (saturation:
// docs/PRIVACY-MODEL.md formula 6, measured in docs/RESEARCH.md's
// `saturation`). Rounding to powers of two means most reloads keep
// the same size, k and tweak, so successive filters set the same bits for
// the same elements: the adversary gains little by intersecting them.
// FilterSize turns the capacity into bytes and hash functions.
func FilterCapacity(n int) uint32 {
	want := uint64(n) * 2
	if want < MinFilterCapacity {
		want = MinFilterCapacity
	}
	c := uint64(1) << bits.Len64(want-1)
	if c > 1<<31 {
		c = 1 << 31
	}
	return uint32(c)
}

// FilterSize returns the size in bytes and the hash count of the filter
// for n elements at fpRate: the nested capacity steps. The smallest
// filter is BIP37's for MinFilterCapacity elements (bip37.Params: 153
// bytes and k = 13 at DefaultFPRate), and the filter for capacity
// MinFilterCapacity * 2^i is that size times 2^i with the same k, so every
// size divides the next. BIP37's own formula floors each capacity's size
// separately (153, 306, 613, 1226, 2453, 4907, 9815, 19630 bytes at
// 1e-4), and a size that does not divide the next makes the two filters
// of one tweak close to independent to an adversary who intersects them;
// nested sizes keep them correlated (docs/PRIVACY-MODEL.md, "Capacity
// steps": about 10 bits of the intersection's anonymity set lost per size
// step instead of 30 to 35, for false-positive rates within 3 % of BIP37's
// sizing at 1e-4, measured here). A size past bip37.MaxFilterSize takes
// BIP37's capped size and hash count instead (36,000 bytes: one step that
// does not nest, for wallets of more than about 4,096 elements at 1e-4).
// Past MaxFilterElements BIP37's formula gives the capped filter no hash
// function at all (288,000 bits over a capacity of 262,144 or more) and
// a filter without one matches everything: the capped filter keeps one
// hash function instead, the most it can use (see MaxFilterElements). It
// returns (0, 0) for an fpRate outside (0, 1).
func FilterSize(n int, fpRate float64) (sizeBytes int, hashFuncs uint32) {
	c := FilterCapacity(n)
	base, k := bip37.Params(MinFilterCapacity, fpRate)
	size := uint64(base) * uint64(c/MinFilterCapacity)
	if base == 0 || size > bip37.MaxFilterSize {
		b, kc := bip37.Params(c, fpRate)
		if b == bip37.MaxFilterSize && kc == 0 {
			kc = 1
		}
		return int(b), kc
	}
	return int(size), k
}

// MaxFilterElements is the most elements for which BIP37's sizing gives
// a 36,000-byte filter a hash function: a capacity of 131,072 (twice the
// elements, rounded up to a power of two) leaves 2 bits per element, a
// larger one 1, which BIP37's integer formula turns into none. A wallet
// watching more (tens of thousands of its own confirmed coins) still gets
// a filter, of one hash function, whose false-positive rate at load the
// node logs (about 1 - e^(-n/288,000): 22 % at 70,000 elements): the node
// keeps running and says so. Nothing a peer relays unconfirmed can take a
// wallet there (wallet.MaxPendingElements).
const MaxFilterElements = 65_536

// BuildFilter builds the filter for els: sized by FilterSize at fpRate,
// with the given tweak and FilterFlags, holding every data element and
// outpoint. It returns ErrFilterMatchesAll when the sizing rules give a
// filter that matches everything, and an error wrapping
// bip37.ErrFPRateRange for an fpRate outside (0, 1).
func BuildFilter(els watch.Elements, fpRate float64, tweak uint32) (*bip37.Filter, error) {
	if !(fpRate > 0 && fpRate < 1) {
		return nil, fmt.Errorf("build filter: %w: got %v", bip37.ErrFPRateRange, fpRate)
	}
	size, k := FilterSize(els.Len(), fpRate)
	f, err := bip37.NewFilterFromBits(make([]byte, size), k, tweak, FilterFlags)
	if err != nil {
		return nil, fmt.Errorf("build filter: %w", err)
	}
	if f.Size() == 0 || f.HashFuncs() == 0 {
		return nil, fmt.Errorf("%w: %d bytes, %d hash functions for %d elements at %v",
			ErrFilterMatchesAll, f.Size(), f.HashFuncs(), els.Len(), fpRate)
	}
	for _, d := range els.Data {
		f.Add(d)
	}
	for i := range els.OutPoints {
		f.AddOutPoint(&els.OutPoints[i])
	}
	return f, nil
}
