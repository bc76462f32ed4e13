package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/testnet/hostile"
)

// smallChain builds a fresh regtest chain with wallet payments and spends
// among noise, and the job every client gets.
func smallChain(t *testing.T) (*testnet.Harness, []FoundTx, *ClientJob) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h := testnet.NewT(t, testnet.Options{})
	kr, err := testnet.NewKeyring(benchSeed(3), h.Node().Params())
	if err != nil {
		t.Fatal(err)
	}
	p := chainParams{Blocks: 40, Txs: 4, Addrs: 6, Spend: 0.5, Seed: 3}
	truth, err := h.BuildChain(ctx, testnet.ChainSpec{Blocks: p.Blocks, TxsPerBlock: p.Txs, Keyring: kr,
		Purpose: benchPurpose, WatchAddrs: p.Addrs, SpendFraction: p.Spend, Seed: p.Seed})
	if err != nil {
		t.Fatal(err)
	}
	txs, addrs, err := truthOf(truth, kr, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(txs) < p.Addrs+2 {
		t.Fatalf("truth has only %d txs", len(txs))
	}
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
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for name, run := range map[string]func(context.Context, *ClientJob) (*ClientResult, error){
		"minimal": runMinimal, "neutrino": runNeutrino,
	} {
		t.Run(name, func(t *testing.T) {
			res, err := run(ctx, job)
			if err != nil {
				t.Fatal(err)
			}
			if ok, detail := compareTruth(truth, res.Txs); !ok {
				t.Fatalf("%s: %s", name, detail)
			}
			if res.TipHeight != tip {
				t.Fatalf("%s synced to %d, tip %d", name, res.TipHeight, tip)
			}
			if res.BytesReceived == 0 || res.BlocksFetched == 0 {
				t.Fatalf("%s: nothing counted: %+v", name, res)
			}
			if name == "minimal" && (res.Missing != 0 || res.BlocksFetched != int(tip)) {
				t.Fatalf("minimal: missing %d, fetched %d of %d blocks", res.Missing, res.BlocksFetched, tip)
			}
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
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			j := *job
			j.Connect = p.Addr()
			res, err := runMinimal(ctx, &j)
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				if ok, detail := compareTruth(truth, res.Txs); !ok {
					t.Fatal(detail)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}
