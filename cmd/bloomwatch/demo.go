package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/bloomwatch/bloomwatch/demo"
	"github.com/bloomwatch/bloomwatch/session"
)

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
	f.IntVar(&demoOpts.blocks, "blocks", demo.DefaultBlocks, "blocks of history to build before syncing")
	f.IntVar(&demoOpts.txs, "txs", demo.DefaultTxs, "other users' transactions per block")
	f.IntVar(&demoOpts.addrs, "addrs", demo.DefaultAddrs, "wallet addresses paid in the history")
	f.DurationVar(&demoOpts.interval, "interval", demo.DefaultInterval, "time between new blocks once synced")
	f.IntVar(&demoOpts.reloadEvery, "reload-every", demo.DefaultReloadEvery, "reload the filter every n new blocks (0: never)")
	f.BoolVar(&demoOpts.untilSynced, "until-synced", false, "exit once synced (no live chain)")
	f.BoolVar(&demoOpts.asJSON, "json", false, "headless; print the sync summary as JSON at the end")
	f.BoolVar(&demoOpts.noTUI, "no-tui", false, "headless even on a terminal")
	f.StringVar(&demoOpts.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	f.Float64Var(&demoOpts.fpRate, "fp-rate", demo.DefaultFPRate, "filter false-positive target at capacity (looser than sync's default so false positives show)")
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
	say := func(format string, args ...any) { fmt.Fprintf(cmd.ErrOrStderr(), "demo: "+format+"\n", args...) }
	d, err := demo.Start(cmd.Context(), demo.Options{
		Dir: demoOpts.datadir, Blocks: demoOpts.blocks, Txs: demoOpts.txs, Addrs: demoOpts.addrs,
		Interval: demoOpts.interval, ReloadEvery: demoOpts.reloadEvery, Say: say,
	})
	if errors.Is(err, demo.ErrDirHasWallet) {
		return usagef("%s: --datadir %w", prefix, err)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", prefix, err)
	}
	defer func() {
		if cerr := d.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("%s: %w", prefix, cerr)
		}
	}()
	cfg := session.Config{
		Wallet:      d.Wallet(),
		Connect:     []string{d.PeerAddr()},
		MaxPeers:    1,
		FPRate:      demoOpts.fpRate,
		UntilSynced: demoOpts.untilSynced,
		Dashboard:   !demoOpts.asJSON && !demoOpts.noTUI && isTerminal(cmd.OutOrStdout()),
		LogLevel:    level,
		PeerTimeout: defaultPeerTimeout,
		Stderr:      cmd.ErrOrStderr(),
	}
	var drive func(context.Context, *session.Session) error
	if !demoOpts.untilSynced {
		drive = d.Drive
	}
	if err := runSession(cmd, prefix, cfg, demoOpts.asJSON, drive); err != nil {
		return err
	}
	if !demoOpts.asJSON {
		writeDemoEnd(cmd.ErrOrStderr(), d.Dir(), d.Kept())
	}
	return nil
}

// writeDemoEnd tells the user where the demo's state is.
func writeDemoEnd(w io.Writer, dir string, kept bool) {
	if kept {
		fmt.Fprintf(w, "demo: wallet, headers and privacy transcript kept in %s (try: bloomwatch wallet balance --datadir %s; bloomwatch privacy analyze --transcript %s --synthetic 1000000)\n",
			dir, dir, session.TranscriptPath(dir))
	}
}
