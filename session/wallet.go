package session

import (
	"errors"
	"fmt"

	"github.com/bloomwatch/bloomwatch/wallet"
)

// ErrNeedNetwork is returned by OpenWallet when the data dir holds no
// wallet and the spec names no network to create one on.
var ErrNeedNetwork = errors.New("no wallet there; a network is required to create one")

// OpenWallet opens the wallet of data dir dir, or creates it from spec
// (wallet.Create) when the directory holds none, and reports whether it
// created it. Opening an existing wallet checks spec.Network when given
// and imports every xpub, taproot xpub, descriptor, address and script of
// spec it does not watch yet; spec's Birthday and gap limits apply to a
// new wallet only. Errors from the wallet keep their types
// (wallet.InputError, wallet.ErrWrongNetwork, ...), so a caller can tell
// bad input from a failure.
func OpenWallet(dir string, spec wallet.CreateConfig, opts ...wallet.Option) (*wallet.Wallet, bool, error) {
	if !wallet.Exists(dir) {
		if spec.Network == "" {
			return nil, false, fmt.Errorf("%s: %w", dir, ErrNeedNetwork)
		}
		w, err := wallet.Create(dir, spec, opts...)
		if err != nil {
			return nil, false, err
		}
		return w, true, nil
	}
	if spec.Network != "" {
		opts = append(opts, wallet.WithNetwork(spec.Network))
	}
	w, err := wallet.Open(dir, opts...)
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
	for _, sc := range spec.Scripts {
		adds = append(adds, func() error { _, err := w.AddScript(sc); return err })
	}
	for _, add := range adds {
		if err := add(); err != nil && !errors.Is(err, wallet.ErrDuplicate) {
			_ = w.Close()
			return nil, false, err
		}
	}
	return w, false, nil
}
