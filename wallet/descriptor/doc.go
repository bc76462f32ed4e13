// Package descriptor parses and checks output descriptors (BIP380-386,
// multisig BIP383, multipath BIP389) and derives their output scripts,
// for a watch-only wallet that holds public keys only.
//
// Parse reads a descriptor's text for a network's parameters: its BIP380
// checksum (verified when given, computed when not), its script
// functions and its key expressions (an extended public key or a hex
// public key, with an optional key origin [fingerprint/path], unhardened
// derivation steps, one optional multipath step <a;b;...> and an
// optional final /*). It accepts pkh(), sh(wpkh()), wpkh(), tr() with a
// key path only (BIP86), sh(), wsh() and sh(wsh()) of multi() and
// sortedmulti(), addr() and raw(). A parsed Descriptor describes itself
// (String, Kind, Ranged, Threshold, Branches, Account) and derives its
// scripts: Scripts for a non-ranged descriptor, ScriptAt for a path and
// child index, Derivations for the BIP32 derivations of its keys there.
//
// The package does not decode the argument of addr() nor classify the
// script of raw(): Addr and Raw hand them to the caller, which decides
// what it can watch. It holds no private key and derives nothing
// hardened: a private key (WIF or extended) is refused with
// ErrPrivateKey, a hardened step after an extended public key with
// ErrHardenedStep. It refuses what a wallet of HD accounts cannot watch
// (ErrUnsupported): script trees, pk(), combo(), the tapscript and MuSig
// functions, bare multi() (which ParseAny keeps), and ranged keys that do
// not end in an account's branch, /0/*, /1/* or /<0;1>/*. It stores
// nothing and knows no wallet database: package wallet maps a ranged
// single-key descriptor's Account onto a waddrmgr account, watches the
// scripts and keeps the descriptor's text.
package descriptor
