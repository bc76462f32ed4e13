package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/bench/clientjob"
	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/testnet/hostile"
	"github.com/stretchr/testify/require"
)

// smallChain builds a fresh regtest chain with wallet payments and spends
// among noise, and the job every client gets.
func smallChain(t *testing.T) (*testnet.Harness, []FoundTx, *ClientJob) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h := testnet.NewT(t, testnet.Options{})
	kr, err := testnet.NewKeyring(benchSeed(3), h.Node().Params())
	require.NoError(t, err)
	p := chainParams{Blocks: 40, Txs: 4, Addrs: 6, Spend: 0.5, Seed: 3}
	truth, err := h.BuildChain(ctx, testnet.ChainSpec{Blocks: p.Blocks, TxsPerBlock: p.Txs, Keyring: kr,
		Purpose: benchPurpose, WatchAddrs: p.Addrs, SpendFraction: p.Spend, Seed: p.Seed})
	require.NoError(t, err)
	txs, addrs, err := truthOf(truth, kr, p)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(txs), p.Addrs+2, "truth has only %d txs", len(txs))
	job := &ClientJob{Network: "regtest", Connect: h.Node().P2PAddr(), Addresses: addrs,
		DataDir: t.TempDir(), FPRate: 0.0001}
	return h, txs, job
}

func TestClientsFindTheTruth(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h, truth, job := smallChain(t)
	_, tip, err := h.Node().BestBlock()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	neutrinoBin, err := buildNeutrino(ctx, t.TempDir())
	require.NoError(t, err)
	// runNeutrino runs the neutrino client as the bench does: its own
	// program (bench/neutrino) given a job file.
	runNeutrino := func(ctx context.Context, job *ClientJob) (*ClientResult, error) {
		path := filepath.Join(t.TempDir(), "job.json")
		if err := clientjob.WriteJob(path, job); err != nil {
			return nil, err
		}
		cmd := exec.CommandContext(ctx, neutrinoBin, path)
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("neutrino: %w", err)
		}
		res := &ClientResult{}
		return res, json.Unmarshal(out, res)
	}
	for name, run := range map[string]func(context.Context, *ClientJob) (*ClientResult, error){
		"minimal": runMinimal, "neutrino": runNeutrino,
	} {
		t.Run(name, func(t *testing.T) {
			res, err := run(ctx, job)
			require.NoError(t, err)
			ok, detail := compareTruth(truth, res.Txs)
			require.True(t, ok, "%s: %s", name, detail)
			require.Equal(t, tip, res.TipHeight, "%s synced to %d, tip %d", name, res.TipHeight, tip)
			require.NotEqual(t, uint64(0), res.BytesReceived, "%s: nothing counted: %+v", name, res)
			require.NotEqual(t, 0, res.BlocksFetched, "%s: nothing counted: %+v", name, res)
			require.False(t, name == "minimal" && (res.Missing != 0 || res.BlocksFetched != int(tip)), "minimal: missing %d, fetched %d of %d blocks", res.Missing, res.BlocksFetched, tip)
		})
	}
}

// TestMinimalRejectsHostilePeers checks that the floor is not a strawman
// that accepts anything: forged proofs and headers stop it with an error.
func TestMinimalRejectsHostilePeers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h, truth, job := smallChain(t)
	tests := []struct {
		scenario hostile.Scenario
		want     error
	}{
		{hostile.Honest, nil},
		{hostile.BadMerkleRoot, bip37.ErrMerkleRootMismatch},
		{hostile.TxNotInBlock, errMinimalProtocol},
		{hostile.HeaderBadPoW, errMinimalProtocol},
		{hostile.HeadersNotConnecting, errMinimalProtocol},
	}
	for _, tc := range tests {
		t.Run(string(tc.scenario), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			p, err := hostile.Start(ctx, hostile.Config{Upstream: h.Node().RPC(), Params: h.Node().Params(), Scenario: tc.scenario})
			require.NoError(t, err)
			defer p.Close()
			j := *job
			j.Connect = p.Addr()
			res, err := runMinimal(ctx, &j)
			if tc.want == nil {
				require.NoError(t, err)
				ok, detail := compareTruth(truth, res.Txs)
				require.True(t, ok, detail)
				return
			}
			require.ErrorIs(t, err, tc.want, "got %v, want %v", err, tc.want)
		})
	}
}

