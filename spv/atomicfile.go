package spv

import "github.com/bloomwatch/bloomwatch/internal/atomicfile"

// stateFileMode is the permission of the node's state files.
const stateFileMode = 0o600

// writeFileAtomic replaces path with data so that a crash leaves either the
// old or the new content (atomicfile.Write: a synced temp file in the same
// directory renamed over path, then the directory synced).
func writeFileAtomic(path string, data []byte) error {
	return atomicfile.Write(path, data, stateFileMode)
}
