package spv

import "errors"

// Errors callers must tell apart; they are wrapped with details, test for
// them with errors.Is.
var (
	// ErrBadConfig is wrapped by New for an invalid Config.
	ErrBadConfig = errors.New("spv: bad configuration")

	// ErrStopped is returned by calls on a node that was stopped.
	ErrStopped = errors.New("spv: node stopped")

	// ErrAlreadyStarted is returned by a second Start.
	ErrAlreadyStarted = errors.New("spv: node already started")

	// ErrNotStarted is returned by calls that need a started node.
	ErrNotStarted = errors.New("spv: node not started")

	// ErrNoPeerSource is returned by Start when there is neither a
	// connect list nor DNS seeds for the network.
	ErrNoPeerSource = errors.New("spv: no peer addresses and no DNS seeds")

	// ErrCorruptBanList is returned when the ban list file in the data
	// dir cannot be parsed. Nothing is overwritten; delete or repair the
	// file to start.
	ErrCorruptBanList = errors.New("spv: corrupt ban list")

	// ErrCorruptFilterState is returned when the persistent filter state
	// (tweak and capacity) cannot be parsed. Nothing is overwritten.
	ErrCorruptFilterState = errors.New("spv: corrupt filter state")

	// ErrCorruptChecks is returned when the record of unfinished
	// omission checks (checks.json) cannot be parsed. Nothing is
	// overwritten; delete or repair the file to start (deleting it
	// forgets the checks: their blocks stay as a peer delivered them).
	ErrCorruptChecks = errors.New("spv: corrupt record of unfinished omission checks")

	// ErrCorruptTranscript is returned when the privacy transcript holds
	// a malformed record other than a torn last line. Nothing is
	// appended to it.
	ErrCorruptTranscript = errors.New("spv: corrupt privacy transcript")

	// ErrTranscriptWrite stops the sync when a filter cannot be recorded
	// in the privacy transcript: the filter is not sent.
	ErrTranscriptWrite = errors.New("spv: cannot record a filter in the privacy transcript")

	// ErrPeerNoBloom is the handshake error for a peer that does not
	// advertise NODE_BLOOM.
	ErrPeerNoBloom = errors.New("spv: peer does not offer NODE_BLOOM")

	// ErrPeerTooOld is the handshake error for a peer whose protocol
	// version predates BIP111.
	ErrPeerTooOld = errors.New("spv: peer protocol version too old for BIP37/BIP111")

	// ErrPeerBanned is returned when dialing a banned address.
	ErrPeerBanned = errors.New("spv: peer is banned")

	// ErrWatcher wraps every error returned by the Watcher; the node
	// stops syncing when the Watcher fails.
	ErrWatcher = errors.New("spv: watcher")

	// ErrHeaderStore wraps header store failures that are not a peer's
	// fault (I/O errors).
	ErrHeaderStore = errors.New("spv: header store")
)
