package headers

import (
	"fmt"
	"os"
	"os/exec"
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
		if _, err := s.Connect(chain[i:min(i+wire.MaxBlockHeadersPerMsg, len(chain))]); err != nil {
			tb.Fatal(err)
		}
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
					b.Fatal(err)
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
		if err != nil {
			b.Fatal(err)
		}
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
						b.Fatal(err)
					}
					if _, err := s.rules.checkContext(s, h, &hash, int32(k), -1); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
		b.Run(name+"/btcd", func(b *testing.B) {
			timed(b, func() {
				for k := range chain {
					if err := btcdVerdict(s.rules, s, &chain[k], int32(k), testNow); err != nil {
						b.Fatal(err)
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
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkOpen measures opening (reading, hashing, linking and checking
// the proof of work of) a 100,000-header file, and reports the heap the
// open store holds per header; verify-100k is Store.Verify on it.
func BenchmarkOpen(b *testing.B) {
	const n = 100_000
	chain := benchChain("regtest", n)
	net := mustNetNoT("regtest")
	dir := b.TempDir()
	s, err := Open(dir, net, WithClock(fixedClock))
	if err != nil {
		b.Fatal(err)
	}
	connectAll(b, s, chain)
	s.Close()

	b.Run("100k", func(b *testing.B) {
		for b.Loop() {
			s, err := Open(dir, net)
			if err != nil {
				b.Fatal(err)
			}
			s.Close()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/(float64(b.N)*(n+1)), "ns/header")
		b.ReportMetric(heapPerHeader(b, dir), "heapB/header")
	})
	b.Run("verify-100k", func(b *testing.B) {
		s, err := Open(dir, net)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		for b.Loop() {
			if err := s.Verify(); err != nil {
				b.Fatal(err)
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
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	count := s.Count()
	runtime.KeepAlive(s)
	s.Close()
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(count)
}

// BenchmarkMainnetScale connects a 900,000-header regtest chain (mainnet's
// height) into a fresh store and reports the CPU time of Connect and the
// heap per header, after Connect and after a reopen. Mining the chain takes
// a few seconds before the timer starts; run it alone:
// go test -run XXX -bench MainnetScale -benchtime 1x ./spv/headers/
func BenchmarkMainnetScale(b *testing.B) {
	const n = 900_000
	chain := benchChain("regtest", n)
	net := mustNetNoT("regtest")
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s, err := Open(dir, net, WithClock(fixedClock))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		c0 := cpuTime(b)
		connectAll(b, s, chain)
		b.ReportMetric((cpuTime(b) - c0).Seconds(), "cpu-s/900k")
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(s.Count()), "heapB/header(connected)")
		s.Close()
		o0 := time.Now()
		s, err = Open(dir, net)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(time.Since(o0).Seconds(), "open-s/900k")
		s.Close()
		b.ReportMetric(heapPerHeader(b, dir), "heapB/header(reopened)")
		grow, total, count := childRSS(b, dir)
		b.ReportMetric(float64(grow)/float64(count), "rssB/header(child)")
		b.ReportMetric(float64(total)/(1<<20), "rssMB(child)")
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/(float64(b.N)*n), "ns/header")
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
	if err != nil {
		t.Fatal(err)
	}
	debug.FreeOSMemory()
	fmt.Printf("RSS %d %d %d\n", before, vmRSS(t), s.Count())
	s.Close()
}

// vmRSS returns this process's resident set size in bytes.
func vmRSS(t testing.TB) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb * 1024
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// childRSS runs TestHelperOpenRSS on dir and returns the RSS growth and
// the final RSS of the child, in bytes, and the header count.
func childRSS(b *testing.B, dir string) (grow, total int64, count int) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperOpenRSS$", "-test.count=1")
	cmd.Env = append(os.Environ(), rssEnv+"="+dir)
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("child: %v: %s", err, out)
	}
	var before int64
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "RSS ") {
			if _, err := fmt.Sscanf(line, "RSS %d %d %d", &before, &total, &count); err != nil {
				b.Fatal(err)
			}
			return total - before, total, count
		}
	}
	b.Fatalf("child printed no RSS: %s", out)
	return 0, 0, 0
}
