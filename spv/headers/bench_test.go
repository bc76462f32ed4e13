package headers

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// benchChains caches mined chains by network and length.
var benchChains sync.Map

// benchChain mines (once) n headers on the genesis of the named network,
// 10 minutes apart.
func benchChain(name string, n int) []wire.BlockHeader {
	key := name + "/" + time.Duration(n).String()
	if c, ok := benchChains.Load(key); ok {
		return c.([]wire.BlockHeader)
	}
	net := mustNetNoT(name)
	r, _ := newRules(net)
	g := net.Params.GenesisBlock.Header
	chain := extend(r, &scratchView{base: genesisView{g}}, 0, g, n, 600, 1)
	benchChains.Store(key, chain)
	return chain
}

// connectAll connects a chain in batches of 2000 (a getheaders reply).
func connectAll(tb testing.TB, s *Store, chain []wire.BlockHeader) {
	for i := 0; i < len(chain); i += wire.MaxBlockHeadersPerMsg {
		_, err := s.Connect(chain[i:min(i+wire.MaxBlockHeadersPerMsg, len(chain))])
		require.NoError(tb, err)
	}
}

// BenchmarkConnect measures header validation and storage on 100,000-header
// chains: "store" is Connect into a fresh store (batches of 2000, each
// fsynced); "validate" is this package's checks alone, in memory; "btcd" is
// btcd's CheckBlockHeaderSanity + CheckBlockHeaderContext on the same
// headers and view (the baseline); "hash" is the double SHA-256 alone (the
// floor).
func BenchmarkConnect(b *testing.B) {
	const n = 100_000
	for _, name := range []string{"regtest", "simnet"} {
		chain := benchChain(name, n)
		net := mustNetNoT(name)
		perHeader := func(b *testing.B) {
			b.ReportMetric(float64(b.N)*n/b.Elapsed().Seconds(), "headers/s")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/(float64(b.N)*n), "ns/header")
		}
		// timed runs f b.N times and reports wall and CPU time per
		// header.
		timed := func(b *testing.B, f func()) {
			c0 := cpuTime(b)
			for b.Loop() {
				f()
			}
			perHeader(b)
			b.ReportMetric(float64((cpuTime(b)-c0).Nanoseconds())/(float64(b.N)*n), "cpu-ns/header")
		}
		b.Run(name+"/store", func(b *testing.B) {
			var cpu time.Duration
			for b.Loop() {
				b.StopTimer()
				s, err := Open(b.TempDir(), net, WithClock(fixedClock))
				if err != nil {
					require.NoError(b, err)
				}
				b.StartTimer()
				c0 := cpuTime(b)
				connectAll(b, s, chain)
				cpu += cpuTime(b) - c0
				b.StopTimer()
				s.Close()
				b.StartTimer()
			}
			perHeader(b)
			b.ReportMetric(float64(cpu.Nanoseconds())/(float64(b.N)*n), "cpu-ns/header")
		})

		// A store holding the chain serves as the view for the
		// validation-only runs: header k has node index k+1.
		s, err := Open(b.TempDir(), net, WithClock(fixedClock))
		require.NoError(b, err)
		connectAll(b, s, chain)
		now := testNow.Unix()
		b.Run(name+"/validate", func(b *testing.B) {
			var raw [headerLen]byte
			timed(b, func() {
				for k := range chain {
					h := &chain[k]
					encodeHeader(&raw, h)
					hash := chainhash.DoubleHashH(raw[:])
					if _, err := s.rules.checkSanity(h, &hash, now); err != nil {
						require.NoError(b, err)
					}
					if _, err := s.rules.checkContext(s, h, &hash, int32(k), -1); err != nil {
						require.NoError(b, err)
					}
				}
			})
		})
		b.Run(name+"/btcd", func(b *testing.B) {
			timed(b, func() {
				for k := range chain {
					if err := btcdVerdict(s.rules, s, &chain[k], int32(k), testNow); err != nil {
						require.NoError(b, err)
					}
				}
			})
		})
		b.Run(name+"/hash", func(b *testing.B) {
			var raw [headerLen]byte
			timed(b, func() {
				for k := range chain {
					encodeHeader(&raw, &chain[k])
					_ = chainhash.DoubleHashH(raw[:])
				}
			})
		})
		s.Close()
	}
}

// cpuTime is the process's user + system CPU time (all threads, GC
// included).
func cpuTime(b *testing.B) time.Duration {
	u, s := cpuTimes(b)
	return u + s
}

