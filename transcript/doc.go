// Package transcript is the privacy transcript: the record of every BIP37
// message a light client sent to a peer (filterload, filteradd,
// filterclear), as the receiving full node saw it, with time, peer, chain
// height and the client's reason. It is the adversary's view of a wallet.
//
// The light node (spv) writes one Record per message, durably, before the
// message goes out (File); the privacy analyzer and the live meter read
// Records (Read, or straight from the node's events). The format is JSON
// lines, one Record per line, versioned by the record's "v" field: records
// without it are version 1 and read as such; a record of a version newer
// than this package knows is refused rather than half-understood.
//
// The package is small on purpose: spv and privacy both import it, and
// neither has to import the other.
package transcript
