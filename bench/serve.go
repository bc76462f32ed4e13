package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	srv, err := fx.serve(ctx, env)
	if err != nil {
		return err
	}
	defer srv.stop()
	jobPath := filepath.Join(tmp, "job.json")
	if err := writeJob(jobPath, &ClientJob{Network: "simnet", Connect: srv.p2p, Addresses: fx.addresses,
		DataDir: filepath.Join(tmp, "client"), FPRate: 0.0001}); err != nil {
		return err
	}
	fmt.Printf("serving %s: tip %d, btcd pid %d at %s\n", p, srv.tip, srv.pid, srv.p2p)
	fmt.Printf("job file: %s\n", jobPath)
	fmt.Printf("bloomwatch sync --network simnet --connect %s --until-synced --json --no-tui --datadir DIR --address %s\n",
		srv.p2p, strings.Join(fx.addresses, " --address "))
	fmt.Println("Ctrl-C stops btcd")
	<-ctx.Done()
	return nil
}
