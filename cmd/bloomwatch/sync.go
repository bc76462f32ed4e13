package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/bloomwatch/bloomwatch/filterpolicy"
	"github.com/bloomwatch/bloomwatch/internal/progress"
	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/bloomwatch/bloomwatch/nodeapi"
	"github.com/bloomwatch/bloomwatch/session"
	"github.com/bloomwatch/bloomwatch/session/dashboard"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/spv/headers"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// defaultPeerTimeout is how long sync waits for a first usable peer
// before it gives up with "no reachable peer".
const defaultPeerTimeout = 30 * time.Second

// syncOptions are the flags of `bloomwatch sync`.
type syncOptions struct {
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
	checkEvery  int
	fullEvery   int
	proxy       string
	isolation   bool
	decoys      int
	transport   string
	padFilters  string
	apiListen   string
	protocol    string
	prefer      string
}

// newSyncCmd returns `bloomwatch sync`, which syncs the wallet from BIP37
// peers.
func newSyncCmd() *cobra.Command {
	o := &syncOptions{}
	cmd := &cobra.Command{
		Use:   "sync",
		Short: "Sync the watch-only wallet from BIP37 peers (dashboard on a terminal, headless with --json or --no-tui)",
		Long: fmt.Sprintf(`Sync the watch-only wallet of --datadir from full nodes that serve BIP37
bloom filters. The wallet is created from --network, --xpub and --address when
the data dir holds none; given to an existing wallet, new --xpub/--address are
imported (the wallet then rescans from its birthday).

On a terminal sync opens the dashboard; with --json or --no-tui it stays
headless and logs progress to stderr. --until-synced exits once the wallet is
at the best peer's tip and no block awaits an omission check; a check waits up
to %v for a second peer to get its block, and one that cannot finish makes
sync exit non-zero with the reason. --json prints a summary on stdout when sync
ends ("state": "synced", or "at the tip, N blocks awaiting a check").
The light node's state (headers, privacy transcript, bans) is kept in
DATADIR/spv.

While it runs, sync serves the node API on 127.0.0.1 (--api-listen; a
cookie and the address in the data dir, docs/API.md): wallet balance, txs,
utxos, addresses, stats, export-truth, receive, psbt and broadcast on the
same data dir ask it, and open the files when no node runs.`, spv.DefaultCheckWait),
		Args: cobra.NoArgs,
		RunE: o.run,
	}
	f := cmd.Flags()
	o.registerCreate(f)
	f.StringArrayVar(&o.connect, "connect", nil, "peer HOST:PORT to sync from (repeatable; required on regtest and simnet)")
	f.IntVar(&o.maxPeers, "max-peers", spv.DefaultMaxPeers, "outbound peers")
	f.Float64Var(&o.fpRate, "fp-rate", filterpolicy.DefaultFPRate, "bloom filter false-positive target at its capacity")
	f.BoolVar(&o.untilSynced, "until-synced", false, "exit once the wallet is at the best peer's tip and every block awaiting an omission check is checked (non-zero when a check cannot finish)")
	f.BoolVar(&o.asJSON, "json", false, "headless; print a JSON summary on stdout at the end")
	f.BoolVar(&o.noTUI, "no-tui", false, "headless even on a terminal")
	f.StringVar(&o.logFile, "log-file", "", "write the log here (default: stderr headless, DATADIR/bloomwatch.log with the dashboard)")
	f.StringVar(&o.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	f.DurationVar(&o.peerTimeout, "peer-timeout", defaultPeerTimeout, "give up when no peer is usable for this long (0: wait forever)")
	f.BoolVar(&o.resetHdrs, "reset-headers", false, "delete the header store (DATADIR/spv) first and download the headers again; the wallet is kept")
	f.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the sync to this file (go tool pprof)")
	f.IntVar(&o.checkEvery, "check-every", 0, fmt.Sprintf("ask blocks again from a second peer to catch hidden transactions: N checks one block in N at random, -1 never (default %d: every block, when a second peer is connected)", spv.DefaultSpotCheckEvery))
	f.StringVar(&o.proxy, "proxy", "", "SOCKS5 proxy IP:PORT for every peer connection, as Core's -proxy (Tor: 127.0.0.1:9050); no local DNS lookup while set")
	f.BoolVar(&o.isolation, "proxy-isolation", true, "a SOCKS username of its own per connection, so Tor gives each peer its own circuit")
	f.IntVar(&o.decoys, "decoys", 0, fmt.Sprintf("put N graph-near decoys (scripts of the wallet's counterparties, kept in DATADIR/spv/%s) in every filter; they cost the false positives of those counterparties' later transactions (0 to %d, 0: none)", spv.DecoyFile, spv.MaxDecoys))
	f.StringVar(&o.transport, "transport", string(spv.TransportAuto), "P2P transport: auto (BIP324 v2 first with --connect peers and peers advertising NODE_P2P_V2, v1 when the peer speaks only v1), v2 (encrypted only: plaintext peers are refused) or v1 (plaintext only)")
	f.StringVar(&o.padFilters, "pad-filters", string(filterpolicy.PadSteps), "pad each filterload sent over v2 with a decoy packet so an on-path observer sees a size class: steps (4 KiB, 16 KiB or the largest filterload), max (always the largest) or none")
	registerAPIListen(f, &o.apiListen)
	f.StringVar(&o.protocol, "protocol", string(spv.ProtocolBIP37), "how blocks are found: bip37 (a bloom filter loaded into NODE_BLOOM peers), bip158 (compact block filters from NODE_COMPACT_FILTERS peers, matched locally; matching blocks fetched whole; no mempool: unconfirmed payments are not seen) or auto (the first peer's services decide, --prefer when it serves both)")
	f.StringVar(&o.prefer, "prefer", string(spv.ProtocolBIP37), "with --protocol auto, the protocol for a peer that serves both: bip37 or bip158")
	f.IntVar(&o.fullEvery, "full-block-every", 0, "ask one block in N whole from the peer that filtered it (omission check with one peer; costs the full block; -1 or 0: never)")
	return cmd
}

// run implements `bloomwatch sync`.
func (o *syncOptions) run(cmd *cobra.Command, _ []string) (err error) {
	const prefix = "sync"
	level, err := parseLogLevel(o.logLevel)
	if err != nil {
		return usagef("%s: %w", prefix, err)
	}
	if o.maxPeers < 1 {
		return usagef("%s: --max-peers must be at least 1", prefix)
	}
	if !(o.fpRate > 0 && o.fpRate < 1) {
		return usagef("%s: --fp-rate must be in (0, 1)", prefix)
	}
	if o.peerTimeout < 0 {
		return usagef("%s: --peer-timeout must not be negative", prefix)
	}
	for _, c := range o.connect {
		if err := spv.CheckPeerAddr(c); err != nil {
			return usagef("%s: --connect: %w", prefix, err)
		}
	}
	if o.proxy != "" {
		if _, err := spv.CheckProxy(o.proxy); err != nil {
			return usagef("%s: --proxy: %w", prefix, err)
		}
	}
	if o.network != "" {
		n, err := netparams.Lookup(o.network)
		if err != nil {
			return usagef("%s: %w", prefix, err)
		}
		if len(o.connect) == 0 && len(n.Seeds) == 0 {
			// Before the wallet is created: a refused sync writes nothing.
			return usagef("%s: %s has no DNS seeds: give --connect HOST:PORT", prefix, n.Name)
		}
	}
	transport, err := spv.ParseTransport(o.transport)
	if err != nil {
		return usagef("%s: --transport %q: want auto, v2 or v1", prefix, o.transport)
	}
	protocol, err := spv.ParseProtocol(o.protocol)
	if err != nil {
		return usagef("%s: --protocol %q: want bip37, bip158 or auto", prefix, o.protocol)
	}
	prefer, err := spv.ParseProtocol(o.prefer)
	if err != nil || prefer == spv.ProtocolAuto {
		return usagef("%s: --prefer %q: want bip37 or bip158", prefix, o.prefer)
	}
	if protocol != spv.ProtocolBIP37 && o.decoys > 0 {
		return usagef("%s: --decoys are bloom-filter elements: not with --protocol %s", prefix, protocol)
	}
	padding, err := filterpolicy.ParseFilterPadding(o.padFilters)
	if err != nil {
		return usagef("%s: --pad-filters %q: want steps, max or none", prefix, o.padFilters)
	}
	if err := nodeapi.CheckListen(o.apiListen); err != nil {
		return usagef("%s: --api-listen: %w", prefix, err)
	}
	if o.decoys < 0 || o.decoys > spv.MaxDecoys {
		return usagef("%s: --decoys must be in [0, %d]", prefix, spv.MaxDecoys)
	}
	if o.checkEvery < -1 || o.fullEvery < -1 {
		return usagef("%s: --check-every and --full-block-every take N >= 1, or -1 for never", prefix)
	}
	if o.cpuProfile != "" {
		stop, err := startCPUProfile(o.cpuProfile)
		if err != nil {
			return usagef("%s: --cpuprofile: %w", prefix, err)
		}
		defer stop()
	}
	before := snapshotDir(o.datadir)
	w, created, err := openOrCreateWallet(prefix, &o.walletFlags)
	if err != nil {
		return err
	}
	defer closeWallet(w, &err)
	cfg := session.Config{
		Wallet: w,
		Node: spv.Config{
			Connect:          o.connect,
			MaxPeers:         o.maxPeers,
			FPRate:           o.fpRate,
			SpotCheckEvery:   o.checkEvery,
			FullBlockEvery:   o.fullEvery,
			Proxy:            o.proxy,
			NoProxyIsolation: !o.isolation,
			Decoys:           o.decoys,
			Transport:        transport,
			FilterPadding:    padding,
			Protocol:         protocol,
			Prefer:           prefer,
		},
		UntilSynced:  o.untilSynced,
		Dashboard:    !o.asJSON && !o.noTUI && progress.IsTerminal(cmd.OutOrStdout()),
		LogFile:      o.logFile,
		LogLevel:     level,
		PeerTimeout:  o.peerTimeout,
		ResetHeaders: o.resetHdrs,
		Stderr:       cmd.ErrOrStderr(),
	}
	err = runSession(cmd, prefix, cfg, o.asJSON, nil, nodeAPI{listen: o.apiListen})
	if err != nil && created {
		return o.afterFailedFirstSync(w, before, err)
	}
	return err
}

// afterFailedFirstSync handles a sync that created its wallet and failed
// (no reachable peer, a refused connection, an interruption): when no
// block was applied, everything the run created in the data dir is removed
// (the directory too when the run created it), so the data dir is as the
// user left it; otherwise the wallet is kept. Either way the one error
// line says which.
func (o *syncOptions) afterFailedFirstSync(w *wallet.Wallet, before dirState, err error) error {
	if h := w.HistoryPoint().Height; h >= 0 {
		return fmt.Errorf("%w; the new wallet is kept in %s (synced to height %d): sync again to continue", err, o.datadir, h)
	}
	if cerr := w.Close(); cerr != nil {
		return fmt.Errorf("%w; the new wallet in %s could not be closed (%v) and was kept", err, o.datadir, cerr)
	}
	if rerr := before.restore(o.datadir, o.logFile, o.cpuProfile); rerr != nil {
		return fmt.Errorf("%w; removing the new wallet from %s failed: %v", err, o.datadir, rerr)
	}
	if !before.existed {
		return fmt.Errorf("%w; nothing was synced, so the new wallet was removed and %s not kept", err, o.datadir)
	}
	return fmt.Errorf("%w; nothing was synced, so the new wallet was removed and %s is as it was", err, o.datadir)
}

// dirState is what a data dir held before a run created a wallet in it.
type dirState struct {
	existed bool
	names   map[string]bool
}

// snapshotDir records whether dir exists and the names it holds.
func snapshotDir(dir string) dirState {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return dirState{existed: !errors.Is(err, fs.ErrNotExist)}
	}
	s := dirState{existed: true, names: make(map[string]bool, len(entries))}
	for _, e := range entries {
		s.names[e.Name()] = true
	}
	return s
}