// cpuTimes is the process's user and system CPU time (all threads, GC
// included).
func cpuTimes(b testing.TB) (user, sys time.Duration) {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

// doubleHashH is chainhash.DoubleHashH on a serialized header.
func doubleHashH(raw *[headerLen]byte) chainhash.Hash { return chainhash.DoubleHashH(raw[:]) }

// BenchmarkOpen measures opening (reading, hashing, linking and checking
// the proof of work of) a 100,000-header file, and reports the heap the
// open store holds per header; verify-100k is Store.Verify on it.
func BenchmarkOpen(b *testing.B) {
	const n = 100_000
	chain := benchChain("regtest", n)
	net := mustNetNoT("regtest")
	dir := b.TempDir()
	s, err := Open(dir, net, WithClock(fixedClock))
	require.NoError(b, err)
	connectAll(b, s, chain)
	s.Close()

	b.Run("100k", func(b *testing.B) {
		for b.Loop() {
			s, err := Open(dir, net)
			if err != nil {
				require.NoError(b, err)
			}
			s.Close()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/(float64(b.N)*(n+1)), "ns/header")
		b.ReportMetric(heapPerHeader(b, dir), "heapB/header")
	})
	b.Run("verify-100k", func(b *testing.B) {
		s, err := Open(dir, net)
		require.NoError(b, err)
		defer s.Close()
		for b.Loop() {
			if err := s.Verify(); err != nil {
				require.NoError(b, err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/(float64(b.N)*n), "ns/header")
	})
}

// heapPerHeader opens the store in dir and returns the heap it holds per
// header.
func heapPerHeader(b *testing.B, dir string) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s, err := Open(dir, mustNetNoT("regtest"))
	require.NoError(b, err)
	runtime.GC()
	runtime.ReadMemStats(&after)
	count := s.Count()
	runtime.KeepAlive(s)
	s.Close()
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(count)
}

// mainnetChain mines the 900,000-header regtest chain of
// BenchmarkMainnetScale (mainnet's height) and returns it serialized, 80
// bytes a header: held without pointers, as a syncing node never holds a
// whole chain of wire.BlockHeader (whose timestamps carry a pointer) that
// the garbage collector would scan while Connect runs.
var mainnetChain = sync.OnceValue(func() []byte {
	const n = 900_000
	net := mustNetNoT("regtest")
	r, _ := newRules(net)
	g := net.Params.GenesisBlock.Header
	chain := extend(r, &scratchView{base: genesisView{g}}, 0, g, n, 600, 1)
	raw := make([]byte, 0, n*headerLen)
	var rec [headerLen]byte
	for k := range chain {
		encodeHeader(&rec, &chain[k])
		raw = append(raw, rec[:]...)
	}
	return raw
})

// connectSerialized connects a serialized chain in batches of 2,000 (a
// getheaders reply), each decoded into the same slice first, as a peer's
// headers message is, and returns the process's user and system CPU time
// spent inside Connect.
func connectSerialized(tb testing.TB, s *Store, raw []byte) (user, sys time.Duration) {
	batch := make([]wire.BlockHeader, wire.MaxBlockHeadersPerMsg)
	for off := 0; off < len(raw); {
		k := 0
		for ; k < len(batch) && off < len(raw); k, off = k+1, off+headerLen {
			batch[k] = decodeHeader(raw[off : off+headerLen])
		}
		u0, s0 := cpuTimes(tb)
		_, err := s.Connect(batch[:k])
		require.NoError(tb, err)
		u1, s1 := cpuTimes(tb)
		user, sys = user+u1-u0, sys+s1-s0
	}
	return user, sys
}

// BenchmarkMainnetScale connects a 900,000-header regtest chain (mainnet's
// height) into a fresh store and reports:
//
//   - cpu-s/900k: the process's CPU time inside Connect (all threads, the
//     garbage collector's included), and sys-s/900k, its system part (the
//     kernel's share of the appends, fsyncs and page faults);
//   - sha256d-cpu-s/900k: the CPU time of the bare double SHA-256 of the
//     same 80-byte headers in the same iteration (chainhash.DoubleHashH),
//     the floor Connect is compared with, and cpu/sha256d, the ratio;
//   - headerHash-cpu-s/900k: the same with the store's own headerHash, the
//     hashing part of Connect;
//   - the heap per header after Connect and after a reopen, the time of the
//     reopen, and the resident memory of child processes that connect the
//     chain (peak) and open the file.
//
// Mining the chain takes a few seconds before the timer starts; run it
// alone: go test -run XXX -bench MainnetScale -benchtime 1x ./spv/headers/
func BenchmarkMainnetScale(b *testing.B) {
	const n = 900_000
	raw := mainnetChain()
	net := mustNetNoT("regtest")
	chainFile := filepath.Join(b.TempDir(), "chain.raw")
	require.NoError(b, os.WriteFile(chainFile, raw, 0o600))
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s, err := Open(dir, net, WithClock(fixedClock))
		if err != nil {
			require.NoError(b, err)
		}
		b.StartTimer()
		user, sys := connectSerialized(b, s, raw)
		b.StopTimer()
		cpu := user + sys
		hash := hashRawCPU(b, raw, doubleHashH)
		own := hashRawCPU(b, raw, headerHash)
		b.ReportMetric(cpu.Seconds(), "cpu-s/900k")
		b.ReportMetric(sys.Seconds(), "sys-s/900k")
		b.ReportMetric(hash.Seconds(), "sha256d-cpu-s/900k")
		b.ReportMetric(cpu.Seconds()/hash.Seconds(), "cpu/sha256d")
		b.ReportMetric(own.Seconds(), "headerHash-cpu-s/900k")
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(s.Count()), "heapB/header(connected)")
		s.Close()
		o0 := time.Now()
		s, err = Open(dir, net)
		if err != nil {
			require.NoError(b, err)
		}
		b.ReportMetric(time.Since(o0).Seconds(), "open-s/900k")
		s.Close()
		b.ReportMetric(heapPerHeader(b, dir), "heapB/header(reopened)")
		grow, total, count := childRSS(b, dir)
		b.ReportMetric(float64(grow)/float64(count), "rssB/header(child)")
		b.ReportMetric(float64(total)/(1<<20), "rssMB(child)")
		peak := childConnectRSS(b, chainFile, b.TempDir())
		b.ReportMetric(float64(peak)/(1<<20), "peakRSSMB(connect-child)")
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/(float64(b.N)*n), "ns/header")
}

