package main

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/bloomwatch/bloomwatch/spv/headers"
	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// headersBatch is how many headers one Connect call gets: a P2P headers
// message carries at most 2,000.
const headersBatch = wire.MaxBlockHeadersPerMsg

// HeadersReport is the header-only sync measurement.
type HeadersReport struct {
	N int `json:"headers"`
	// GenerateMS is the time to mine the synthetic regtest chain (not part
	// of any rate).
	GenerateMS float64 `json:"generate_ms"`
	// Baseline: the minimal loop's checks (hash, linkage, proof of work)
	// over the same headers, in the same process.
	BaselineMS    float64 `json:"baseline_ms"`
	BaselineCPUMS float64 `json:"baseline_cpu_ms"`
	// SHA256d: the bare double SHA-256 (chainhash.DoubleHashH) of the same
	// serialized headers, in the same process: the floor of any header
	// validation.
	SHA256dMS    float64 `json:"sha256d_ms"`
	SHA256dCPUMS float64 `json:"sha256d_cpu_ms"`
	// Store: spv/headers.Store.Connect in batches of 2,000 (contextual
	// validation, fork choice, durable appends).
	StoreMS    float64 `json:"store_ms"`
	StoreCPUMS float64 `json:"store_cpu_ms"`
	StoreHeap  int64   `json:"store_heap_bytes"`
	FileBytes  int64   `json:"file_bytes"`
	// Reopen: headers.Open of the N-header file (load and index).
	ReopenMS    float64 `json:"reopen_ms"`
	ReopenCPUMS float64 `json:"reopen_cpu_ms"`
	ReopenHeap  int64   `json:"reopen_heap_bytes"`
	// MaxRSS is the child process's peak RSS (rusage), generated headers
	// included.
	MaxRSS int64 `json:"max_rss_bytes"`
	// WallMS and CPUMS are the whole child process.
	WallMS float64 `json:"wall_ms"`
	CPUMS  float64 `json:"cpu_ms"`
}

// runHeadersBench runs the "headers" child and prints nothing itself.
func runHeadersBench(ctx context.Context, env *benchEnv, n int) (*HeadersReport, error) {
	dir, err := os.MkdirTemp(env.tmp, "headers-")
	if err != nil {
		return nil, fmt.Errorf("headers dir: %w", err)
	}
	defer os.RemoveAll(dir)
	fmt.Printf("\nheader-only sync of %d generated regtest headers (child process)\n", n)
	m, out, err := runMeasured(ctx, env, nil, nil, env.self, "headers", strconv.Itoa(n), dir)
	if err != nil {
		return nil, fmt.Errorf("headers child: %w", err)
	}
	var r HeadersReport
	if err := json.Unmarshal(out, &r); err != nil {
		return nil, fmt.Errorf("headers child result: %w", err)
	}
	r.MaxRSS, r.WallMS, r.CPUMS = m.MaxRSS, ms(m.Wall), ms(m.CPU)
	return &r, nil
}

func printHeaders(w *os.File, r *HeadersReport) {
	rate := func(msec float64) float64 { return float64(r.N) / (msec / 1000) }
	fmt.Fprintf(w, "generated %d headers in %.0f ms (not counted)\n", r.N, r.GenerateMS)
	fmt.Fprintf(w, "  minimal checks (hash+link+PoW):   %8.0f ms wall %8.0f ms cpu  %10.0f headers/s\n", r.BaselineMS, r.BaselineCPUMS, rate(r.BaselineMS))
	fmt.Fprintf(w, "  bare double SHA-256 of them:      %8.0f ms wall %8.0f ms cpu  %10.0f headers/s\n", r.SHA256dMS, r.SHA256dCPUMS, rate(r.SHA256dMS))
	fmt.Fprintf(w, "  headers.Store.Connect (2k/batch): %8.0f ms wall %8.0f ms cpu  %10.0f headers/s  (%.2fx the minimal checks' CPU, %.2fx the double SHA-256's)\n",
		r.StoreMS, r.StoreCPUMS, rate(r.StoreMS), r.StoreCPUMS/r.BaselineCPUMS, r.StoreCPUMS/r.SHA256dCPUMS)
	fmt.Fprintf(w, "  store CPU per 900k headers: %.2f s (target < 0.3 s; double SHA-256 %.2f s); file %.1f MiB; Go heap in use %.1f MiB (%.0f B/header)\n",
		r.StoreCPUMS/1000*900000/float64(r.N), r.SHA256dCPUMS/1000*900000/float64(r.N), mib(r.FileBytes), mib(r.StoreHeap), float64(r.StoreHeap)/float64(r.N))
	fmt.Fprintf(w, "  headers.Open of the %d-header file: %.0f ms wall %.0f ms cpu, heap %.1f MiB\n", r.N, r.ReopenMS, r.ReopenCPUMS, mib(r.ReopenHeap))
	fmt.Fprintf(w, "  child process: %.0f ms wall, %.0f ms cpu, peak RSS %.1f MiB (generated headers included)\n", r.WallMS, r.CPUMS, mib(r.MaxRSS))
}

// runHeadersChild is the "headers N DIR" subcommand.
func runHeadersChild(ctx context.Context, args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("usage: bench headers N DIR")
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 1 {
		return fmt.Errorf("headers: bad count %q", args[0])
	}
	r, err := headersChild(ctx, n, args[1])
	if err != nil {
		return err
	}
	if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
		return fmt.Errorf("headers: write result: %w", err)
	}
	return nil
}

