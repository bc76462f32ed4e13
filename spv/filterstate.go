package spv

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"path/filepath"
)

// filterStateFile is the name of the persistent filter state (the tweak)
// in the data dir.
const filterStateFile = "filter.json"

// filterStateVersion is the format version of filterStateFile.
const filterStateVersion = 1

// filterState is the on-disk form of filterStateFile.
type filterState struct {
	Version int    `json:"version"`
	Tweak   uint32 `json:"tweak"`
}

// loadOrCreateTweak returns the persistent tweak in dir, creating a random
// one on first use. A malformed file is ErrCorruptFilterState and is left
// alone.
func loadOrCreateTweak(dir string) (uint32, error) {
	path := filepath.Join(dir, filterStateFile)
	var st filterState
	if found, err := readState(path, "filter state", &st, &st.Version, filterStateVersion, ErrCorruptFilterState); err != nil || found {
		return st.Tweak, err
	}
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return 0, fmt.Errorf("random tweak: %w", err)
	}
	st = filterState{Version: filterStateVersion, Tweak: binary.LittleEndian.Uint32(b[:])}
	if err := writeState(path, "filter state", st); err != nil {
		return 0, err
	}
	return st.Tweak, nil
}
