package spv

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/btcsuite/btcd/wire"
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

// loadOrCreateTweak returns the persistent tweak in dir, creating one on
// first use. A malformed file is ErrCorruptFilterState and is left alone.
// When the file is missing but the privacy transcript in dir recorded
// filters, their tweak is taken back (the last filterload's) and written
// again, and recovered is set: a new random tweak would hand the peers a
// filter independent of the ones they hold (intersecting them shrinks the
// anonymity set) and make the transcript describe two wallets. A
// transcript that cannot be read is an error and nothing is written. Only
// a data dir without either gets a random tweak.
func loadOrCreateTweak(dir string) (tweak uint32, recovered bool, err error) {
	path := filepath.Join(dir, filterStateFile)
	var st filterState
	if found, err := readState(path, "filter state", &st, &st.Version, filterStateVersion, ErrCorruptFilterState); err != nil || found {
		return st.Tweak, false, err
	}
	tweak, recovered, err = transcriptTweak(dir)
	if err != nil {
		return 0, false, err
	}
	if !recovered {
		var b [4]byte
		if _, err := rand.Read(b[:]); err != nil {
			return 0, false, fmt.Errorf("random tweak: %w", err)
		}
		tweak = binary.LittleEndian.Uint32(b[:])
	}
	st = filterState{Version: filterStateVersion, Tweak: tweak}
	if err := writeState(path, "filter state", st); err != nil {
		return 0, false, err
	}
	return tweak, recovered, nil
}

// transcriptTweak returns the tweak of the last filterload the transcript
// in dir recorded (ok false: no transcript, or no filterload in it). It
// only reads: a torn last line is ignored, as transcript.Open would cut it.
func transcriptTweak(dir string) (tweak uint32, ok bool, err error) {
	path := filepath.Join(dir, transcript.FileName)
	recs, _, err := transcript.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return 0, false, nil
	case errors.Is(err, transcript.ErrTooLarge):
		return 0, false, transcriptTooLarge(err)
	}
	if err != nil {
		return 0, false, fmt.Errorf("%w: %s is missing and the transcript cannot be read to recover the tweak: %w", ErrCorruptTranscript, filterStateFile, err)
	}
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].Kind != transcript.KindFilterLoad {
			continue
		}
		var msg wire.MsgFilterLoad
		if err := msg.BtcDecode(bytes.NewReader(recs[i].Filter), wire.ProtocolVersion, wire.BaseEncoding); err != nil {
			return 0, false, fmt.Errorf("%s is missing and the filter of transcript record %d cannot be decoded: %w", filterStateFile, recs[i].Seq, err)
		}
		return msg.Tweak, true, nil
	}
	return 0, false, nil
}
