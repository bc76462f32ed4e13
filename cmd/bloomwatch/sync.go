package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime/pprof"
	"strconv"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/spf13/cobra"

	"github.com/bloomwatch/bloomwatch/session"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/spv/headers"
	"github.com/bloomwatch/bloomwatch/spv/netparams"
	"github.com/bloomwatch/bloomwatch/tui"
)

// defaultPeerTimeout is how long sync waits for a first usable peer
// before it gives up with "no reachable peer".
const defaultPeerTimeout = 30 * time.Second

// logSinkLines is how many log lines wait for the dashboard's log pane.
const logSinkLines = 512

// syncOpts are the flags of `bloomwatch sync`.
var syncOpts struct {
	walletFlags
	connect     []string
	maxPeers    int
	fpRate      float64
	untilSynced bool
	asJSON      bool
	noTUI       bool
	logFile     string
	logLevel    string
	peerTimeout time.Duration
	resetHdrs   bool
	cpuProfile  string
}

// syncCmd syncs the wallet from BIP37 peers.
var syncCmd = &cobra.Command{
	Use:   "sync",
	Short: "Sync the watch-only wallet from BIP37 peers (dashboard on a terminal, headless with --json or --no-tui)",
	Long: `Sync the watch-only wallet of --datadir from full nodes that serve BIP37
bloom filters. The wallet is created from --network, --xpub and --address when
the data dir holds none; given to an existing wallet, new --xpub/--address are
imported (the wallet then rescans from its birthday).

On a terminal sync opens the dashboard; with --json or --no-tui it stays
headless and logs progress to stderr. --until-synced exits once the wallet is
at the best peer's tip; --json prints a summary on stdout when sync ends.
The light node's state (headers, privacy transcript, bans) is kept in
DATADIR/spv.`,
	Args: cobra.NoArgs,
	RunE: runSync,
}

