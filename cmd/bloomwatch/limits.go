package main

// The bounds of the local files the commands read, named once. The
// others live beside their readers: transcript.MaxFileBytes (the privacy
// transcript, the node's and privacy analyze's), wallet.MaxAddressListBytes
// (--addresses-file), spv.MaxStateFileBytes (the data dir's ban list of
// peers, decoys, filter state and unfinished checks).

// maxPSBTFileBytes bounds a --psbt file: a BIP174 PSBT of a wallet spend
// with every input's previous transaction is far smaller; a larger file
// (a wrong path) is refused, with one line, before it is read.
const maxPSBTFileBytes = 16 << 20
