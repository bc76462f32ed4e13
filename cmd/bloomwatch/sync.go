package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/spv/netparams"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// nodeDirName is the light node's directory inside the wallet's data dir:
// the header store, the privacy transcript, the ban list and the filter
// tweak live there.
const nodeDirName = "spv"

// defaultPeerTimeout is how long sync waits for a first usable peer
// before it gives up with "no reachable peer".
const defaultPeerTimeout = 30 * time.Second

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

// sessionConfig is what a sync session needs, from `sync`'s flags or from
// `demo`.
type sessionConfig struct {
	connect     []string
	maxPeers    int
	fpRate      float64
	untilSynced bool
	tui         bool
	asJSON      bool
	logFile     string
	logLevel    slog.Level
	peerTimeout time.Duration
	// members, when positive, is the wallet size the privacy meter uses
	// instead of the filter's estimate.
	members float64
	// resetHeaders deletes the header store before the node opens it.
	resetHeaders bool
	// onStart runs once the node is started (the demo's chain driver).
	onStart func(ctx context.Context, s *session) error
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
	cfg := sessionConfig{
		connect:      syncOpts.connect,
		maxPeers:     syncOpts.maxPeers,
		fpRate:       syncOpts.fpRate,
		untilSynced:  syncOpts.untilSynced,
		asJSON:       syncOpts.asJSON,
		tui:          !syncOpts.asJSON && !syncOpts.noTUI && isTerminal(cmd.OutOrStdout()),
		logFile:      syncOpts.logFile,
		logLevel:     level,
		peerTimeout:  syncOpts.peerTimeout,
		resetHeaders: syncOpts.resetHdrs,
	}
	return runSession(cmd, prefix, w, cfg)
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

// openLog returns the session's logger: to the --log-file, else to a file
// in the data dir when the dashboard owns the terminal, else to stderr.
// The returned close function closes the file, if any.
func openLog(cfg sessionConfig, datadir string, stderr io.Writer, extra io.Writer) (*slog.Logger, func() error, error) {
	var out io.Writer = stderr
	closeFn := func() error { return nil }
	path := cfg.logFile
	if path == "" && cfg.tui {
		path = filepath.Join(datadir, "bloomwatch.log")
	}
	if path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("open log: %w", err)
		}
		out, closeFn = f, f.Close
	}
	if extra != nil {
		out = io.MultiWriter(out, extra)
	}
	h := slog.NewTextHandler(out, &slog.HandlerOptions{Level: cfg.logLevel, ReplaceAttr: shortTime})
	return slog.New(h), closeFn, nil
}

// runSession builds the light node for w, runs it headless or under the
// dashboard, and prints the summary.
func runSession(cmd *cobra.Command, prefix string, w *wallet.Wallet, cfg sessionConfig) (err error) {
	ctx := cmd.Context()
	network, err := netparams.Lookup(w.Network())
	if err != nil {
		return fmt.Errorf("%s: %w", prefix, err)
	}
	if len(cfg.connect) == 0 && len(network.Seeds) == 0 {
		return usagef("%s: %s has no DNS seeds: give --connect HOST:PORT", prefix, network.Name)
	}
	s, err := newSession(ctx, w, network, cfg, cmd.ErrOrStderr())
	if err != nil {
		return fmt.Errorf("%s: %w", prefix, err)
	}
	runErr := s.run(ctx, cmd.OutOrStdout())
	stopErr := s.stop()
	if runErr == nil {
		runErr = stopErr
	}
	if runErr != nil {
		return fmt.Errorf("%s: %w", prefix, runErr)
	}
	if cfg.asJSON {
		sum, err := s.summary()
		if err != nil {
			return fmt.Errorf("%s: %w", prefix, err)
		}
		return writeJSON(cmd, sum)
	}
	if !cfg.tui {
		st := s.node.Status()
		fmt.Fprintf(cmd.ErrOrStderr(), "synced to height %d; %d blocks, %d matched txs (%d the wallet's, %d false positives), %d bytes received\n",
			st.WatcherHeight, st.Blocks, st.Matched, st.Relevant, st.FalsePositives, st.BytesReceived)
	}
	return nil
}

// shortTime prints log times as 15:04:05.000: the log pane is narrow and
// a sync rarely spans days.
func shortTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey && a.Value.Kind() == slog.KindTime {
		return slog.String(slog.TimeKey, a.Value.Time().Format("15:04:05.000"))
	}
	return a
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