func init() {
	f := syncCmd.Flags()
	syncOpts.registerCreate(f)
	f.StringArrayVar(&syncOpts.connect, "connect", nil, "peer HOST:PORT to sync from (repeatable; required on regtest and simnet)")
	f.IntVar(&syncOpts.maxPeers, "max-peers", spv.DefaultMaxPeers, "outbound peers")
	f.Float64Var(&syncOpts.fpRate, "fp-rate", spv.DefaultFPRate, "bloom filter false-positive target at its capacity")
	f.BoolVar(&syncOpts.untilSynced, "until-synced", false, "exit once the wallet is at the best peer's tip")
	f.BoolVar(&syncOpts.asJSON, "json", false, "headless; print a JSON summary on stdout at the end")
	f.BoolVar(&syncOpts.noTUI, "no-tui", false, "headless even on a terminal")
	f.StringVar(&syncOpts.logFile, "log-file", "", "write the log here (default: stderr headless, DATADIR/bloomwatch.log with the dashboard)")
	f.StringVar(&syncOpts.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	f.DurationVar(&syncOpts.peerTimeout, "peer-timeout", defaultPeerTimeout, "give up when no peer is usable for this long (0: wait forever)")
	f.BoolVar(&syncOpts.resetHdrs, "reset-headers", false, "delete the header store (DATADIR/spv) first and download the headers again; the wallet is kept")
	f.StringVar(&syncOpts.cpuProfile, "cpuprofile", "", "write a CPU profile of the sync to this file (go tool pprof)")
	rootCmd.AddCommand(syncCmd)
}

func runSync(cmd *cobra.Command, _ []string) (err error) {
	const prefix = "sync"
	level, err := parseLogLevel(syncOpts.logLevel)
	if err != nil {
		return usagef("%s: %w", prefix, err)
	}
	if syncOpts.maxPeers < 1 {
		return usagef("%s: --max-peers must be at least 1", prefix)
	}
	if !(syncOpts.fpRate > 0 && syncOpts.fpRate < 1) {
		return usagef("%s: --fp-rate must be in (0, 1)", prefix)
	}
	if syncOpts.peerTimeout < 0 {
		return usagef("%s: --peer-timeout must not be negative", prefix)
	}
	for _, c := range syncOpts.connect {
		if err := checkPeerAddr(c); err != nil {
			return usagef("%s: --connect %q: %w", prefix, c, err)
		}
	}
	if syncOpts.network != "" {
		n, err := netparams.Lookup(syncOpts.network)
		if err != nil {
			return usagef("%s: %w", prefix, err)
		}
		if len(syncOpts.connect) == 0 && len(n.Seeds) == 0 {
			return usagef("%s: %s has no DNS seeds: give --connect HOST:PORT", prefix, n.Name)
		}
	}
	if syncOpts.cpuProfile != "" {
		stop, err := startCPUProfile(syncOpts.cpuProfile)
		if err != nil {
			return usagef("%s: --cpuprofile: %w", prefix, err)
		}
		defer stop()
	}
	w, _, err := openOrCreateWallet(prefix, &syncOpts.walletFlags)
	if err != nil {
		return err
	}
	defer closeWallet(w, &err)
	cfg := session.Config{
		Wallet:       w,
		Connect:      syncOpts.connect,
		MaxPeers:     syncOpts.maxPeers,
		FPRate:       syncOpts.fpRate,
		UntilSynced:  syncOpts.untilSynced,
		Dashboard:    !syncOpts.asJSON && !syncOpts.noTUI && isTerminal(cmd.OutOrStdout()),
		LogFile:      syncOpts.logFile,
		LogLevel:     level,
		PeerTimeout:  syncOpts.peerTimeout,
		ResetHeaders: syncOpts.resetHdrs,
		Stderr:       cmd.ErrOrStderr(),
	}
	return runSession(cmd, prefix, cfg, syncOpts.asJSON, nil)
}

// checkPeerAddr accepts HOST:PORT with a numeric port.
func checkPeerAddr(s string) error {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Errorf("want HOST:PORT: %w", err)
	}
	if host == "" {
		return errors.New("empty host")
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || p == 0 {
		return fmt.Errorf("bad port %q", port)
	}
	return nil
}

// parseLogLevel parses --log-level.
func parseLogLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("--log-level %q: want debug, info, warn or error", s)
	}
	return l, nil
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// runSession runs a sync session over cfg.Wallet: headless until it ends,
// or under the dashboard until the user quits; drive, when set, runs once
// the node has started (the demo's live chain). Then it prints the summary
// (asJSON) or a one-line report.
func runSession(cmd *cobra.Command, prefix string, cfg session.Config, asJSON bool, drive func(context.Context, *session.Session) error) error {
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	network, err := netparams.Lookup(cfg.Wallet.Network())
	if err != nil {
		return fmt.Errorf("%s: %w", prefix, err)
	}
	if len(cfg.Connect) == 0 && len(network.Seeds) == 0 {
		return usagef("%s: %s has no DNS seeds: give --connect HOST:PORT", prefix, network.Name)
	}
	var sink *tui.LogSink
	if cfg.Dashboard {
		sink = tui.NewLogSink(logSinkLines)
		cfg.LogTee = sink
	}
	s, err := session.New(cfg)
	if err != nil {
		if errors.Is(err, headers.ErrCorrupt) {
			err = fmt.Errorf("%w; the wallet is intact: run sync again with --reset-headers to delete the header store and download the headers again", err)
		}
		return fmt.Errorf("%s: %w", prefix, err)
	}
	runErr := s.Start(ctx)
	if runErr == nil && drive != nil {
		runErr = drive(ctx, s)
	}
	if runErr == nil {
		if cfg.Dashboard {
			runErr = runDashboard(ctx, cmd, s, cfg, sink, cancel)
		} else {
			runErr = s.Wait(ctx)
		}
	}
	if stopErr := s.Stop(); runErr == nil {
		runErr = stopErr
	}
	if runErr != nil {
		return fmt.Errorf("%s: %w", prefix, runErr)
	}
	if asJSON {
		sum, err := s.Summary()
		if err != nil {
			return fmt.Errorf("%s: %w", prefix, err)
		}
		return writeJSON(cmd, sum)
	}
	if !cfg.Dashboard {
		st := s.Node().Status()
		fmt.Fprintf(cmd.ErrOrStderr(), "synced to height %d; %d blocks, %d matched txs (%d the wallet's, %d false positives), %d bytes received\n",
			st.WatcherHeight, st.Blocks, st.Matched, st.Relevant, st.FalsePositives, st.BytesReceived)
	}
	return nil
}

// runDashboard shows the dashboard until the user quits or the session
// ends on its own, and returns the session's error, if any.
func runDashboard(ctx context.Context, cmd *cobra.Command, s *session.Session, cfg session.Config, sink *tui.LogSink, cancel context.CancelFunc) error {
	model := tui.New(tui.Config{
		Network:  s.Network().Name,
		Events:   s.Events(),
		Privacy:  s.Readings(),
		Wallet:   cfg.Wallet,
		Reload:   s.Node().ReloadFilter,
		Quit:     cancel,
		Finished: s.Done(),
		Log:      sink.Lines(),
	})
	out, ok := cmd.OutOrStdout().(*os.File)
	if !ok {
		out = os.Stdout
	}
	p := tea.NewProgram(model, tea.WithAltScreen(), tea.WithContext(ctx), tea.WithOutput(out), tea.WithInput(os.Stdin))
	if _, err := p.Run(); err != nil && !errors.Is(err, tea.ErrProgramKilled) && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("dashboard: %w", err)
	}
	if err := s.Err(); err != nil {
		return err
	}
	return s.Node().Status().Err
}

// startCPUProfile starts a CPU profile into path and returns its stop.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}
