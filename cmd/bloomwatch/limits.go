package main

// The bounds of the local files the commands read, named once. The
// others live beside their readers: transcript.MaxFileBytes (the privacy
// transcript, the node's and privacy analyze's), wallet.MaxAddressListBytes
// (--addresses-file), spv.MaxStateFileBytes (the data dir's ban list of
// peers, decoys, filter state and unfinished checks). A --universe file is
// streamed, never held: a mainnet universe does not fit in memory.

// maxConfigFileBytes bounds the data dir's bloomwatch.conf: a file of
// key = value lines for the flags of every command is a few kilobytes; a
// larger one (a wrong file in its place) is refused, with one line,
// before it is read.
const maxConfigFileBytes = 1 << 20

// maxPSBTFileBytes bounds a --psbt file: a BIP174 PSBT of a wallet spend
// with every input's previous transaction is far smaller; a larger file
// (a wrong path) is refused, with one line, before it is read.
const maxPSBTFileBytes = 16 << 20

// maxTruthFileBytes bounds a --truth file of privacy analyze, held whole:
// the wallet's own elements (wallet export-truth writes a line of a few
// hex forms per used address) take a few megabytes for the largest
// wallet; a larger file (a universe given as --truth, a wrong path) is
// refused, with one line, before it is read.
const maxTruthFileBytes = 64 << 20
