package spv

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/bloomwatch/bloomwatch/internal/atomicfile"
)

// The node's small state files (the filter tweak, the ban list, the
// decoys) are versioned JSON documents in the data dir, each replaced
// atomically.

// stateFileMode is the permission of the node's state files.
const stateFileMode = 0o600

// readState reads the state file path into v, whose Version field is
// *version. found is false, with no error, when the file does not exist.
// A file that does not parse, or holds another version than want, is an
// error wrapping corrupt that names the file; what names the state in
// other errors.
func readState(path, what string, v any, version *int, want int, corrupt error) (found bool, err error) {
	raw, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
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