// hashRawCPU returns the CPU time of hashing every 80-byte header of raw
// with hash.
func hashRawCPU(b *testing.B, raw []byte, hash func(*[headerLen]byte) chainhash.Hash) time.Duration {
	var sink byte
	c0 := cpuTime(b)
	for off := 0; off+headerLen <= len(raw); off += headerLen {
		h := hash((*[headerLen]byte)(raw[off:]))
		sink ^= h[0]
	}
	d := cpuTime(b) - c0
	if sink == 0xff && len(raw) == 0 {
		b.Log(sink) // keeps the loop
	}
	return d
}

// connectEnv names the chain file and the store directory of
// TestHelperConnectRSS.
const connectEnv = "BLOOMWATCH_HEADERS_CONNECT"

// TestHelperConnectRSS is the child process of BenchmarkMainnetScale's peak
// resident-memory measurement of a sync, not a test of its own: it reads
// the serialized chain in $BLOOMWATCH_HEADERS_CONNECT (FILE:DIR) 2,000
// headers at a time, as from a peer, connects them into a new store in DIR
// and prints its peak resident set size.
func TestHelperConnectRSS(t *testing.T) {
	env := os.Getenv(connectEnv)
	if env == "" {
		t.Skip("helper process of BenchmarkMainnetScale")
	}
	file, dir, _ := strings.Cut(env, ":")
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	s, err := Open(dir, mustNet(t, "regtest"), WithClock(fixedClock))
	require.NoError(t, err)
	defer s.Close()
	buf := make([]byte, wire.MaxBlockHeadersPerMsg*headerLen)
	for {
		k, err := io.ReadFull(f, buf)
		if k > 0 {
			connectSerialized(t, s, buf[:k])
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		require.NoError(t, err)
	}
	fmt.Printf("PEAK %d %d\n", vmStatus(t, "VmHWM:"), s.Count())
}

// childConnectRSS runs TestHelperConnectRSS on the chain file into dir and
// returns the child's peak resident set size in bytes.
func childConnectRSS(b *testing.B, chainFile, dir string) int64 {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperConnectRSS$", "-test.count=1")
	cmd.Env = append(os.Environ(), connectEnv+"="+chainFile+":"+dir)
	out, err := cmd.Output()
	require.NoError(b, err, "child: %v: %s", err, out)
	for _, line := range strings.Split(string(out), "\n") {
		var peak int64
		var count int
		if _, err := fmt.Sscanf(line, "PEAK %d %d", &peak, &count); err == nil {
			return peak
		}
	}
	require.FailNow(b, fmt.Sprintf("child printed no peak: %s", out))
	return 0
}

// rssEnv names the store directory TestHelperOpenRSS opens.
const rssEnv = "BLOOMWATCH_HEADERS_RSS_DIR"

// TestHelperOpenRSS is the child process of BenchmarkMainnetScale's
// resident-memory measurement, not a test of its own: it opens the store in
// $BLOOMWATCH_HEADERS_RSS_DIR and prints its resident set size before and
// after, so the figure is not mixed with the benchmark's own memory.
func TestHelperOpenRSS(t *testing.T) {
	dir := os.Getenv(rssEnv)
	if dir == "" {
		t.Skip("helper process of BenchmarkMainnetScale")
	}
	before := vmRSS(t)
	s, err := Open(dir, mustNet(t, "regtest"))
	require.NoError(t, err)
	debug.FreeOSMemory()
	fmt.Printf("RSS %d %d %d\n", before, vmRSS(t), s.Count())
	s.Close()
}

// vmRSS returns this process's resident set size in bytes.
func vmRSS(t testing.TB) int64 { return vmStatus(t, "VmRSS:") }

// vmStatus returns a memory figure of /proc/self/status in bytes (VmRSS:,
// VmHWM: ...).
func vmStatus(t testing.TB, field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == field {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			require.NoError(t, err)
			return kb * 1024
		}
	}
	require.FailNow(t, fmt.Sprintf("no %s", field))
	return 0
}

