package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// demoPurpose is the demo wallet's account type: BIP84 native segwit,
// whose spends BIP37 can only match through outpoints.
const demoPurpose = 84

// demoFPRate is the demo's filter target at capacity. The light node
// sizes filters with headroom for BLOOM_UPDATE_ALL, so at the default
// target a small wallet's filter matches almost nothing else; the demo
// loosens it so the false-positive panels have something to show.
const demoFPRate = 0.02

// demoOpts are the flags of `bloomwatch demo`.
var demoOpts struct {
	datadir     string
	blocks      int
	txs         int
	addrs       int
	interval    time.Duration
	reloadEvery int
	untilSynced bool
	asJSON      bool
	noTUI       bool
	logLevel    string
	fpRate      float64
}

// demoCmd runs the whole thing on a local regtest btcd.
var demoCmd = &cobra.Command{
	Use:   "demo",
	Short: "Start a local regtest btcd, build a chain with payments to a demo wallet, sync it over BIP37 and open the dashboard",
	Long: `demo starts a btcd on regtest (built from the btcd module in go.mod, listening on
127.0.0.1 only), mines a chain with payments to a demo xpub wallet among other
users' transactions, creates the watch-only wallet and syncs it over BIP37 with
the dashboard open. Then it keeps the chain alive: a block every --interval,
payments to and from the wallet, now and then a reorg and a filter reload, so
every panel moves. q quits and stops btcd.

The first run builds btcd (about a minute); later runs reuse the cached binary.`,
	Args: cobra.NoArgs,
	RunE: runDemo,
}

