package bip37

import (
	"fmt"
	"strings"
)

// UpdateFlag is the nFlags byte of a filterload message: it tells the full
// node whether to add the outpoints of matched outputs to the filter.
type UpdateFlag uint8

// Update modes defined by BIP37. Only the low two bits select the mode
// (Core's BLOOM_UPDATE_MASK); the other bits are carried but ignored.
const (
	// UpdateNone never adds outpoints to the filter.
	UpdateNone UpdateFlag = 0

	// UpdateAll adds the outpoint of every output whose script matched.
	UpdateAll UpdateFlag = 1

	// UpdateP2PubKeyOnly adds the outpoint of a matched output only when
	// the output is pay-to-pubkey or bare multisig.
	UpdateP2PubKeyOnly UpdateFlag = 2

	// updateMask selects the update mode from the flags byte
	// (Core's BLOOM_UPDATE_MASK).
	updateMask UpdateFlag = 3
)

// flagNames maps each defined update mode to its command-line name.
var flagNames = map[UpdateFlag]string{
	UpdateNone:         "none",
	UpdateAll:          "all",
	UpdateP2PubKeyOnly: "p2pubkeyonly",
}

// String returns "none", "all" or "p2pubkeyonly" for the defined modes and
// "unknown(0xNN)" for any other flags byte.
func (u UpdateFlag) String() string {
	if name, ok := flagNames[u]; ok {
		return name
	}
	return fmt.Sprintf("unknown(0x%02x)", uint8(u))
}

// mode returns the update mode Core applies for this flags byte.
func (u UpdateFlag) mode() UpdateFlag {
	return u & updateMask
}

// ParseUpdateFlag parses "none", "all" or "p2pubkeyonly" (case-insensitive)
// and returns ErrUnknownUpdateFlag for anything else.
func ParseUpdateFlag(s string) (UpdateFlag, error) {
	want := strings.ToLower(strings.TrimSpace(s))
	for flag, name := range flagNames {
		if name == want {
			return flag, nil
		}
	}
	return 0, fmt.Errorf("%w: %q (want none, all or p2pubkeyonly)", ErrUnknownUpdateFlag, s)
}
