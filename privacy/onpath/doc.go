// Package onpath models the second party a BIP37 filter leaks to: an
// observer on the path between the client and its peers (an ISP, a Wi-Fi
// operator, a compromised router), who sees every connection of the
// client. Over the plaintext v1 transport it reads every message, so it
// learns what the peers learn, all of them together. BIP324's v2
// transport encrypts the contents but not their lengths and times: it
// learns a filterload's size (the capacity step, hence a range of element
// counts, unless the client pads it), a getdata's size (how many blocks
// are asked: the wallet's birthday once it knows the tip), each
// merkleblock's length (a block without matches gives the shortest one:
// it sees which blocks held matches, false positives included) and each
// matched transaction's length (with the public chain, often which
// transaction).
//
// An Observer follows one client: NewObserver, then Observe for every
// transcript record and ObserveBlock for every delivered filtered block;
// Reading gives what it has learned for a universe of a given size, with
// the joint false-positive rate of the filters it read in clear. The
// meter and the analyzer of package privacy each run one.
// ObserveFilteredBlocks reads a recorded v2 stream of packet sizes
// (Packet) against the public chain's blocks (Block) and returns which
// blocks matched and which transactions were sent (Stream).
//
// The package is pure and synchronous.
package onpath
