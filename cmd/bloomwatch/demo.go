package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/bloomwatch/bloomwatch/demo"
	"github.com/bloomwatch/bloomwatch/internal/progress"
	"github.com/bloomwatch/bloomwatch/session"
)

// demoOptions are the flags of `bloomwatch demo`.
type demoOptions struct {
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

// newDemoCmd returns `bloomwatch demo`, which runs the whole thing on a
// local regtest btcd.
func newDemoCmd() *cobra.Command {
	o := &demoOptions{}
	cmd := &cobra.Command{
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
		RunE: o.run,
	}
	f := cmd.Flags()
	f.StringVar(&o.datadir, "datadir", "", "wallet data directory (default: a temporary one, removed at exit)")
	f.IntVar(&o.blocks, "blocks", demo.DefaultBlocks, "blocks of history to build before syncing")
	f.IntVar(&o.txs, "txs", demo.DefaultTxs, "other users' transactions per block")
	f.IntVar(&o.addrs, "addrs", demo.DefaultAddrs, "wallet addresses paid in the history")
	f.DurationVar(&o.interval, "interval", demo.DefaultInterval, "time between new blocks once synced")
	f.IntVar(&o.reloadEvery, "reload-every", demo.DefaultReloadEvery, "reload the filter every n new blocks (0: never)")
	f.BoolVar(&o.untilSynced, "until-synced", false, "exit once synced (no live chain)")
	f.BoolVar(&o.asJSON, "json", false, "headless; print the sync summary as JSON at the end")
	f.BoolVar(&o.noTUI, "no-tui", false, "headless even on a terminal")
	f.StringVar(&o.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	f.Float64Var(&o.fpRate, "fp-rate", demo.DefaultFPRate, "filter false-positive target at capacity (looser than sync's default so false positives show)")
	return cmd
}

// run implements `bloomwatch demo`.
func (o *demoOptions) run(cmd *cobra.Command, _ []string) (err error) {
	const prefix = "demo"
	level, err := parseLogLevel(o.logLevel)
	if err != nil {
		return usagef("%s: %w", prefix, err)
	}
	switch {
	case o.blocks < 1 || o.blocks > 100_000:
		return usagef("%s: --blocks must be in 1..100000", prefix)
	case o.txs < 0 || o.txs > 1_000:
		return usagef("%s: --txs must be in 0..1000", prefix)
	case o.addrs < 1 || o.addrs > 1_000:
		return usagef("%s: --addrs must be in 1..1000", prefix)
	case o.interval < 100*time.Millisecond:
		return usagef("%s: --interval must be at least 100ms", prefix)
	case !(o.fpRate > 0 && o.fpRate < 1):
		return usagef("%s: --fp-rate must be in (0, 1)", prefix)
	case o.reloadEvery < 0:
		return usagef("%s: --reload-every must not be negative", prefix)
	}
	say := func(format string, args ...any) { fmt.Fprintf(cmd.ErrOrStderr(), "demo: "+format+"\n", args...) }
	d, err := demo.Start(cmd.Context(), demo.Options{
		Dir: o.datadir, Blocks: o.blocks, Txs: o.txs, Addrs: o.addrs,
		Interval: o.interval, ReloadEvery: o.reloadEvery, Say: say,
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
		Connect:     d.PeerAddrs(),
		MaxPeers:    2,
		FPRate:      o.fpRate,
		UntilSynced: o.untilSynced,
		Dashboard:   !o.asJSON && !o.noTUI && progress.IsTerminal(cmd.OutOrStdout()),
		LogLevel:    level,
		PeerTimeout: defaultPeerTimeout,
		Stderr:      cmd.ErrOrStderr(),
	}
	var drive session.Driver
	if !o.untilSynced {
		drive = d.Drive
	}
	if err := runSession(cmd, prefix, cfg, o.asJSON, drive); err != nil {
		return err
	}
	if !o.asJSON {
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
