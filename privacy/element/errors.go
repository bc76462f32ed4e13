package element

import "errors"

// Errors callers must tell apart. They are wrapped with details; test for
// them with errors.Is.
var (
	// ErrBadElementFile is wrapped by every error ReadCandidates returns
	// for malformed input; the message names the line.
	ErrBadElementFile = errors.New("bad element file")

	// ErrChain is wrapped by errors reading blocks from a Chain.
	ErrChain = errors.New("chain")
)