// restore removes what was created in dir since the snapshot: dir itself
// when it did not exist, else the entries it did not hold, except the
// files named in keep (a --log-file or --cpuprofile the user asked for).
func (s dirState) restore(dir string, keep ...string) error {
	kept := func(path string) bool {
		for _, k := range keep {
			k = filepath.Clean(k)
			if k != "." && (k == path || strings.HasPrefix(k, path+string(filepath.Separator))) {
				return true
			}
		}
		return false
	}
	for _, k := range keep {
		if k != "" && strings.HasPrefix(filepath.Clean(k), filepath.Clean(dir)+string(filepath.Separator)) {
			// A file the user named lives in it: remove around it.
			s.existed = true
		}
	}
	if !s.existed {
		return os.RemoveAll(dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		path := filepath.Clean(filepath.Join(dir, e.Name()))
		if s.names[e.Name()] || kept(path) {
			continue
		}
		errs = append(errs, os.RemoveAll(path))
	}
	return errors.Join(errs...)
}

// parseLogLevel parses --log-level.
func parseLogLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("--log-level %q: want debug, info, warn or error", s)
	}
	return l, nil
}

// registerAPIListen adds --api-listen, stored in p.
func registerAPIListen(fs *pflag.FlagSet, p *string) {
	fs.StringVar(p, "api-listen", nodeapi.DefaultListen,
		"where the node API listens while the node runs (wallet commands on this data dir ask it): 127.0.0.1:PORT (0: a free port, written to DATADIR/"+
			nodeapi.AddressFile+") or unix (DATADIR/"+nodeapi.SocketFile+"); authenticated by DATADIR/"+nodeapi.CookieFile)
}

