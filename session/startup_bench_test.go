//go:build unix

package session_test

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/filterpolicy"
	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/bloomwatch/bloomwatch/session"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/bloomwatch/bloomwatch/wallet"
	"github.com/bloomwatch/bloomwatch/watch"
	"github.com/stretchr/testify/require"
)

// startupRecords is the number of filter records of the data dir
// BenchmarkSessionStartup opens.
const startupRecords = 1000

// writeStartupDir makes a regtest data dir whose transcript holds n
// filterload records as a long-lived wallet leaves them: one tweak, the
// same filter sent to each of three peers, the wallet growing by five
// elements between loads (new keys, coins), so the filters step through
// the capacity sizes as the node's do. It returns the wallet's
// configuration.
func writeStartupDir(tb testing.TB, dir string, n int) wallet.CreateConfig {
	tb.Helper()
	net, err := netparams.Lookup("regtest")
	require.NoError(tb, err)
	key, err := testnet.NewKeyring(testnet.DemoSeed, net.Params)
	require.NoError(tb, err)
	xpub, err := key.Xpub(testnet.PurposeBIP84)
	require.NoError(tb, err)
	spec := wallet.CreateConfig{Network: "regtest", Xpubs: []string{xpub}}
	w, _, err := session.OpenWallet(dir, spec)
	require.NoError(tb, err)
	require.NoError(tb, w.Close())
	require.NoError(tb, os.MkdirAll(session.NodePath(dir), 0o700))
	tf, old, err := transcript.Open(session.NodePath(dir))
	require.NoError(tb, err)
	defer tf.Close()
	require.LessOrEqual(tb, len(old), 0, "transcript of %s holds %d records", dir, len(old))
	rng := rand.New(rand.NewPCG(1, 2))
	var els watch.Elements
	grow := func(k int) {
		for range k {
			e := make([]byte, 20)
			for i := range e {
				e[i] = byte(rng.Uint32())
			}
			els.Data = append(els.Data, e)
		}
	}
	grow(40)
	const tweak = 0x5eed
	peers := []string{"127.0.0.1:18444", "127.0.0.1:18445", "127.0.0.1:18446"}
	reasons := []string{transcript.ReasonInitial, transcript.ReasonNewKey, transcript.ReasonFPDrift, transcript.ReasonOutPoints}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		if i > 0 && i%len(peers) == 0 {
			grow(5)
		}
		f, err := filterpolicy.BuildFilter(els, filterpolicy.DefaultFPRate, tweak)
		require.NoError(tb, err)
		_, err = tf.Append(transcript.Record{
			Time: at.Add(time.Duration(i) * time.Minute), Peer: peers[i%len(peers)], Height: int32(100 + i/len(peers)),
			Kind: transcript.KindFilterLoad, Filter: f.Serialize(), Reason: reasons[(i/len(peers))%len(reasons)],
			Via: transcript.ViaDirect,
		})
		require.NoError(tb, err)
	}
	return spec
}

// BenchmarkSessionStartup opens a session on a data dir whose transcript
// holds 1,000 filter records (writeStartupDir) and stops it: what
// `bloomwatch sync` spends before it connects to a peer (the wallet
// opened, the node's stores and transcript read, the privacy meter
// brought to the filters the peers already hold). Compare two builds by
// alternating their test binaries:
//
//	go test -c -o new.test ./session
//	./new.test -test.run '^$' -test.bench SessionStartup -test.benchtime 20x
func BenchmarkSessionStartup(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "w")
	spec := writeStartupDir(b, dir, startupRecords)
	cpu0 := cpuTime()
	for b.Loop() {
		w, _, err := session.OpenWallet(dir, spec)
		require.NoError(b, err)
		s, err := session.New(session.Config{Wallet: w, Node: spv.Config{Connect: []string{"127.0.0.1:1"}}, Stderr: discard{}})
		require.NoError(b, err)
		require.NoError(b, s.Stop())
		require.NoError(b, w.Close())
	}
	// CPU time is what the machine's load does not stretch: the wall
	// time of a shared machine is mostly waiting for a core.
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// cpuTime returns the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestStartupDirReplays checks the benchmark's data dir: a session opened
// on it counts every filter the transcript holds as held by the peers.
func TestStartupDirReplays(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	spec := writeStartupDir(t, dir, 30)
	w, _, err := session.OpenWallet(dir, spec)
	require.NoError(t, err)
	defer w.Close()
	s, err := session.New(session.Config{Wallet: w, Node: spv.Config{Connect: []string{"127.0.0.1:1"}}, Stderr: discard{}})
	require.NoError(t, err)
	defer s.Stop()
	got := len(s.Node().Transcript())
	require.Equal(t, 30, got, "node read %d records, want 30", got)
}
