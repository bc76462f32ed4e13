// Package headers is bloomwatch's persistent, validated block header chain.
//
// A Store keeps every header it accepted (best chain and side branches) in an
// append-only file, headers.dat, and an in-memory index of compact nodes
// (hash, parent, height, bits, time, cumulative work: 64 bytes a header) with
// a hash index keyed by 8 bytes of the hash. Header bodies (version, merkle
// root, nonce) are read back from the file on demand, so a mainnet-sized
// chain costs tens of megabytes of memory.
//
// Every header is validated in context before it is stored: proof of work
// against the claimed target and the network's limit, the difficulty the
// rules require (retarget every 2016 blocks with the factor-4 bound,
// testnet3's 20-minute rule, testnet4's BIP94, regtest's fixed difficulty),
// timestamp after the median of the last 11 blocks and at most two hours in
// the future, version floors of BIP34/65/66, and checkpoints. The best chain
// is the one with the most cumulative work; ties keep the branch seen first.
//
// The validation mirrors btcd's blockchain.CheckBlockHeaderSanity and
// CheckBlockHeaderContext (the tests check the two agree on every header they
// build) but runs on the compact nodes without allocating, and adds BIP94,
// which btcd v0.24 lacks.
//
// # File format
//
// headers.dat starts with a 48-byte file header: the magic "BWHEADER", a
// format version, the network's wire magic and its genesis hash. Records of
// 84 bytes follow, one per accepted header in the order accepted (a parent is
// always before its children): the 80-byte wire header and a CRC-32C of it.
// Records are appended and fsynced at the end of every Connect batch; a
// reorganization writes nothing (the best chain is recomputed from the
// cumulative work when the file is opened). When side-branch headers are
// evicted (evict.go) the file is rewritten without them, atomically. A partial last record (a
// crash during an append) is truncated on open and reported; anything else
// that does not parse, link or carry valid proof of work is ErrCorrupt.
//
// # Concurrency
//
// Connect is meant to be called from one goroutine (the node's manager);
// every method is safe for concurrent use. A RWMutex guards the index and is
// released while a batch is written and fsynced, so readers (CLI, TUI) never
// wait for the disk; writers are serialized by a second mutex.
package headers
