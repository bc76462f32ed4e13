package spv

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/bloomwatch/bloomwatch/internal/atomicfile"
	"github.com/bloomwatch/bloomwatch/internal/boundedread"
)

// The node's small state files (the filter tweak, the ban list, the
// decoys) are versioned JSON documents in the data dir, each replaced
// atomically.

// stateFileMode is the permission of the node's state files.
const stateFileMode = 0o600

// MaxStateFileBytes bounds a state file the node reads at start (the ban
// list of peers, the decoys, the filter state, the unfinished checks):
// each holds a few kilobytes; a larger one is refused, with one line,
// before it is read, and nothing is overwritten.
const MaxStateFileBytes = 16 << 20

// readState reads the state file path into v, whose Version field is
// *version. found is false, with no error, when the file does not exist.
// A file that does not parse, holds another version than want, or is
// above MaxStateFileBytes is an error wrapping corrupt that names the
// file; what names the state in
// other errors.
func readState(path, what string, v any, version *int, want int, corrupt error) (found bool, err error) {
	raw, err := boundedread.ReadFile(path, MaxStateFileBytes, "spv.MaxStateFileBytes")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case errors.Is(err, boundedread.ErrTooLarge):
		return false, fmt.Errorf("%w: %w", corrupt, err)
	case err != nil:
		return false, fmt.Errorf("read %s: %w", what, err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return false, fmt.Errorf("%w: %s: %w", corrupt, path, err)
	}
	if *version != want {
		return false, fmt.Errorf("%w: %s: version %d, want %d", corrupt, path, *version, want)
	}
	return true, nil
}

// writeState replaces path with v as JSON so that a crash leaves either
// the old or the new content (atomicfile.Write: a synced temp file in the
// same directory renamed over path, then the directory synced).
func writeState(path, what string, v any) error {
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", what, err)
	}
	if err := atomicfile.Write(path, append(raw, '\n'), stateFileMode); err != nil {
		return fmt.Errorf("save %s: %w", what, err)
	}
	return nil
}
