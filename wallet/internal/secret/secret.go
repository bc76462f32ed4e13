package secret

import (
	"strings"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/hdkeychain"
)

// wifPrefixes are the first characters of WIF private keys: mainnet
// uncompressed (5) and compressed (K, L); testnet, signet and regtest
// uncompressed (9) and compressed (c).
const wifPrefixes = "5KL9c"

// xprvPrefixes start the extended private keys of BIP32 and SLIP-132
// (xprv, yprv, zprv, Yprv, Zprv; tprv, uprv, vprv, Uprv, Vprv).
var xprvPrefixes = []string{"xprv", "yprv", "zprv", "Yprv", "Zprv", "tprv", "uprv", "vprv", "Uprv", "Vprv"}

// Shape describes s when it is, or has the shape of, a private
// key ("" otherwise): a WIF or an extended private key that decodes, or a
// base58 string of a WIF's length and first character, or of an extended
// private key's length and prefix (a mistyped one, which must not be
// echoed either). No address or public key has those shapes: base58
// addresses have at most 35 characters, bech32 ones use characters base58
// lacks, an extended public key starts ...pub.
func Shape(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if _, err := btcutil.DecodeWIF(s); err == nil {
		return "a WIF private key"
	}
	if k, err := hdkeychain.NewKeyFromString(s); err == nil && k.IsPrivate() {
		return "an extended private key"
	}
	if !isBase58(s) {
		return ""
	}
	if (len(s) == 51 || len(s) == 52) && strings.ContainsRune(wifPrefixes, rune(s[0])) {
		return "what looks like a WIF private key"
	}
	if len(s) == 111 {
		for _, p := range xprvPrefixes {
			if strings.HasPrefix(s, p) {
				return "what looks like an extended private key"
			}
		}
	}
	return ""
}

// In describes the first token of s (split at anything base58 and the
// extended keys' alphabet lack: brackets, commas, slashes, spaces) that
// Shape recognizes, so that a descriptor or a line holding a
// private key is not echoed either ("" when none).
func In(s string) string {
	if kind := Shape(s); kind != "" {
		return kind
	}
	for _, tok := range strings.FieldsFunc(s, func(r rune) bool { return !strings.ContainsRune(base58Alphabet, r) }) {
		if kind := Shape(tok); kind != "" {
			return kind
		}
	}
	return ""
}

// isBase58 reports whether every character of s is in the base58 alphabet.
func isBase58(s string) bool {
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune(base58Alphabet, rune(s[i])) {
			return false
		}
	}
	return true
}

// base58Alphabet is Bitcoin's base58 alphabet (base58 decodes anything
// else to nothing).
const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