// childRSS runs TestHelperOpenRSS on dir and returns the RSS growth and
// the final RSS of the child, in bytes, and the header count.
func childRSS(b *testing.B, dir string) (grow, total int64, count int) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperOpenRSS$", "-test.count=1")
	cmd.Env = append(os.Environ(), rssEnv+"="+dir)
	out, err := cmd.Output()
	require.NoError(b, err, "child: %v: %s", err, out)
	var before int64
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "RSS ") {
			_, err := fmt.Sscanf(line, "RSS %d %d %d", &before, &total, &count)
			require.NoError(b, err)
			return total - before, total, count
		}
	}
	require.FailNow(b, fmt.Sprintf("child printed no RSS: %s", out))
	return 0, 0, 0
}

// BenchmarkSideBranchEviction connects 500-header side branches (forking
// 600 blocks below the tip) into a 100,000-header store. "append" has a
// bound no branch reaches (the baseline: validation, one append and an
// fsync); "evict" a bound of 2,000, so that every branch evicts the one
// before it (or itself) and headers.dat is rewritten (evict.go). Both report
// ms/batch; the ratio is what an eviction costs over a plain batch.
func BenchmarkSideBranchEviction(b *testing.B) {
	const n = 100_000
	chain := benchChain("regtest", n)
	net := mustNetNoT("regtest")
	for _, c := range []struct {
		name  string
		bound int
	}{{"append", 10_000_000}, {"evict", 2000}} {
		b.Run(c.name, func(b *testing.B) {
			s, err := Open(b.TempDir(), net, WithClock(fixedClock), WithSideBranchLimits(0, c.bound))
			require.NoError(b, err)
			defer s.Close()
			connectAll(b, s, chain)
			fork, _ := s.HashByHeight(n - 600)
			branch := uint32(0)
			// Four branches fill the bound of 2,000: from then on each
			// batch evicts.
			for range 4 {
				branch++
				_, err := s.Connect(mineOn(b, s, fork, 500, 600, 1000+branch))
				require.NoError(b, err)
			}
			evicted := 0
			for b.Loop() {
				b.StopTimer()
				branch++
				hs := mineOn(b, s, fork, 500, 600, 1000+branch)
				b.StartTimer()
				res, err := s.Connect(hs)
				if err != nil {
					require.NoError(b, err)
				}
				evicted += res.Evicted
			}
			require.False(b, c.bound == 2000 && evicted < b.N, "%d evicted in %d batches", evicted, b.N)
			b.ReportMetric(b.Elapsed().Seconds()*1000/float64(b.N), "ms/batch")
		})
	}
}
