// Package secret recognizes private keys in input text, so that an error
// about bad input never repeats one.
//
// An error about bad input repeats the first characters of the input
// (wallet.InputError), which is harmless for an address or an xpub and a
// leak for a private key pasted into the wrong flag: a WIF's first 24
// characters are most of its entropy's encoding. Shape and In recognize
// inputs that are, or have the shape of, a private key, so that callers
// neither keep them in an error nor show them. The package decodes and
// recognizes only; it stores nothing.
package secret
