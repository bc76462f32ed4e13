package session

import (
	"errors"
	"fmt"

	"github.com/bloomwatch/bloomwatch/wallet"
)

// WalletSpec describes the wallet of a data dir: what to create when the
// directory holds none, and what to add to one that exists.
type WalletSpec struct {
	// Dir is the data dir (required).
	Dir string
	// Network is required to create a wallet; given for an existing
	// one, it must match.
	Network string
	// Xpubs, TaprootXpubs (BIP86 account keys), Descriptors (output
	// descriptors) and Addresses are watched: in a new wallet from the
	// start, in an existing one imported when not watched yet.
	Xpubs        []string
	TaprootXpubs []string
	Descriptors  []string
	Addresses    []string
	// Birthday, GapExternal and GapInternal apply to a new wallet.
	Birthday    int32
	GapExternal uint32
	GapInternal uint32
}

// CreateConfig returns the configuration of the wallet spec describes:
// what OpenWallet creates when the data dir holds none.
func (spec WalletSpec) CreateConfig() wallet.CreateConfig {
	return wallet.CreateConfig{
		Network: spec.Network, Xpubs: spec.Xpubs, TaprootXpubs: spec.TaprootXpubs, Descriptors: spec.Descriptors,
		Addresses: spec.Addresses, Birthday: spec.Birthday, GapExternal: spec.GapExternal, GapInternal: spec.GapInternal,
	}
}

// ErrNeedNetwork is returned by OpenWallet when the data dir holds no
// wallet and the spec names no network to create one on.
var ErrNeedNetwork = errors.New("no wallet there; a network is required to create one")

// OpenWallet opens the wallet of spec.Dir, checking spec.Network when
// given and importing any xpub or address it does not watch yet, or
// creates it from spec when the directory holds none. It reports whether
// it created the wallet. Errors from the wallet keep their types
// (wallet.InputError, wallet.ErrWrongNetwork, ...), so a caller can tell
// bad input from a failure.
func OpenWallet(spec WalletSpec, opts ...wallet.Option) (*wallet.Wallet, bool, error) {
	if !wallet.Exists(spec.Dir) {
		if spec.Network == "" {
			return nil, false, fmt.Errorf("%s: %w", spec.Dir, ErrNeedNetwork)
		}
		w, err := wallet.Create(spec.Dir, spec.CreateConfig(), opts...)
		if err != nil {
			return nil, false, err
		}
		return w, true, nil
	}
	if spec.Network != "" {
		opts = append(opts, wallet.WithNetwork(spec.Network))
	}
	w, err := wallet.Open(spec.Dir, opts...)
	if err != nil {
		return nil, false, err
	}
	var adds []func() error
	for _, x := range spec.Xpubs {
		adds = append(adds, func() error { _, err := w.AddXpub(x); return err })
	}
	for _, x := range spec.TaprootXpubs {
		adds = append(adds, func() error { _, err := w.AddTaprootXpub(x); return err })
	}
	for _, d := range spec.Descriptors {
		adds = append(adds, func() error { _, err := w.AddDescriptor(d); return err })
	}
	for _, a := range spec.Addresses {
		adds = append(adds, func() error { _, err := w.AddAddress(a); return err })
	}
	for _, add := range adds {
		if err := add(); err != nil && !errors.Is(err, wallet.ErrDuplicate) {
			_ = w.Close()
			return nil, false, err
		}
	}
	return w, false, nil
}
