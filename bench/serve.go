package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/bloomwatch/bloomwatch/bench/clientjob"
)

// runServe is the "serve" subcommand: it serves a cached benchmark chain
// from btcd on 127.0.0.1 until interrupted and prints how to sync it, for
// profiling a client by hand (e.g. bloomwatch with pprof, or
// `bench minimal JOBFILE`).
func runServe(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	p := chainParams{}
	fs.IntVar(&p.Blocks, "blocks", 2000, "blocks")
	fs.IntVar(&p.Txs, "txs", 10, "noise transactions per block")
	fs.IntVar(&p.Addrs, "addrs", 20, "watched addresses")
	fs.Float64Var(&p.Spend, "spend", 0.5, "fraction spent")
	fs.Int64Var(&p.Seed, "seed", 1, "chain seed")
	peers := fs.Int("peers", 1, "btcd servers of the chain, each on its own copy (2 for --check-every)")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("serve flags: %w", err)
	}
	tmp, err := os.MkdirTemp("", "bloomwatch-bench-serve-")
	if err != nil {
		return fmt.Errorf("temp dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	env := &benchEnv{log: os.Stderr, tmp: tmp, cfg: &benchConfig{}}
	fx, err := prepareChain(ctx, env, p)
	if err != nil {
		return err
	}
	if *peers < 1 {
		return errors.New("serve: --peers must be at least 1")
	}
	srv, err := fx.serve(ctx, env, *peers)
	if err != nil {
		return err
	}
	defer srv.stop()
	jobPath := filepath.Join(tmp, "job.json")
	if err := clientjob.WriteJob(jobPath, &ClientJob{Network: "simnet", Connect: srv.p2p, Addresses: fx.addresses,
		DataDir: filepath.Join(tmp, "client"), FPRate: 0.0001}); err != nil {
		return err
	}
	addrs := srv.peers(*peers)
	fmt.Printf("serving %s: tip %d, btcd pid %v at %s\n", p, srv.tip, srv.pids(), strings.Join(addrs, ", "))
	fmt.Printf("job file: %s\n", jobPath)
	script, err := writeSyncScript(tmp, addrs, fx.addresses)
	if err != nil {
		return err
	}
	fmt.Printf("address list: sh %s BLOOMWATCH DATADIR [sync flags, e.g. --cpuprofile FILE]\n", script)
	fmt.Printf("xpub: BLOOMWATCH sync --network simnet --connect %s --until-synced --json --no-tui --datadir DATADIR --xpub %s\n",
		strings.Join(addrs, " --connect "), fx.xpub)
	fmt.Println("Ctrl-C stops btcd")
	<-ctx.Done()
	return nil
}

// writeSyncScript writes dir/sync.sh: `sh sync.sh BLOOMWATCH DATADIR
// [FLAGS]` runs a headless sync of the served chain from the given peers
// with the watched address list (too long to print at thousands of
// addresses).
func writeSyncScript(dir string, peers, addresses []string) (string, error) {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n# usage: sh sync.sh BLOOMWATCH DATADIR [sync flags]\nbw=$1; dd=$2; shift 2\n")
	b.WriteString(`exec "$bw" sync --network simnet --until-synced --json --no-tui --datadir "$dd"`)
	for _, p := range peers {
		b.WriteString(" --connect " + p)
	}
	for _, a := range addresses {
		b.WriteString(" \\\n  --address " + a)
	}
	b.WriteString(` "$@"` + "\n")
	path := filepath.Join(dir, "sync.sh")
	if err := os.WriteFile(path, []byte(b.String()), 0o755); err != nil {
		return "", fmt.Errorf("sync script: %w", err)
	}
	return path, nil
}
