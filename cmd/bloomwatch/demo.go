package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/bloomwatch/bloomwatch/demo"
	"github.com/bloomwatch/bloomwatch/internal/amount"
	"github.com/bloomwatch/bloomwatch/internal/progress"
	"github.com/bloomwatch/bloomwatch/nodeapi"
	"github.com/bloomwatch/bloomwatch/session"
	"github.com/bloomwatch/bloomwatch/spv"
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
	apiListen   string
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

While it runs, the demo serves the node API on its data dir (docs/API.md):
wallet balance --datadir DEMO and the other wallet commands ask it, and its
faucet pays any regtest address: bloomwatch demo pay ADDRESS AMOUNT (then
bloomwatch demo mine to confirm what waits). Your own wallet syncs from the
demo's two btcd with the sync command it prints.

While it runs, the demo's btcd answers JSON-RPC on 127.0.0.1 (the address,
user and password are printed at the start and in the log pane), so that
privacy analyze --btcd-rpc and privacy export-universe can read its chain.
The data dir (--datadir, or a new one in the system's temporary directory)
is kept after the demo: the wallet, the headers, the privacy transcript and
the btcd logs; the last lines say where, and the privacy analyze command to
run on it.

The first run builds btcd (about a minute); later runs reuse the cached binary.`,
		Args: cobra.NoArgs,
		RunE: o.run,
	}
	f := cmd.Flags()
	f.StringVar(&o.datadir, "datadir", "", "data directory for the wallet, headers, transcript and btcd logs, kept after the demo (default: a new one in the system's temporary directory, also kept)")
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
	registerAPIListen(f, &o.apiListen)
	cmd.AddCommand(newDemoPayCmd(), newDemoMineCmd())
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
	if err := nodeapi.CheckListen(o.apiListen); err != nil {
		return usagef("%s: --api-listen: %w", prefix, err)
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
	inv := invocation()
	say("data dir %s (kept after the demo; btcd logs btcd.log and btcd2.log in it)", d.Dir())
	try := tryLines(inv, d)
	for _, l := range try {
		say("%s", l)
	}
	defer func() {
		if cerr := d.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("%s: %w", prefix, cerr)
		}
		if err == nil {
			writeDemoEnd(cmd.ErrOrStderr(), inv, d.Dir())
		}
	}()
	cfg := session.Config{
		Wallet:      d.Wallet(),
		Node:        spv.Config{Connect: d.PeerAddrs(), MaxPeers: 2, FPRate: o.fpRate},
		UntilSynced: o.untilSynced,
		Dashboard:   !o.asJSON && !o.noTUI && progress.IsTerminal(cmd.OutOrStdout()),
		LogLevel:    level,
		PeerTimeout: defaultPeerTimeout,
		Stderr:      cmd.ErrOrStderr(),
	}
	var drive session.Driver
	if !o.untilSynced {
		drive = func(ctx context.Context, s *session.Session) error {
			// The dashboard's log pane shows them while the demo runs:
			// the lines above are hidden under it.
			for _, l := range try {
				s.Log().Info(l)
			}
			return d.Drive(ctx, s)
		}
	}
	unmark, err := demo.MarkRunning(d.Dir())
	if err != nil {
		return fmt.Errorf("%s: record the running demo: %w", prefix, err)
	}
	defer unmark()
	return runSession(cmd, prefix, cfg, o.asJSON, drive, nodeAPI{listen: o.apiListen,
		methods: func(*session.Session) map[string]nodeapi.Handler { return d.Methods() }})
}

// demoClientOptions are the flags of `demo pay` and `demo mine`.
type demoClientOptions struct {
	datadir string
	asJSON  bool
}

// register adds the flags.
func (o *demoClientOptions) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.datadir, "datadir", "", "the running demo's data dir (default: the one the running demo recorded in ~/.bloomwatch/"+demo.RunningFile+")")
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print JSON")
}

// call asks the running demo's node API method with params into result.
func (o *demoClientOptions) call(cmd *cobra.Command, prefix, method string, params, result any) error {
	dir := o.datadir
	if dir == "" {
		var err error
		if dir, err = demo.RunningDir(); err != nil {
			return usagef("%s: %w", prefix, err)
		}
	}
	c, err := nodeapi.Dial(cmd.Context(), dir)
	if errors.Is(err, nodeapi.ErrNoNode) {
		return usagef("%s: no demo runs on %s: %w", prefix, dir, err)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", prefix, err)
	}
	defer c.Close()
	if err := c.Call(cmd.Context(), method, params, result); err != nil {
		var e *nodeapi.Error
		if errors.As(err, &e) && e.Code == nodeapi.CodeNoMethod {
			return usagef("%s: the node on %s is not a demo (it has no faucet)", prefix, dir)
		}
		return walletErr(prefix, err)
	}
	return nil
}

// newDemoPayCmd returns `demo pay`.
func newDemoPayCmd() *cobra.Command {
	o := &demoClientOptions{}
	cmd := &cobra.Command{
		Use:   "pay ADDRESS AMOUNT",
		Short: "Pay any regtest address from the running demo's coins and mine a block that confirms it (the faucet)",
		Long: "Pay AMOUNT (BTC, 0.5, or satoshis, 50000sat) to ADDRESS, any regtest address (your\n" +
			"own wallet's: bloomwatch wallet receive), from the running demo's coins, and mine a\n" +
			"block on the demo's chain that confirms it. It reaches the demo through its node API.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			const prefix = "demo pay"
			amt, err := parseBTCAmount(args[1])
			if err != nil {
				return usagef("%s: %w", prefix, err)
			}
			var p demo.Payment
			if err := o.call(cmd, prefix, demo.MethodPay, demo.PayParams{Address: args[0], AmountSat: int64(amt)}, &p); err != nil {
				return err
			}
			if o.asJSON {
				return writeJSON(cmd, p)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "paid %s BTC to %s in %s:%d, confirmed in block %d %s\n",
				amount.BTC(p.AmountSat), p.Address, p.Txid, p.Vout, p.Height, p.Block)
			return err
		},
	}
	o.register(cmd)
	return cmd
}

// newDemoMineCmd returns `demo mine`.
func newDemoMineCmd() *cobra.Command {
	o := &demoClientOptions{}
	cmd := &cobra.Command{
		Use:   "mine [BLOCKS]",
		Short: "Mine blocks on the running demo's chain (default 1), with what its mempool holds",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			const prefix = "demo mine"
			n := 1
			if len(args) == 1 {
				v, err := strconv.Atoi(args[0])
				if err != nil || v < 1 || v > demo.MaxMine {
					return usagef("%s: BLOCKS %q: a number from 1 to %d", prefix, args[0], demo.MaxMine)
				}
				n = v
			}
			var m demo.Mined
			if err := o.call(cmd, prefix, demo.MethodMine, demo.MineParams{Blocks: n}, &m); err != nil {
				return err
			}
			if o.asJSON {
				return writeJSON(cmd, m)
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "mined %d block(s): tip %d %s\n", m.Blocks, m.Height, m.Block)
			return err
		},
	}
	o.register(cmd)
	return cmd
}

// tryLines are the commands that read the running demo's chain over its
// btcd's JSON-RPC (loopback only, until the demo ends), as the user can
// paste them: inv is how bloomwatch was invoked.
func tryLines(inv string, d *demo.Demo) []string {
	addr, user, pass := d.RPC()
	rpc := fmt.Sprintf("--btcd-rpc %s --rpcuser %s --rpcpass %s", addr, user, pass)
	return []string{
		fmt.Sprintf("while the demo runs, its btcd answers JSON-RPC on %s (user %s, password %s; 127.0.0.1 only, until the demo ends)", addr, user, pass),
		fmt.Sprintf("try, in another terminal: %s privacy analyze --transcript %s %s --outpoints",
			inv, shellQuote(session.TranscriptPath(d.Dir())), rpc),
		fmt.Sprintf("or write the chain's candidates to a file: %s privacy export-universe --out %s %s",
			inv, shellQuote(filepath.Join(d.Dir(), "universe.txt")), rpc),
		fmt.Sprintf("the demo's wallet while it runs (its node answers): %s wallet balance --datadir %s", inv, shellQuote(d.Dir())),
		fmt.Sprintf("your own wallet on the demo's chain (one filter peer, the other left for broadcast): %s sync --network regtest --max-peers 1 --connect %s",
			inv, strings.Join(d.PeerAddrs(), " --connect ")),
		fmt.Sprintf("the faucet pays any regtest address and mines: %s demo pay ADDRESS 0.5; %s demo mine confirms what waits", inv, inv),
	}
}

// writeDemoEnd tells the user, after the demo, that its data dir is kept,
// what it holds, how to remove it, and the privacy analyze command to run
// on it (inv is how bloomwatch was invoked, so that the command works as
// printed).
func writeDemoEnd(w io.Writer, inv, dir string) {
	size := ""
	if n, err := dirSize(dir); err == nil {
		size = fmt.Sprintf(", %.1f MB", float64(n)/1e6)
	}
	q := shellQuote(dir)
	fmt.Fprintf(w, "demo: btcd stopped; the data dir is kept: %s (wallet, headers, privacy transcript, btcd logs%s; rm -r %s removes it)\n",
		dir, size, q)
	fmt.Fprintf(w, "demo: what your filters told the peers: %s privacy analyze --transcript %s --synthetic 1000000\n",
		inv, shellQuote(session.TranscriptPath(dir)))
	fmt.Fprintf(w, "demo: the wallet: %s wallet balance --datadir %s\n", inv, q)
}

// dirSize sums the sizes of the regular files under dir.
func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.Type().IsRegular() {
			info, err := e.Info()
			if err != nil {
				return err
			}
			n += info.Size()
		}
		return nil
	})
	return n, err
}

// invocation is how the user ran bloomwatch, for the commands the demo
// prints: "go run ./cmd/bloomwatch" (or the module path, outside the
// source tree) under go run, whose binary lives in a temporary build
// directory; the path as typed when it has a directory part; else
// "bloomwatch", found on PATH.
func invocation() string {
	exe := os.Args[0]
	if strings.Contains(filepath.ToSlash(exe), "/go-build") {
		if _, err := os.Stat(filepath.Join("cmd", "bloomwatch", "main.go")); err == nil {
			return "go run ./cmd/bloomwatch"
		}
		return "go run github.com/bloomwatch/bloomwatch/cmd/bloomwatch"
	}
	if strings.ContainsRune(exe, filepath.Separator) {
		return shellQuote(exe)
	}
	return "bloomwatch"
}

// shellQuote quotes s for a POSIX shell when it holds anything but
// letters, digits and /._-+:@=,%.
func shellQuote(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:@=,%", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
