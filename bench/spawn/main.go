// Command spawn runs one program and reports its wall time and rusage: the
// bench starts every measured client through it.
//
// Usage: spawn RESULTFILE PROG [ARGS...]
//
// It runs PROG with spawn's stdio, forwards SIGINT/SIGTERM, writes a JSON
// object {wall_ns, user_ns, sys_ns, maxrss_kb, exit} to RESULTFILE and exits
// with the child's status.
//
// Why a separate small program: Go starts children with vfork semantics
// (CLONE_VM), and Linux folds the hiwater RSS of the address space that exec
// replaces into the child's ru_maxrss. A client started straight from the
// bench would report at least the bench's own peak RSS (tens of MiB after it
// built a chain); started from this program it reports its own peak, or
// this program's ~2 MiB when that is larger.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

type result struct {
	WallNS   int64 `json:"wall_ns"`
	UserNS   int64 `json:"user_ns"`
	SysNS    int64 `json:"sys_ns"`
	MaxRSSKB int64 `json:"maxrss_kb"`
	Exit     int   `json:"exit"`
}

func main() {
	code, err := run(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "spawn:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

func run(args []string) (int, error) {
	if len(args) < 2 {
		return 2, fmt.Errorf("usage: spawn RESULTFILE PROG [ARGS...]")
	}
	cmd := exec.Command(args[1], args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 1, fmt.Errorf("start %s: %w", args[1], err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
wait:
	for {
		select {
		case s := <-sigs:
			_ = cmd.Process.Signal(s)
		case werr = <-done:
			break wait
		}
	}
	wall := time.Since(start)
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return 1, fmt.Errorf("no rusage for %s", args[1])
	}
	b, err := json.Marshal(result{WallNS: int64(wall), UserNS: ru.Utime.Nano(), SysNS: ru.Stime.Nano(),
		MaxRSSKB: ru.Maxrss, Exit: cmd.ProcessState.ExitCode()})
	if err != nil {
		return 1, fmt.Errorf("encode: %w", err)
	}
	if err := os.WriteFile(args[0], b, 0o600); err != nil {
		return 1, fmt.Errorf("write result: %w", err)
	}
	if werr != nil {
		return cmd.ProcessState.ExitCode(), fmt.Errorf("%s: %w", args[1], werr)
	}
	return 0, nil
}
