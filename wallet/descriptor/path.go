package descriptor

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
)

// maxPathDigits bounds the digits of one derivation step (2^31-1 has 10).
const maxPathDigits = 10

// parsePathElem parses one BIP32 derivation step of a descriptor: a
// decimal index below 2^31, optionally followed by a hardened marker, h or
// '. Bitcoin Core accepts only these two, and BIP380 lists "0H" among its
// invalid key expressions, so H is refused. It returns the child number
// (with the hardened bit set for a hardened step).
func parsePathElem(s string) (child uint32, hardened bool, err error) {
	if s == "" {
		return 0, false, fmt.Errorf("%w: empty derivation step", ErrInvalid)
	}
	num := s
	switch s[len(s)-1] {
	case 'h', '\'':
		hardened, num = true, s[:len(s)-1]
	case 'H':
		return 0, false, fmt.Errorf("%w: derivation step %q: the hardened marker is h or ', not H", ErrInvalid, s)
	}
	if num == "" || len(num) > maxPathDigits || strings.TrimLeft(num, "0123456789") != "" {
		return 0, false, fmt.Errorf("%w: derivation step %q is not a number", ErrInvalid, s)
	}
	v, err := strconv.ParseUint(num, 10, 64)
	if err != nil || v >= hdkeychain.HardenedKeyStart {
		return 0, false, fmt.Errorf("%w: derivation step %q is out of range (at most %d)", ErrInvalid, s, hdkeychain.HardenedKeyStart-1)
	}
	child = uint32(v)
	if hardened {
		child += hdkeychain.HardenedKeyStart
	}
	return child, hardened, nil
}

// formatPath writes derivation steps as "/84'/1'/0'/0", with ' for a
// hardened step as the wallet's AddressInfo.Path does.
func formatPath(steps []uint32) string {
	var b strings.Builder
	for _, c := range steps {
		if c >= hdkeychain.HardenedKeyStart {
			fmt.Fprintf(&b, "/%d'", c-hdkeychain.HardenedKeyStart)
		} else {
			fmt.Fprintf(&b, "/%d", c)
		}
	}
	return b.String()
}

// ParsePath parses a derivation path as Account.Path writes it, "m"
// then steps ("m/84'/1'/0'"; h also marks a hardened step), into child
// numbers (with the hardened bit set for a hardened step).
func ParsePath(s string) ([]uint32, error) {
	s = strings.TrimPrefix(s, "m")
	var out []uint32
	for _, part := range strings.Split(strings.TrimPrefix(s, "/"), "/") {
		if part == "" {
			continue
		}
		c, _, err := parsePathElem(part)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// multipathGroup is one "<a;b;...>" derivation step (BIP389) found in a
// descriptor's text.
type multipathGroup struct {
	// start and end are the byte offsets of '<' and just past '>'.
	start, end int
	// values are the tuple's elements as written.
	values []string
	// children are the elements' child numbers.
	children []uint32
}

// findMultipath finds and checks the multipath steps of a descriptor
// text, following BIP389: a tuple of at least two distinct steps, after a
// '/', never inside a key origin, at most one per key expression, and the
// same length in every key expression.
func findMultipath(body string) ([]multipathGroup, error) {
	var (
		groups   []multipathGroup
		inOrigin bool
		inKey    bool // a group was seen in the current key expression
	)
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '[':
			inOrigin = true
		case ']':
			inOrigin = false
		case '(', ')', ',', '{', '}':
			inKey = false
		case '>':
			return nil, fmt.Errorf("%w: '>' at position %d closes no multipath step", ErrInvalid, i)
		case ';':
			return nil, fmt.Errorf("%w: ';' at position %d outside a multipath step", ErrInvalid, i)
		case '<':
			switch {
			case inOrigin:
				return nil, fmt.Errorf("%w: multipath step in a key origin (BIP389)", ErrInvalid)
			case inKey:
				return nil, fmt.Errorf("%w: more than one multipath step in a key expression (BIP389)", ErrInvalid)
			case i == 0 || body[i-1] != '/':
				return nil, fmt.Errorf("%w: multipath step at position %d does not follow '/'", ErrInvalid, i)
			}
			j := strings.IndexAny(body[i+1:], "<>")
			if j < 0 || body[i+1+j] != '>' {
				return nil, fmt.Errorf("%w: multipath step at position %d is not closed with '>'", ErrInvalid, i)
			}
			g := multipathGroup{start: i, end: i + 1 + j + 1, values: strings.Split(body[i+1:i+1+j], ";")}
			if len(g.values) < 2 {
				return nil, fmt.Errorf("%w: multipath step %q needs at least two values (BIP389)", ErrInvalid, body[g.start:g.end])
			}
			seen := make(map[uint32]bool, len(g.values))
			for _, v := range g.values {
				c, _, err := parsePathElem(v)
				if err != nil {
					return nil, fmt.Errorf("in multipath step %q: %w", body[g.start:g.end], err)
				}
				if seen[c] {
					return nil, fmt.Errorf("%w: multipath step %q repeats %s (BIP389)", ErrInvalid, body[g.start:g.end], v)
				}
				seen[c] = true
				g.children = append(g.children, c)
			}
			if g.end < len(body) && !strings.ContainsRune("/),}", rune(body[g.end])) {
				return nil, fmt.Errorf("%w: multipath step %q is followed by %q", ErrInvalid, body[g.start:g.end], body[g.end])
			}
			if len(groups) > 0 && len(g.values) != len(groups[0].values) {
				return nil, fmt.Errorf("%w: multipath steps of different lengths (%d and %d values, BIP389)",
					ErrInvalid, len(groups[0].values), len(g.values))
			}
			groups = append(groups, g)
			inKey = true
			i = g.end - 1
		}
	}
	return groups, nil
}

// expandMultipath returns the descriptors a multipath descriptor text
// stands for (BIP389): the first uses every tuple's first value, the
// second the second values, and so on. A descriptor without multipath
// steps expands to nothing. Only the text is transformed: the functions
// and keys are not checked here.
func expandMultipath(body string) ([]string, error) {
	groups, err := findMultipath(body)
	if err != nil || len(groups) == 0 {
		return nil, err
	}
	out := make([]string, len(groups[0].values))
	for k := range out {
		var b strings.Builder
		last := 0
		for _, g := range groups {
			b.WriteString(body[last:g.start])
			b.WriteString(g.values[k])
			last = g.end
		}
		b.WriteString(body[last:])
		out[k] = b.String()
	}
	return out, nil
}
