package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// errNoRusage is returned when the platform gives no rusage for a child.
var errNoRusage = errors.New("bench: child rusage unavailable")

// Measure is one client run as the bench's child process.
type Measure struct {
	// Wall is the time from process start to exit.
	Wall time.Duration
	// CPU is user+sys time of the child from its rusage.
	CPU time.Duration
	// MaxRSS is the child's peak resident set size in bytes (rusage).
	MaxRSS int64
	// ServerCPU is the btcd process's user+sys CPU spent during the run
	// (from /proc), i.e. what the client cost the full node.
	ServerCPU time.Duration
	// Result is what the client reported.
	Result *ClientResult
}

// runMeasured starts name+args as a child process, waits for it and returns
// its wall time, rusage CPU and peak RSS with its stdout. stderr goes to
// logw. serverPID, when > 0, is the btcd process whose CPU is sampled
// before and after.
func runMeasured(ctx context.Context, logw io.Writer, serverPID int, name string, args ...string) (Measure, []byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = logw
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	srv0, _ := procCPU(serverPID)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Measure{}, nil, fmt.Errorf("start %s: %w", name, err)
	}
	err := cmd.Wait()
	wall := time.Since(start)
	srv1, _ := procCPU(serverPID)
	if err != nil {
		return Measure{}, out.Bytes(), fmt.Errorf("%s %v: %w", name, args, err)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return Measure{}, out.Bytes(), errNoRusage
	}
	m := Measure{
		Wall:      wall,
		CPU:       time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
		MaxRSS:    ru.Maxrss * 1024, // Linux reports KiB
		ServerCPU: srv1 - srv0,
	}
	return m, out.Bytes(), nil
}

// procCPU reads user+sys CPU time of pid from /proc/pid/stat.
func procCPU(pid int) (time.Duration, error) {
	if pid <= 0 {
		return 0, nil
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("proc stat: %w", err)
	}
	// Fields after the ")" that closes comm: state is field 3; utime and
	// stime are fields 14 and 15.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("proc stat: malformed")
	}
	fields := bytes.Fields(b[i+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("proc stat: short")
	}
	var ut, st int64
	if _, err := fmt.Sscan(string(fields[11]), &ut); err != nil {
		return 0, fmt.Errorf("proc stat utime: %w", err)
	}
	if _, err := fmt.Sscan(string(fields[12]), &st); err != nil {
		return 0, fmt.Errorf("proc stat stime: %w", err)
	}
	const clkTck = 100 // USER_HZ on Linux
	return time.Duration(ut+st) * time.Second / clkTck, nil
}
