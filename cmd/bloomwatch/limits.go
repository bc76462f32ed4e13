package main

// The bounds of the local files the commands read, named once. The
// others live beside their readers: transcript.MaxFileBytes (the privacy
// transcript, the node's and privacy analyze's), wallet.MaxAddressListBytes
// (--addresses-file), spv.MaxStateFileBytes (the data dir's ban list of
// peers, decoys, filter state and unfinished checks).

// maxConfigFileBytes bounds the data dir's bloomwatch.conf: a file of
// key = value lines for the flags of every command is a few kilobytes; a
// larger one (a wrong file in its place) is refused, with one line,
// before it is read.
const maxConfigFileBytes = 1 << 20

// maxPSBTFileBytes bounds a --psbt file: a BIP174 PSBT of a wallet spend
// with every input's previous transaction is far smaller; a larger file
// (a wrong path) is refused, with one line, before it is read.
const maxPSBTFileBytes = 16 << 20
