// Package demo is `bloomwatch demo`'s world: a regtest btcd on 127.0.0.1
// started from the btcd module in go.mod (package testnet) and a second
// one following it (the light node's second peer for omission checks), a
// chain with payments to a demo BIP84 wallet among other users'
// transactions, the watch-only wallet created for it, and, once a session syncs it, a live
// chain: a block every interval with payments to and from the wallet, a
// reorg now and then and a periodic filter reload, so every panel of the
// dashboard moves.
package demo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/bloomwatch/bloomwatch/session"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// Purpose is the demo wallet's account type: BIP84 native segwit, whose
// spends BIP37 can only match through outpoints.
const Purpose = 84

// DefaultFPRate is the demo's filter target at capacity. The light node
// sizes filters with headroom for BLOOM_UPDATE_ALL, so at the default
// target a small wallet's filter matches almost nothing else; the demo
// loosens it so the false-positive panels have something to show.
const DefaultFPRate = 0.02

// Defaults of Options.
const (
	DefaultBlocks      = 150
	DefaultTxs         = 8
	DefaultAddrs       = 15
	DefaultInterval    = 4 * time.Second
	DefaultReloadEvery = 10
)

// ErrDirHasWallet is returned when Options.Dir already holds a wallet: the
// demo builds a fresh chain, which an old wallet would not be on.
var ErrDirHasWallet = errors.New("already holds a wallet; the demo builds a fresh chain, so give an empty directory")

// TempPattern names the data dir the demo creates when Options.Dir is
// empty (os.MkdirTemp's pattern, in the system's temporary directory).
const TempPattern = "bloomwatch-demo-*"

// Options configures the demo.
type Options struct {
	// Dir is the wallet's data dir; empty means a new one in the
	// system's temporary directory (TempPattern). Either way it is kept
	// after Close, with the wallet, the headers, the privacy transcript
	// and both btcd logs, for `privacy analyze` and for reading the logs.
	Dir string
	// Blocks of history, other users' transactions per block, and wallet
	// addresses paid in the history.
	Blocks, Txs, Addrs int
	// Interval is the time between live blocks; ReloadEvery reloads the
	// filter every n live blocks (0: never).
	Interval    time.Duration
	ReloadEvery int
	// Say receives progress lines for the user (nil: none).
	Say func(format string, args ...any)
}

// Demo is a running demo world.
type Demo struct {
	opts  Options
	dir   string
	btcd  *os.File
	btcd2 *os.File
	h     *testnet.Harness
	// second is a btcd that follows the harness's node: the light node's
	// second peer, which every block is checked against.
	second *testnet.Node
	key    *testnet.Keyring
	truth  *testnet.Truth
	w      *wallet.Wallet
	driver *testnet.Driver
}

