package main

import "github.com/bloomwatch/bloomwatch/bench/clientjob"

// The bench's side of the client contract (bench/clientjob, a module of its
// own so that the neutrino client can share it on an older btcd).
type (
	// ClientJob is what a client child reads.
	ClientJob = clientjob.ClientJob
	// ClientResult is what a client child prints.
	ClientResult = clientjob.ClientResult
	// FoundTx is one wallet transaction a client found.
	FoundTx = clientjob.FoundTx
	// FilterReport is how a BIP37 client's filter ended up.
	FilterReport = clientjob.FilterReport
)
