// Command neutrino is the bench's BIP157/158 comparator: lightninglabs/neutrino
// syncing the job's chain from one btcd on 127.0.0.1 (usage: neutrino
// JOBFILE; the result is printed as JSON). It is a module of its own because
// neutrino at the only version served here needs btcd v0.24.2's peer API
// (MessageListeners.OnAlert), which bloomwatch's btcd v0.25.0 removed.
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/btcsuite/btcd/btcutil/gcs/builder"
	"github.com/btcsuite/btcd/wire"
	"github.com/btcsuite/btclog"
	"github.com/btcsuite/btcwallet/walletdb"
	_ "github.com/btcsuite/btcwallet/walletdb/bdb" // neutrino's header/filter database
	"github.com/lightninglabs/neutrino"

	"github.com/bloomwatch/bloomwatch/bench/clientjob"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "neutrino:", err)
		stop()
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: neutrino JOBFILE")
	}
	job, err := clientjob.ReadJob(args[0])
	if err != nil {
		return err
	}
	path := job.CPUProfile
	if env := os.Getenv("BENCH_CPUPROFILE"); env != "" {
		path = env
	}
	if path != "" {
		// Diagnostics: a CPU profile of this client run.
		f, err := os.Create(path)
		if err != nil {
			return fmt.Errorf("cpu profile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("cpu profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	res, err := runNeutrino(ctx, job)
	if err != nil {
		return err
	}
	return clientjob.PrintResult(res)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

const (
	neutrinoTimeout = 10 * time.Minute
	neutrinoPoll    = 10 * time.Millisecond
)

// runNeutrino is the "neutrino" subcommand: lightninglabs/neutrino syncs
// block headers and BIP157 filter headers from the one peer, then the loop
// fetches every block's BIP158 basic filter (neutrino's optimistic batches
// of up to 1,000 per getcfilters), matches the watched output scripts
// (basic filters hold every output script and every spent prevout script,
// so both payments and spends match) and downloads each matching block.
func runNeutrino(ctx context.Context, job *clientjob.ClientJob) (*clientjob.ClientResult, error) {
	params, err := clientjob.ParamsFor(job.Network)
	if err != nil {
		return nil, err
	}
	ws, err := clientjob.NewWatchSet(job.Addresses, params)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, neutrinoTimeout)
	defer cancel()

	if err := os.MkdirAll(job.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("neutrino: datadir: %w", err)
	}
	db, err := walletdb.Create("bdb", filepath.Join(job.DataDir, "neutrino.db"), true, time.Minute)
	if err != nil {
		return nil, fmt.Errorf("neutrino: db: %w", err)
	}
	defer db.Close()

	if lvl := os.Getenv("BENCH_NEUTRINO_LOG"); lvl != "" {
		// Diagnostics only: neutrino's log to stderr (the bench log).
		l := btclog.NewBackend(os.Stderr).Logger("NTRN")
		if level, ok := btclog.LevelFromString(lvl); ok {
			l.SetLevel(level)
		}
		neutrino.UseLogger(l)
	}

	var received atomic.Uint64
	cs, err := neutrino.NewChainService(neutrino.Config{
		DataDir:      job.DataDir,
		Database:     db,
		ChainParams:  *params,
		ConnectPeers: []string{job.Connect},
		Dialer: func(a net.Addr) (net.Conn, error) {
			c, err := net.Dial(a.Network(), a.String())
			if err != nil {
				return nil, err
			}
			return clientjob.CountConn{Conn: c, N: &received}, nil
		},
		NameResolver: func(host string) ([]net.IP, error) {
			ip := net.ParseIP(host)
			if ip == nil || !ip.IsLoopback() {
				return nil, fmt.Errorf("neutrino: bench resolves loopback only, not %q", host)
			}
			return []net.IP{ip}, nil
		},
	})
	if err != nil {
		return nil, fmt.Errorf("neutrino: chain service: %w", err)
	}
	if err := cs.Start(); err != nil {
		return nil, fmt.Errorf("neutrino: start: %w", err)
	}
	defer func() { _ = cs.Stop() }()

	// Wait until headers and filter headers reach the peer's tip.
	start := time.Now()
	var tip int32
	tick := time.NewTicker(neutrinoPoll)
	defer tick.Stop()
	for {
		var peerTip int32 = -1
		for _, sp := range cs.Peers() {
			if h := sp.LastBlock(); h > peerTip {
				peerTip = h
			}
		}
		if peerTip > 0 && cs.IsCurrent() {
			bb, err := cs.BestBlock()
			if err == nil && bb.Height >= peerTip {
				tip = bb.Height
				break
			}
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return nil, fmt.Errorf("neutrino: header sync: %w", ctx.Err())
		}
	}

	res := &clientjob.ClientResult{Client: "neutrino", FPUnit: "block", TipHeight: tip,
		Phases: map[string]float64{"headers": ms(time.Since(start))}}
	scan := time.Now()
	for h := max(job.Birthday, 1); h <= tip; h++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("neutrino: filter scan at %d: %w", h, err)
		}
		hash, err := cs.GetBlockHash(int64(h))
		if err != nil {
			return nil, fmt.Errorf("neutrino: hash at %d: %w", h, err)
		}
		f, err := cs.GetCFilter(*hash, wire.GCSFilterRegular, neutrino.OptimisticBatch())
		if err != nil {
			return nil, fmt.Errorf("neutrino: filter at %d: %w", h, err)
		}
		if f.N() == 0 {
			continue
		}
		nb, err := f.NBytes()
		if err == nil {
			res.FilterBytes += len(nb)
		}
		match, err := f.MatchAny(builder.DeriveKey(hash), ws.PkScripts)
		if err != nil {
			return nil, fmt.Errorf("neutrino: match at %d: %w", h, err)
		}
		if !match {
			continue
		}
		blk, err := cs.GetBlock(*hash)
		if err != nil {
			return nil, fmt.Errorf("neutrino: block at %d: %w", h, err)
		}
		res.BlocksFetched++
		mine := false
		for _, tx := range blk.Transactions() {
			if ws.Apply(tx.MsgTx()) {
				mine = true
				res.Txs = append(res.Txs, clientjob.FoundTx{Txid: tx.Hash().String(), Height: h})
			}
		}
		if !mine {
			res.FalsePositives++
		}
	}
	res.Phases["scan"] = ms(time.Since(scan))
	res.Phases["p2p sync"] = ms(time.Since(start))
	res.BytesReceived = received.Load()
	return res, nil
}