// nodeAPI is what runSession serves on the node API: where it listens and
// the methods beyond the wallet's (the demo's faucet).
type nodeAPI struct {
	listen  string
	methods func(s *session.Session) map[string]nodeapi.Handler
}

// runSession runs a sync (session.Run): headless, or under the dashboard
// until the user quits, serving the node API (nodeapi) on the wallet's
// data dir once the node has started; then it prints the summary
// (asJSON) or a one-line report.
func runSession(cmd *cobra.Command, prefix string, cfg session.Config, asJSON bool, drive session.Driver, api nodeAPI) error {
	// Attached dashboards get the log lines too.
	hub := nodeapi.NewLogHub()
	if cfg.LogTee != nil {
		cfg.LogTee = io.MultiWriter(cfg.LogTee, hub)
	} else {
		cfg.LogTee = hub
	}
	var ui session.UI
	if cfg.Dashboard {
		out, ok := cmd.OutOrStdout().(*os.File)
		if !ok {
			out = os.Stdout
		}
		ui = dashboard.Attach(&cfg, out, os.Stdin)
	}
	var srv *nodeapi.Server
	serve := func(ctx context.Context, s *session.Session) error {
		acfg := nodeapi.Config{Wallet: s.Wallet(), Listen: api.listen, Broadcast: s.Broadcast, Status: s.Node().Status, Log: s.Log(),
			Dashboard: &nodeapi.Dashboard{Subscribe: s.Node().Subscribe, Reading: s.Reading, Reload: s.Node().ReloadFilter, Log: hub}}
		if api.methods != nil {
			acfg.Methods = api.methods(s)
		}
		var err error
		if srv, err = nodeapi.Start(acfg); err != nil {
			return fmt.Errorf("node API: %w", err)
		}
		if drive != nil {
			return drive(ctx, s)
		}
		return nil
	}
	s, err := session.Run(cmd.Context(), cfg, serve, ui)
	if srv != nil {
		if cerr := srv.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("node API: %w", cerr)
		}
	}
	switch {
	case errors.Is(err, spv.ErrNoPeerSource):
		return usagef("%s: %w: give --connect HOST:PORT", prefix, err)
	case errors.Is(err, headers.ErrCorrupt):
		return fmt.Errorf("%s: %w; the wallet is intact: run sync again with --reset-headers to delete the header store and download the headers again", prefix, err)
	case err != nil:
		return fmt.Errorf("%s: %w", prefix, err)
	case asJSON:
		sum, err := s.Summary()
		if err != nil {
			return fmt.Errorf("%s: %w", prefix, err)
		}
		return writeJSON(cmd, sum)
	case !cfg.Dashboard:
		st := s.Node().Status()
		state := fmt.Sprintf("synced to height %d", st.WatcherHeight)
		if !st.Synced {
			state = fmt.Sprintf("%s (height %d)", session.SyncState(st), st.WatcherHeight)
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "%s; %d blocks, %d matched txs (%d the wallet's, %d false positives), %d bytes received\n",
			state, st.Blocks, st.Matched, st.Relevant, st.FalsePositives, st.BytesReceived)
	}
	return nil
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
