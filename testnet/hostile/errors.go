package hostile

import "errors"

// Sentinel errors.
var (
	// ErrUnknownScenario: the scenario name is not in Scenarios().
	ErrUnknownScenario = errors.New("hostile: unknown scenario")
	// ErrNoUpstream: Config.Upstream is nil.
	ErrNoUpstream = errors.New("hostile: no upstream")
	// ErrNoParams: Config.Params is nil.
	ErrNoParams = errors.New("hostile: no chain params")
	// ErrClosed: the peer is closed.
	ErrClosed = errors.New("hostile: peer closed")
	// ErrHandshake: the remote side did not open with a version message.
	ErrHandshake = errors.New("hostile: bad handshake")
	// ErrNotFound: the upstream has no such block or header.
	ErrNotFound = errors.New("hostile: not found")
	// ErrCannotForge: the requested forgery does not apply to this block
	// (for example a CVE-2012-2459 tree for a power-of-two block).
	ErrCannotForge = errors.New("hostile: forgery does not apply")
)
