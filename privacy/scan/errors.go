package scan

import "errors"

// ErrTooManyHits is returned when a scan would keep more matching
// candidates than its limit: the filters match too much of the
// universe to be analyzed candidate by candidate.
var ErrTooManyHits = errors.New("too many matching candidates")
