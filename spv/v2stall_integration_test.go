package spv_test

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"log/slog"
	"net"
	"os"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/stretchr/testify/require"
)

// TestStallingV2KeyNeverSent checks the v2 key that would stall a btcd v1
// peer. btcd's wire package reads the key's first 24 bytes as a v1 header
// and, magic wrong, first discards the payload length it claims: a v2 key
// whose bytes 16-19 claim 41 bytes to 32 MiB (1 key in 128) left btcd
// v0.25.0 without --v2transport (and testnet/hostile, built on the same
// package) waiting, and the attempt cost the whole handshake timeout
// instead of the immediate hang-up that sends the node to v1: a sync
// with --peer-timeout 20s (the handshake timeout's 20 s) failed with 'no
// reachable peer for 20s' (reliability's TestCrashRestart and
// TestDamagedFiles: 29 such syncs, about 20 % of the package's runs). The
// premise is checked on the real btcd; then a node whose first key is
// made to stall (StallNextV2Keys) must close that connection before
// sending a byte, connect again with a new key and sync over v1, and no
// connection the relay saw may carry a stalling key.
func TestStallingV2KeyNeverSent(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h := testnet.NewT(t, testnet.Options{})
	c := newTransportChain(t, h.Chain)

	// The premise: btcd hangs up at once on a plain key, and not on a
	// stalling one (it would only at its own 30 s negotiation timeout).
	key := func(length uint32) []byte {
		k := make([]byte, 64)
		_, _ = rand.Read(k)
		binary.LittleEndian.PutUint32(k[16:20], length)
		k[0] ^= 0xff // never the magic
		return k
	}
	dial := func(k []byte) net.Conn {
		conn, err := net.Dial("tcp", h.Node().P2PAddr())
		require.NoError(t, err)
		t.Cleanup(func() { _ = conn.Close() })
		_, err = conn.Write(k)
		require.NoError(t, err)
		return conn
	}
	stalling, plain := key(1<<20), key(0xa5a5a5a5)
	require.True(t, spv.V1Stalls(stalling), "V1Stalls disagrees with the keys made")
	require.False(t, spv.V1Stalls(plain), "V1Stalls disagrees with the keys made")
	sc, pc := dial(stalling), dial(plain)
	_ = pc.SetReadDeadline(time.Now().Add(20 * time.Second))
	read, err := pc.Read(make([]byte, 64))
	require.Equal(t, 0, read, "btcd answered a plain v2 key with %d bytes, %v; want a hang-up", read, err)
	require.Error(t, err, "btcd answered a plain v2 key with %d bytes, %v; want a hang-up", read, err)
	require.NotErrorIs(t, err, os.ErrDeadlineExceeded, "btcd answered a plain v2 key with %d bytes, %v; want a hang-up", read, err)
	_ = sc.SetReadDeadline(time.Now().Add(time.Second))
	read, err = sc.Read(make([]byte, 64))
	require.Equal(t, 0, read, "btcd answered a stalling v2 key with %d bytes, %v; want it still waiting", read, err)
	require.ErrorIs(t, err, os.ErrDeadlineExceeded, "btcd answered a stalling v2 key with %d bytes, %v; want it still waiting", read, err)

	relay, err := testnet.StartRelay(t.Context(), h.Node().P2PAddr())
	require.NoError(t, err)
	defer relay.Close()
	logs := &logBuffer{}
	undo := spv.StallNextV2Keys(1)
	defer undo()
	n, _ := syncedOver(t, c, spv.TransportAuto, relay.Addr(), transcript.TransportV1, func(cfg *spv.Config) {
		cfg.Log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		// A stalling key sent would cost btcd's 30 s; the relay's
		// record, not the time, tells whether one was.
		cfg.Tuning.HandshakeTimeout = time.Minute
	})
	require.NoError(t, n.Stop())
	got := logs.count("v2 key would stall a btcd v1 peer")
	require.Equal(t, 1, got, "%d stalling keys refused, want 1", got)
	got = logs.count("reconnecting over v1", `v2_handshake="sent nothing"`)
	require.Equal(t, 1, got, "%d v2 attempts btcd hung up on, want 1", got)
	// Each connection's bytes up, in order: the relay records every
	// read with its connection, the up stream is those reads in turn.
	up, _ := relay.Recording()
	conns := map[int][]byte{}
	last := -1
	for _, ch := range relay.Chunks() {
		if !ch.Up {
			continue
		}
		conns[ch.Conn] = append(conns[ch.Conn], up[:ch.Bytes]...)
		up = up[ch.Bytes:]
		last = max(last, ch.Conn)
	}
	require.GreaterOrEqual(t, last, 2, "%d connections, the first carrying %d bytes: want the refused one empty, then the v2 attempt and v1", last+1, len(conns[0]))
	require.Len(t, conns[0], 0, "%d connections, the first carrying %d bytes: want the refused one empty, then the v2 attempt and v1", last+1, len(conns[0]))
	magic := binary.LittleEndian.AppendUint32(nil, uint32(h.Params().Net))
	for id, b := range conns {
		require.False(t, len(b) >= 64 && !bytes.HasPrefix(b, magic) && spv.V1Stalls(b[:64]), "connection %d sent a stalling v2 key: %x", id, b[:64])
	}
}