func init() {
	f := demoCmd.Flags()
	f.StringVar(&demoOpts.datadir, "datadir", "", "wallet data directory (default: a temporary one, removed at exit)")
	f.IntVar(&demoOpts.blocks, "blocks", 150, "blocks of history to build before syncing")
	f.IntVar(&demoOpts.txs, "txs", 8, "other users' transactions per block")
	f.IntVar(&demoOpts.addrs, "addrs", 15, "wallet addresses paid in the history")
	f.DurationVar(&demoOpts.interval, "interval", 4*time.Second, "time between new blocks once synced")
	f.IntVar(&demoOpts.reloadEvery, "reload-every", 10, "reload the filter every n new blocks (0: never)")
	f.BoolVar(&demoOpts.untilSynced, "until-synced", false, "exit once synced (no live chain)")
	f.BoolVar(&demoOpts.asJSON, "json", false, "headless; print the sync summary as JSON at the end")
	f.BoolVar(&demoOpts.noTUI, "no-tui", false, "headless even on a terminal")
	f.StringVar(&demoOpts.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	f.Float64Var(&demoOpts.fpRate, "fp-rate", demoFPRate, "filter false-positive target at capacity (looser than sync's default so false positives show)")
	rootCmd.AddCommand(demoCmd)
}

func runDemo(cmd *cobra.Command, _ []string) (err error) {
	const prefix = "demo"
	level, err := parseLogLevel(demoOpts.logLevel)
	if err != nil {
		return usagef("%s: %w", prefix, err)
	}
	switch {
	case demoOpts.blocks < 1 || demoOpts.blocks > 100_000:
		return usagef("%s: --blocks must be in 1..100000", prefix)
	case demoOpts.txs < 0 || demoOpts.txs > 1_000:
		return usagef("%s: --txs must be in 0..1000", prefix)
	case demoOpts.addrs < 1 || demoOpts.addrs > 1_000:
		return usagef("%s: --addrs must be in 1..1000", prefix)
	case demoOpts.interval < 100*time.Millisecond:
		return usagef("%s: --interval must be at least 100ms", prefix)
	case !(demoOpts.fpRate > 0 && demoOpts.fpRate < 1):
		return usagef("%s: --fp-rate must be in (0, 1)", prefix)
	case demoOpts.reloadEvery < 0:
		return usagef("%s: --reload-every must not be negative", prefix)
	}
	ctx := cmd.Context()
	say := func(format string, args ...any) { fmt.Fprintf(cmd.ErrOrStderr(), "demo: "+format+"\n", args...) }

	dir := demoOpts.datadir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "bloomwatch-demo-")
		if err != nil {
			return fmt.Errorf("%s: %w", prefix, err)
		}
		defer os.RemoveAll(tmp)
		dir = filepath.Join(tmp, "wallet")
	} else if wallet.Exists(dir) {
		return usagef("%s: %s already holds a wallet; the demo builds a fresh chain, so give an empty --datadir", prefix, dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("%s: %w", prefix, err)
	}
	btcdLog, err := os.Create(filepath.Join(dir, "btcd.log"))
	if err != nil {
		return fmt.Errorf("%s: %w", prefix, err)
	}
	defer btcdLog.Close()

	say("building or finding btcd and starting it on regtest, 127.0.0.1 only (btcd log: %s)", btcdLog.Name())
	h, err := testnet.New(ctx, testnet.Options{Log: btcdLog})
	if err != nil {
		return fmt.Errorf("%s: start btcd: %w", prefix, err)
	}
	defer func() {
		if cerr := h.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("%s: stop btcd: %w", prefix, cerr)
		}
	}()
	key, err := testnet.NewKeyring(testnet.DemoSeed, h.Params())
	if err != nil {
		return fmt.Errorf("%s: %w", prefix, err)
	}
	say("mining %d blocks with %d other transactions each and payments to %d wallet addresses", demoOpts.blocks, demoOpts.txs, demoOpts.addrs)
	truth, err := h.BuildChain(ctx, testnet.ChainSpec{
		Blocks: demoOpts.blocks, TxsPerBlock: demoOpts.txs, Keyring: key, Purpose: demoPurpose,
		WatchAddrs: demoOpts.addrs, SpendFraction: 0.4, Seed: 1,
	})
	if err != nil {
		return fmt.Errorf("%s: build chain: %w", prefix, err)
	}
	say("chain at height %d: %d wallet transactions, balance %d sat; syncing the watch-only wallet (%s)",
		truth.TipHeight, len(truth.Txs), truth.Balance, truth.Xpub)
	w, err := wallet.Create(dir, wallet.CreateConfig{
		Network: "regtest", Xpubs: []string{truth.Xpub}, Birthday: truth.StartHeight + 1,
		GapExternal: wallet.DefaultGapExternal, GapInternal: wallet.DefaultGapInternal,
	})
	if err != nil {
		return fmt.Errorf("%s: create wallet: %w", prefix, err)
	}
	defer closeWallet(w, &err)

	var driver *testnet.Driver
	cfg := sessionConfig{
		connect:     []string{h.Node().P2PAddr()},
		maxPeers:    1,
		fpRate:      demoOpts.fpRate,
		untilSynced: demoOpts.untilSynced,
		asJSON:      demoOpts.asJSON,
		tui:         !demoOpts.asJSON && !demoOpts.noTUI && isTerminal(cmd.OutOrStdout()),
		logLevel:    level,
		peerTimeout: defaultPeerTimeout,
	}
	if !demoOpts.untilSynced {
		cfg.onStart = func(ctx context.Context, s *session) error {
			d, derr := testnet.StartDriver(ctx, h, testnet.DriverConfig{
				Interval: demoOpts.interval, Keyring: key, Purpose: demoPurpose,
				NextIndex: uint32(demoOpts.addrs), Seed: 2,
				OnBlock: func(height int32, what string) {
					s.log.Info("demo chain", "height", height, "event", what)
					if demoOpts.reloadEvery > 0 && height%int32(demoOpts.reloadEvery) == 0 {
						s.node.ReloadFilter("demo: periodic reload")
					}
				},
			})
			driver = d
			return derr
		}
	}
	runErr := runSession(cmd, prefix, w, cfg)
	if driver != nil {
		if derr := driver.Stop(); derr != nil && runErr == nil {
			runErr = fmt.Errorf("%s: %w", prefix, derr)
		}
	}
	if runErr != nil {
		return runErr
	}
	if !cfg.asJSON {
		writeDemoEnd(cmd.ErrOrStderr(), dir, demoOpts.datadir != "")
	}
	return nil
}

// writeDemoEnd tells the user where the demo's state is.
func writeDemoEnd(w io.Writer, dir string, kept bool) {
	if kept {
		fmt.Fprintf(w, "demo: wallet, headers and privacy transcript kept in %s (try: bloomwatch wallet balance --datadir %s; bloomwatch privacy analyze --transcript %s --synthetic 1000000)\n",
			dir, dir, filepath.Join(dir, nodeDirName, "transcript.jsonl"))
	}
}