func headersChild(ctx context.Context, n int, dir string) (*HeadersReport, error) {
	params := &chaincfg.RegressionNetParams
	r := &HeadersReport{N: n}

	t0 := time.Now()
	hdrs := generateHeaders(params, n)
	r.GenerateMS = ms(time.Since(t0))
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	// Baseline: what the minimal loop checks.
	c0, t0 := cpuSelf(), time.Now()
	if err := minimalHeaderChecks(params, hdrs); err != nil {
		return nil, err
	}
	r.BaselineMS, r.BaselineCPUMS = ms(time.Since(t0)), ms(cpuSelf()-c0)

	// The bare double SHA-256 of the headers (serialized one at a time).
	c0, t0 = cpuSelf(), time.Now()
	_ = sha256dAll(hdrs)
	r.SHA256dMS, r.SHA256dCPUMS = ms(time.Since(t0)), ms(cpuSelf()-c0)

	net, err := netparams.Lookup("regtest")
	if err != nil {
		return nil, fmt.Errorf("headers: %w", err)
	}
	storeDir := filepath.Join(dir, "store")
	heap0 := heapInUse()
	c0, t0 = cpuSelf(), time.Now()
	st, err := headers.Open(storeDir, net)
	if err != nil {
		return nil, fmt.Errorf("headers: open: %w", err)
	}
	for i := 0; i < len(hdrs); i += headersBatch {
		j := min(i+headersBatch, len(hdrs))
		res, err := st.Connect(hdrs[i:j])
		if err != nil {
			st.Close()
			return nil, fmt.Errorf("headers: connect at %d: %w", i+1, err)
		}
		if res.Accepted != j-i {
			st.Close()
			return nil, fmt.Errorf("headers: connect at %d accepted %d of %d", i+1, res.Accepted, j-i)
		}
		if err := ctx.Err(); err != nil {
			st.Close()
			return nil, err
		}
	}
	r.StoreMS, r.StoreCPUMS = ms(time.Since(t0)), ms(cpuSelf()-c0)
	if _, tip := st.Tip(); int(tip) != n {
		st.Close()
		return nil, fmt.Errorf("headers: store tip %d, want %d", tip, n)
	}
	r.StoreHeap = heapInUse() - heap0
	if err := st.Close(); err != nil {
		return nil, fmt.Errorf("headers: close: %w", err)
	}
	r.FileBytes = dirSize(storeDir)

	st = nil
	heap0 = heapInUse()
	c0, t0 = cpuSelf(), time.Now()
	st2, err := headers.Open(storeDir, net)
	if err != nil {
		return nil, fmt.Errorf("headers: reopen: %w", err)
	}
	r.ReopenMS, r.ReopenCPUMS = ms(time.Since(t0)), ms(cpuSelf()-c0)
	r.ReopenHeap = heapInUse() - heap0
	if _, tip := st2.Tip(); int(tip) != n {
		st2.Close()
		return nil, fmt.Errorf("headers: reopened tip %d, want %d", tip, n)
	}
	runtime.KeepAlive(hdrs)
	if err := st2.Close(); err != nil {
		return nil, fmt.Errorf("headers: close: %w", err)
	}
	return r, nil
}

// generateHeaders mines n regtest-difficulty headers on the genesis block,
// one second apart and ending now, with distinct merkle roots.
func generateHeaders(params *chaincfg.Params, n int) []wire.BlockHeader {
	out := make([]wire.BlockHeader, n)
	prev := *params.GenesisHash
	target := blockchain.CompactToBig(params.PowLimitBits)
	start := time.Now().Add(-time.Duration(n) * time.Second).Truncate(time.Second)
	for i := range out {
		h := &out[i]
		h.Version = 0x20000000
		h.PrevBlock = prev
		h.MerkleRoot = chainhash.Hash(sha256.Sum256([]byte(strconv.Itoa(i))))
		h.Timestamp = start.Add(time.Duration(i) * time.Second)
		h.Bits = params.PowLimitBits
		for {
			hash := h.BlockHash()
			if blockchain.HashToBig(&hash).Cmp(target) <= 0 {
				prev = hash
				break
			}
			h.Nonce++
		}
	}
	return out
}

// sha256dAll serializes every header into the same 80-byte buffer and
// double-hashes it, and returns a byte of the results, so that the work is
// not optimized away.
func sha256dAll(hdrs []wire.BlockHeader) byte {
	var raw [wire.MaxBlockHeaderPayload]byte
	var x byte
	for i := range hdrs {
		h := &hdrs[i]
		binary.LittleEndian.PutUint32(raw[0:], uint32(h.Version))
		copy(raw[4:36], h.PrevBlock[:])
		copy(raw[36:68], h.MerkleRoot[:])
		binary.LittleEndian.PutUint32(raw[68:], uint32(h.Timestamp.Unix()))
		binary.LittleEndian.PutUint32(raw[72:], h.Bits)
		binary.LittleEndian.PutUint32(raw[76:], h.Nonce)
		d := chainhash.DoubleHashH(raw[:])
		x ^= d[0]
	}
	return x
}

// minimalHeaderChecks is the minimal loop's header validation (onHeaders).
func minimalHeaderChecks(params *chaincfg.Params, hdrs []wire.BlockHeader) error {
	prev := *params.GenesisHash
	for i := range hdrs {
		h := &hdrs[i]
		if h.PrevBlock != prev {
			return fmt.Errorf("headers: %d does not connect", i+1)
		}
		hash := h.BlockHash()
		target := blockchain.CompactToBig(h.Bits)
		if target.Sign() <= 0 || target.Cmp(params.PowLimit) > 0 || blockchain.HashToBig(&hash).Cmp(target) > 0 {
			return fmt.Errorf("headers: %d bad proof of work", i+1)
		}
		prev = hash
	}
	return nil
}

func cpuSelf() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}

func dirSize(dir string) int64 {
	var n int64
	_ = filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
		return nil
	})
	return n
}
