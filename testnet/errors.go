package testnet

import (
	"errors"

	"github.com/bloomwatch/bloomwatch/testnet/internal/proc"
)

// Sentinel errors callers can tell apart with errors.Is.
var (
	// ErrUnknownNetwork is returned for a network other than "regtest" or
	// "simnet".
	ErrUnknownNetwork = errors.New("testnet: unknown network (want regtest or simnet)")

	// ErrNoModuleRoot is returned by BtcdBinary when neither the
	// bloomwatch module root nor BLOOMWATCH_BTCD is available to find or
	// build btcd.
	ErrNoModuleRoot = errors.New("testnet: bloomwatch module root not found (set BLOOMWATCH_BTCD)")

	// ErrNodeExited is returned when btcd exits before it is ready or
	// while the harness waits on it.
	ErrNodeExited = errors.New("testnet: btcd exited")

	// ErrKilled is returned by Stop when btcd ignored SIGINT and had to
	// be killed.
	ErrKilled = errors.New("testnet: btcd killed")

	// ErrStopped is returned by operations on a stopped node or a closed
	// harness.
	ErrStopped = proc.ErrStopped

	// ErrTimeout is returned when a wait (RPC readiness, connection,
	// sync, height) does not finish in time.
	ErrTimeout = proc.ErrTimeout

	// ErrInsufficientFunds is returned when the funding wallet has no
	// spendable output large enough for a payment.
	ErrInsufficientFunds = errors.New("testnet: insufficient funds")

	// ErrUnknownKey is returned by Spend when an outpoint's script does not
	// belong to the keyring (within the searched derivation range).
	ErrUnknownKey = errors.New("testnet: script not owned by keyring")

	// ErrFeeTooLow is returned by Spend when the outputs leave less than
	// the minimum fee.
	ErrFeeTooLow = errors.New("testnet: outputs leave too little fee")

	// ErrBadPurpose is returned for a BIP43 purpose the keyring does not
	// derive: 44, 49, 84 and 86, and 48 (PurposeMultisig) for addresses.
	ErrBadPurpose = errors.New("testnet: purpose must be 44, 49, 84, 86 or (the multisig wallet's addresses) 48")

	// ErrBadSpec is returned by BuildChain and Reorg for invalid
	// parameters.
	ErrBadSpec = errors.New("testnet: invalid specification")
)
