package spv

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/bits"
	"os"
	"path/filepath"

	"github.com/bloomwatch/bloomwatch/bip37"
)

// FilterStateFile is the name of the persistent filter state (the tweak)
// in the data dir.
const FilterStateFile = "filter.json"

// filterStateVersion is the format version of FilterStateFile.
const filterStateVersion = 1

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
var ErrFilterMatchesAll = errors.New("spv: filter would match everything")

// FilterCapacity returns the element capacity a filter for n elements is
// sized with: twice n rounded up to a power of two, at least
// MinFilterCapacity. The headroom absorbs the outpoints a BLOOM_UPDATE_ALL
// server inserts for matched outputs, false positives included (GUIDE.md's
// saturation pitfall). Rounding to powers of two means most reloads keep
// the same size, k and tweak, so successive filters set the same bits for
// the same elements: the adversary gains little by intersecting them.
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

// BuildFilter builds the filter for els: sized by FilterCapacity at fpRate,
// with the given tweak and FilterFlags, holding every data element and
// outpoint. It returns ErrFilterMatchesAll when the sizing rules give a
// filter that matches everything.
func BuildFilter(els Elements, fpRate float64, tweak uint32) (*bip37.Filter, error) {
	f, err := bip37.NewFilter(FilterCapacity(els.Len()), fpRate, tweak, FilterFlags)
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

// filterState is the on-disk form of FilterStateFile.
type filterState struct {
	Version int    `json:"version"`
	Tweak   uint32 `json:"tweak"`
}

// loadOrCreateTweak returns the persistent tweak in dir, creating a random
// one on first use. A malformed file is ErrCorruptFilterState and is left
// alone.
func loadOrCreateTweak(dir string) (uint32, error) {
	path := filepath.Join(dir, FilterStateFile)
	raw, err := os.ReadFile(path)
	switch {
	case err == nil:
		var st filterState
		if err := json.Unmarshal(raw, &st); err != nil {
			return 0, fmt.Errorf("%w: %s: %v", ErrCorruptFilterState, path, err)
		}
		if st.Version != filterStateVersion {
			return 0, fmt.Errorf("%w: %s: version %d, want %d", ErrCorruptFilterState, path, st.Version, filterStateVersion)
		}
		return st.Tweak, nil
	case !errors.Is(err, fs.ErrNotExist):
		return 0, fmt.Errorf("read filter state: %w", err)
	}
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return 0, fmt.Errorf("random tweak: %w", err)
	}
	st := filterState{Version: filterStateVersion, Tweak: binary.LittleEndian.Uint32(b[:])}
	out, err := json.Marshal(st)
	if err != nil {
		return 0, fmt.Errorf("encode filter state: %w", err)
	}
	if err := writeFileAtomic(path, append(out, '\n')); err != nil {
		return 0, fmt.Errorf("save filter state: %w", err)
	}
	return st.Tweak, nil
}
