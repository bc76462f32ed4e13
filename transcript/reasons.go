package transcript

// Reasons recorded with every filterload in the transcript (Record.Reason)
// and in the light node's FilterLoaded events; the client simulators of
// privacy/experiments write the same words.
const (
	// ReasonInitial is the first filter of a node with an empty
	// transcript.
	ReasonInitial = "initial"
	// ReasonRestart is the first filter after a restart.
	ReasonRestart = "restart"
	// ReasonNewPeer is the first filter sent to another peer.
	ReasonNewPeer = "new-peer"
	// ReasonNewKey is a reload because the watcher's elements grew
	// beyond what the peer's filter holds (the light node: at a
	// scheduled reload point, when the lookahead reserve was topped up).
	ReasonNewKey = "new-key"
	// ReasonFPDrift is a reload because a peer's filter filled up (the
	// light node: at a scheduled reload point).
	ReasonFPDrift = "fp-drift"
	// ReasonManual is a reload the user asked for.
	ReasonManual = "manual"
	// ReasonDecoyBusy is a reload without a decoy that brought too many
	// false positives (Config.Decoys).
	ReasonDecoyBusy = "decoy-busy"
	// ReasonOutPoints is a reload because a peer's filter lacks some of
	// the watcher's outpoints (it did not filter the blocks that created
	// them, so it would miss their spends): at once for a peer that
	// becomes the download peer, at the next reload point for the others.
	ReasonOutPoints = "outpoints"
	// ReasonGapRace is a reload because the download peer's filter lacked
	// an element the watcher needed (its lookahead reserve ran out): the
	// blocks from the start of the aligned window that holds the paying
	// block are fetched again.
	ReasonGapRace = "gap-race"
	// ReasonResize is a simulated client's reload at a larger capacity
	// because its elements outgrew the filter (privacy/experiments; the
	// light node reloads for that as ReasonNewKey).
	ReasonResize = "resize"
)

// Reasons of the getdata records (KindGetData):
// why the node asked a peer for a run of filtered blocks.
const (
	// ReasonSync is a request while catching up with the header tip.
	ReasonSync = "sync"
	// ReasonLive is a request for a block above the height the node
	// first synced to in this run: the live chain.
	ReasonLive = "live"
	// ReasonRefetch is a request for a block asked before: its answer
	// was filtered with an older filter, or left transactions out.
	ReasonRefetch = "refetch"
	// ReasonCheck is an omission check: a block asked again from a
	// second peer.
	ReasonCheck = "check"
)
