package descriptor

import (
	"fmt"
	"strings"
)

// BIP380 descriptor checksum: a BCH code over the descriptor's characters,
// eight characters of the bech32 alphabet after a '#'.
const (
	// descInputCharset is the characters a descriptor may hold, in
	// BIP380's three groups of 32 (the group of a character and its
	// position in the group are separate symbols of the code).
	descInputCharset = "0123456789()[],'/*abcdefgh@:$%{}" +
		"IJKLMNOPQRSTUVWXYZ&+-.;<=>?!^_|~" +
		"ijklmnopqrstuvwxyzABCDEFGH`#\"\\ "
	// descChecksumCharset is the bech32 alphabet the checksum is written
	// in.
	descChecksumCharset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
	// ChecksumLen is the number of characters of a checksum.
	ChecksumLen = 8
)

// descGenerator is the generator of BIP380's BCH code.
var descGenerator = [5]uint64{0xf5dee51989, 0xa9fdca3312, 0x1bab10e32d, 0x3706b1677a, 0x644d626ffd}

// descPolymod feeds one 5-bit symbol into the checksum state c.
func descPolymod(c uint64, symbol uint64) uint64 {
	top := c >> 35
	c = (c&0x7ffffffff)<<5 ^ symbol
	for i, g := range descGenerator {
		if (top>>i)&1 == 1 {
			c ^= g
		}
	}
	return c
}

// Checksum computes the BIP380 checksum of a descriptor without its
// "#checksum". A character outside the descriptor character set gives
// ErrInvalid naming it.
func Checksum(body string) (string, error) {
	c := uint64(1)
	var groups, n uint64
	for i, r := range body {
		pos := strings.IndexRune(descInputCharset, r)
		if pos < 0 || r == '#' {
			return "", fmt.Errorf("%w: character %q at position %d is not allowed in a descriptor", ErrInvalid, r, i)
		}
		c = descPolymod(c, uint64(pos&31))
		groups = groups*3 + uint64(pos>>5)
		if n++; n == 3 {
			c = descPolymod(c, groups)
			groups, n = 0, 0
		}
	}
	if n > 0 {
		c = descPolymod(c, groups)
	}
	for range ChecksumLen {
		c = descPolymod(c, 0)
	}
	c ^= 1
	var sum [ChecksumLen]byte
	for i := range sum {
		sum[i] = descChecksumCharset[(c>>(5*(ChecksumLen-1-i)))&31]
	}
	return string(sum[:]), nil
}

// checkChecksum verifies a checksum given after '#' against the one
// computed for body.
func checkChecksum(given, computed string) error {
	if len(given) != ChecksumLen {
		return fmt.Errorf("%w: checksum %q has %d characters, not %d", ErrChecksum, given, len(given), ChecksumLen)
	}
	for i := 0; i < len(given); i++ {
		if strings.IndexByte(descChecksumCharset, given[i]) < 0 {
			return fmt.Errorf("%w: checksum %q has character %q outside the bech32 alphabet", ErrChecksum, given, given[i])
		}
	}
	if given != computed {
		return fmt.Errorf("%w: checksum %s does not match the descriptor (computed %s): it was mistyped or altered", ErrChecksum, given, computed)
	}
	return nil
}