// Start starts btcd on regtest, builds the chain and creates the wallet.
// On error everything started is stopped again; the data dir stays, with
// the btcd logs that tell why.
func Start(ctx context.Context, o Options) (_ *Demo, err error) {
	if o.Say == nil {
		o.Say = func(string, ...any) {}
	}
	d := &Demo{opts: o, dir: o.Dir}
	defer func() {
		if err != nil {
			_ = d.Close()
		}
	}()
	if d.dir == "" {
		if d.dir, err = os.MkdirTemp("", TempPattern); err != nil {
			return nil, err
		}
	} else if wallet.Exists(d.dir) {
		return nil, fmt.Errorf("%s %w", d.dir, ErrDirHasWallet)
	}
	if err := os.MkdirAll(d.dir, 0o700); err != nil {
		return nil, err
	}
	if d.btcd, err = os.Create(filepath.Join(d.dir, "btcd.log")); err != nil {
		return nil, err
	}
	o.Say("building or finding btcd and starting it on regtest with --v2transport (BIP324), 127.0.0.1 only (btcd log: %s)", d.btcd.Name())
	if d.h, err = testnet.New(ctx, testnet.Options{Log: d.btcd, V2Transport: true}); err != nil {
		return nil, fmt.Errorf("start btcd: %w", err)
	}
	if d.key, err = testnet.NewKeyring(testnet.DemoSeed, d.h.Params()); err != nil {
		return nil, err
	}
	o.Say("mining %d blocks with %d other transactions each and payments to %d wallet addresses", o.Blocks, o.Txs, o.Addrs)
	d.truth, err = d.h.BuildChain(ctx, testnet.ChainSpec{
		Blocks: o.Blocks, TxsPerBlock: o.Txs, Keyring: d.key, Purpose: Purpose,
		WatchAddrs: o.Addrs, SpendFraction: 0.4, Seed: 1,
	})
	if err != nil {
		return nil, fmt.Errorf("build chain: %w", err)
	}
	if d.btcd2, err = os.Create(filepath.Join(d.dir, "btcd2.log")); err != nil {
		return nil, err
	}
	o.Say("starting a second btcd, v1 only (plaintext), that follows the first, so that every block is checked against a second peer (log: %s)", d.btcd2.Name())
	if d.second, err = testnet.StartNode(ctx, testnet.Config{Network: "regtest", Log: d.btcd2}); err != nil {
		return nil, fmt.Errorf("start the second btcd: %w", err)
	}
	if err = d.second.ConnectToCtx(ctx, d.h.Node()); err != nil {
		return nil, fmt.Errorf("connect the second btcd: %w", err)
	}
	if err = d.second.WaitSynced(ctx, d.h.Node()); err != nil {
		return nil, fmt.Errorf("sync the second btcd: %w", err)
	}
	o.Say("chain at height %d: %d wallet transactions, balance %d sat; syncing the watch-only wallet (%s)",
		d.truth.TipHeight, len(d.truth.Txs), d.truth.Balance, d.truth.Xpub)
	d.w, err = wallet.Create(d.dir, wallet.CreateConfig{
		Network: "regtest", Xpubs: []string{d.truth.Xpub}, Birthday: d.truth.StartHeight + 1,
		GapExternal: wallet.DefaultGapExternal, GapInternal: wallet.DefaultGapInternal,
	})
	if err != nil {
		return nil, fmt.Errorf("create wallet: %w", err)
	}
	return d, nil
}

// Wallet returns the demo's watch-only wallet (Close closes it).
func (d *Demo) Wallet() *wallet.Wallet { return d.w }

// Dir returns the wallet's data dir, which outlives Close.
func (d *Demo) Dir() string { return d.dir }

// RPC returns the JSON-RPC address (127.0.0.1) and credentials of the
// btcd that mines the demo chain, valid until Close, so that `privacy
// analyze --btcd-rpc` and `privacy export-universe` can read the chain
// while the demo runs.
func (d *Demo) RPC() (addr, user, pass string) {
	user, pass = d.h.Node().RPCCredentials()
	return d.h.Node().RPCAddr(), user, pass
}

// PeerAddrs returns the P2P addresses on 127.0.0.1 of the btcd that
// mines the chain and of the one that follows it.
func (d *Demo) PeerAddrs() []string {
	return []string{d.h.Node().P2PAddr(), d.second.P2PAddr()}
}

// Drive keeps the chain alive under s: a block every Interval with
// payments to and from the wallet, a reorg now and then, and a filter
// reload every ReloadEvery blocks, each logged to the session's log.
func (d *Demo) Drive(ctx context.Context, s *session.Session) error {
	every := int32(d.opts.ReloadEvery)
	drv, err := testnet.StartDriver(ctx, d.h, testnet.DriverConfig{
		Interval: d.opts.Interval, Keyring: d.key, Purpose: Purpose,
		NextIndex: uint32(d.opts.Addrs), Seed: 2,
		OnBlock: func(height int32, what string) {
			s.Log().Info("demo chain", "height", height, "event", what)
			if every > 0 && height%every == 0 {
				s.Node().ReloadFilter("demo: periodic reload")
			}
		},
	})
	d.driver = drv
	return err
}

// Close stops the live chain, closes the wallet and stops btcd; the data
// dir stays. It returns the errors joined.
func (d *Demo) Close() error {
	var errs []error
	if d.driver != nil {
		errs = append(errs, d.driver.Stop())
		d.driver = nil
	}
	if d.w != nil {
		errs = append(errs, d.w.Close())
		d.w = nil
	}
	if d.h != nil {
		if err := d.h.Close(); err != nil {
			errs = append(errs, fmt.Errorf("stop btcd: %w", err))
		}
		d.h = nil
	}
	if d.second != nil {
		if err := d.second.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stop the second btcd: %w", err))
		}
		d.second = nil
	}
	for _, f := range []**os.File{&d.btcd, &d.btcd2} {
		if *f != nil {
			errs = append(errs, (*f).Close())
			*f = nil
		}
	}
	return errors.Join(errs...)
}