// TestEmptyChainCacheAndHeaderOnly builds a header-only chain into a private
// cache, reuses it, serves a copy and syncs it with and without a birthday
// past the tip.
func TestEmptyChainCacheAndHeaderOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	btcd, err := testnet.BtcdBinary(ctx) // built once in the real cache
	require.NoError(t, err)
	t.Setenv("BLOOMWATCH_BTCD", btcd)
	spawn, err := buildSpawn(ctx, t.TempDir()) // before the cache dir moves: go build uses it
	require.NoError(t, err)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	env := &benchEnv{log: io.Discard, tmp: t.TempDir(), spawn: spawn, cfg: &benchConfig{FPRate: 0.0001}}
	p := chainParams{Blocks: 150, Seed: 9, Empty: true}
	fx, err := prepareChain(ctx, env, p)
	require.NoError(t, err)
	require.Len(t, fx.truth, 0, "fixture %+v", fx)
	require.Len(t, fx.addresses, 1, "fixture %+v", fx)
	require.True(t, strings.HasPrefix(fx.build, "built"), "fixture %+v", fx)
	again, err := prepareChain(ctx, env, p)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(again.build, "cached"), "second prepare rebuilt: %s", again.build)
	srv, err := again.serve(ctx, env, 1)
	require.NoError(t, err)
	defer srv.stop()
	require.Equal(t, int32(p.Blocks)+1, srv.tip, "served tip %d, want %d (chain + one fresh block)", srv.tip, p.Blocks+1)
	// The series machinery with stand-ins for the bloomwatch binary: one
	// that fails and one that prints a summary claiming the tip.
	fake := filepath.Join(t.TempDir(), "bloomwatch")
	summary := fmt.Sprintf(`{"tip_height":-1,"header_height":%d,"txs":[],"false_positives":0,"bytes_received":7}`, srv.tip)
	require.NoError(t, os.WriteFile(fake, []byte("#!/bin/sh\necho '"+summary+"'\n"), 0o755))
	for _, tc := range []struct {
		bin    string
		failed bool
	}{{"/bin/false", true}, {fake, false}} {
		env.bloomwatch = tc.bin
		rep, err := runSeries(ctx, env, p, []string{"bloomwatch"}, 1, true)
		require.NoError(t, err)
		r := rep.Runs[0]
		require.Equal(t, tc.failed, r.Failed, "%s: %+v, mismatches %d", tc.bin, r, rep.Mismatches)
		require.NotEqual(t, tc.failed, r.Match, "%s: %+v, mismatches %d", tc.bin, r, rep.Mismatches)
		require.Equal(t, tc.failed, (rep.Mismatches == 1), "%s: %+v, mismatches %d", tc.bin, r, rep.Mismatches)
		require.False(t, !tc.failed && (r.Bytes != 7 || r.Tip != -1), "fake summary parsed as %+v", r)
	}

	job := &ClientJob{Network: "simnet", Connect: srv.p2p, Addresses: again.addresses, DataDir: t.TempDir(), FPRate: 0.0001}
	full, err := runMinimal(ctx, job)
	require.NoError(t, err)
	require.Equal(t, srv.tip, full.TipHeight, "full sync: %+v", full)
	require.Equal(t, int(srv.tip), full.BlocksFetched, "full sync: %+v", full)
	require.Len(t, full.Txs, 0, "full sync: %+v", full)
	require.Equal(t, 0, full.FalsePositives, "full sync: %+v", full)
	job.Birthday = srv.tip + 1
	hdrs, err := runMinimal(ctx, job)
	require.NoError(t, err)
	require.Equal(t, srv.tip, hdrs.TipHeight, "header-only sync: %+v (full %d bytes)", hdrs, full.BytesReceived)
	require.Equal(t, 0, hdrs.BlocksFetched, "header-only sync: %+v (full %d bytes)", hdrs, full.BytesReceived)
	require.Less(t, hdrs.BytesReceived, full.BytesReceived, "header-only sync: %+v (full %d bytes)", hdrs, full.BytesReceived)
}

// TestServeTwoPeers serves one cached chain from two btcds, each on its own
// copy, and checks they are distinct servers at the same fresh tip.
func TestServeTwoPeers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	btcd, err := testnet.BtcdBinary(ctx)
	require.NoError(t, err)
	t.Setenv("BLOOMWATCH_BTCD", btcd)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	env := &benchEnv{log: io.Discard, tmp: t.TempDir(), cfg: &benchConfig{FPRate: 0.0001}}
	fx, err := prepareChain(ctx, env, chainParams{Blocks: 40, Seed: 11, Empty: true})
	require.NoError(t, err)
	srv, err := fx.serve(ctx, env, 2)
	require.NoError(t, err)
	defer srv.stop()
	peers, pids := srv.peers(2), srv.pids()
	require.Len(t, peers, 2, "peers %v pids %v", peers, pids)
	require.NotEqual(t, peers[1], peers[0], "peers %v pids %v", peers, pids)
	require.Len(t, pids, 2, "peers %v pids %v", peers, pids)
	require.NotEqual(t, pids[1], pids[0], "peers %v pids %v", peers, pids)
	require.Len(t, srv.peers(1), 1, "peers %v pids %v", peers, pids)
	h1, tip1, err := srv.node.BestBlock()
	require.NoError(t, err)
	h2, tip2, err := srv.more[0].BestBlock()
	require.NoError(t, err)
	require.Equal(t, *h2, *h1, "tips %d %v and %d %v, served %d", tip1, h1, tip2, h2, srv.tip)
	require.Equal(t, tip2, tip1, "tips %d %v and %d %v, served %d", tip1, h1, tip2, h2, srv.tip)
	require.Equal(t, srv.tip, tip1, "tips %d %v and %d %v, served %d", tip1, h1, tip2, h2, srv.tip)
	require.Equal(t, int32(41), srv.tip, "tips %d %v and %d %v, served %d", tip1, h1, tip2, h2, srv.tip)
	for _, addr := range peers {
		job := &ClientJob{Network: "simnet", Connect: addr, Addresses: fx.addresses, DataDir: t.TempDir(), FPRate: 0.0001}
		res, err := runMinimal(ctx, job)
		require.NoError(t, err)
		require.Equal(t, srv.tip, res.TipHeight, "%s: %+v filter %+v", addr, res, res.Filter)
		require.NotNil(t, res.Filter, "%s: %+v filter %+v", addr, res, res.Filter)
		require.Equal(t, 1, res.Filter.Loads, "%s: %+v filter %+v", addr, res, res.Filter)
		require.False(t, res.Filter.Capped, "%s: %+v filter %+v", addr, res, res.Filter)
	}
}
