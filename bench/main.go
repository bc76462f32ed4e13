// Command bench measures bloomwatch's sync side by side with a minimal BIP37
// loop on btcd's raw libraries and with lightninglabs/neutrino (BIP157/158,
// built from bench/neutrino),
// each as a separate process against the same simnet chain served by one
// btcd on 127.0.0.1.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

	"github.com/bloomwatch/bloomwatch/bench/clientjob"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		stop()
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "minimal":
			return runClient(ctx, args[0], args[1:])
		case "serve":
			return runServe(ctx, args[1:])
		case "headers":
			return runHeadersChild(ctx, args[1:])
		case "report":
			return runReport(args[1:])
		case "cpusplit":
			return runCPUSplit(args[1:])
		}
	}
	return runBench(ctx, args)
}

// runClient runs one client child: bench minimal JOBFILE (the neutrino
// client is its own program, bench/neutrino).
func runClient(ctx context.Context, name string, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: bench %s JOBFILE", name)
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
	res, err := runMinimal(ctx, job)
	if err != nil {
		return err
	}
	return clientjob.PrintResult(res)
}
