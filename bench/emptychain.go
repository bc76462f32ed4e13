package main

import (
	"context"
	"fmt"
	"math/big"
	"os"
	"time"

	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// emptyBlockSpacing separates the generated empty blocks' timestamps: more
// than simnet's MinDiffReductionTime (20 minutes), so every block may carry
// the minimum difficulty and retargets stay at the proof-of-work limit.
// btcd's own `generate` stamps blocks with the wall clock, so a long run
// retargets to ever higher difficulty (at 19,000 blocks its CPU miner
// slowed to ~50 blocks/s): the long header chain is mined here instead.
const emptyBlockSpacing = 20*time.Minute + time.Second

// buildEmptyChain mines p.Blocks coinbase-only blocks in-process with
// timestamps spaced emptyBlockSpacing apart and ending now, and submits
// them to a simnet btcd in order. The keyring's first receive address is
// watched but never paid: the truth is empty.
func buildEmptyChain(ctx context.Context, env *benchEnv, p chainParams, dataDir string) (*fixtureMeta, error) {
	node, err := testnet.StartNode(ctx, testnet.Config{Network: "simnet", DataDir: dataDir, Log: env.log})
	if err != nil {
		return nil, fmt.Errorf("empty chain: start btcd: %w", err)
	}
	defer node.Stop()
	params := node.Params()
	kr, err := testnet.NewKeyring(benchSeed(p.Seed), params)
	if err != nil {
		return nil, fmt.Errorf("keyring: %w", err)
	}
	addr, err := kr.Address(benchPurpose, 0, 0)
	if err != nil {
		return nil, fmt.Errorf("keyring: %w", err)
	}
	xpub, err := kr.Xpub(benchPurpose)
	if err != nil {
		return nil, fmt.Errorf("keyring: %w", err)
	}
	prev, height, err := node.BestBlock()
	if err != nil {
		return nil, fmt.Errorf("empty chain: %w", err)
	}
	prevHdr, err := node.RPC().GetBlockHeader(prev)
	if err != nil {
		return nil, fmt.Errorf("empty chain: %w", err)
	}
	start := time.Now().Add(-time.Duration(p.Blocks) * emptyBlockSpacing).Truncate(time.Second)
	if !start.After(prevHdr.Timestamp) {
		return nil, fmt.Errorf("empty chain: %d blocks spaced %s do not fit after the tip's time %s", p.Blocks, emptyBlockSpacing, prevHdr.Timestamp)
	}
	target := blockchain.CompactToBig(params.PowLimitBits)
	hash := *prev
	for i := 1; i <= p.Blocks; i++ {
		if i%1000 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("empty chain: %w", err)
			}
		}
		blk, err := emptyBlock(params, hash, height+int32(i), start.Add(time.Duration(i)*emptyBlockSpacing), target)
		if err != nil {
			return nil, err
		}
		if err := node.RPC().SubmitBlock(btcutil.NewBlock(blk), nil); err != nil {
			return nil, fmt.Errorf("empty chain: submit block %d: %w", height+int32(i), err)
		}
		hash = blk.BlockHash()
		if step := max(p.Blocks/10, 1); i%step == 0 || i == p.Blocks {
			fmt.Fprintf(os.Stderr, "  submitted %d/%d blocks\n", i, p.Blocks)
		}
	}
	if err := node.Stop(); err != nil {
		return nil, fmt.Errorf("empty chain: stop btcd: %w", err)
	}
	return &fixtureMeta{Params: p, Format: chainFormat, BuiltAt: time.Now().UTC(),
		Addresses: []string{addr.EncodeAddress()}, Xpub: xpub}, nil
}

// emptyBlock builds and solves a coinbase-only block at height on prev.
func emptyBlock(params *chaincfg.Params, prev chainhash.Hash, height int32, ts time.Time, target *big.Int) (*wire.MsgBlock, error) {
	sig, err := txscript.NewScriptBuilder().AddInt64(int64(height)).AddInt64(0).Script()
	if err != nil {
		return nil, fmt.Errorf("empty chain: coinbase script: %w", err)
	}
	cb := wire.NewMsgTx(1)
	cb.AddTxIn(wire.NewTxIn(wire.NewOutPoint(&chainhash.Hash{}, wire.MaxPrevOutIndex), sig, nil))
	cb.AddTxOut(wire.NewTxOut(blockchain.CalcBlockSubsidy(height, params), []byte{txscript.OP_TRUE}))
	blk := wire.NewMsgBlock(wire.NewBlockHeader(0x20000000, &prev, ptr(cb.TxHash()), params.PowLimitBits, 0))
	blk.Header.Timestamp = ts
	if err := blk.AddTransaction(cb); err != nil {
		return nil, fmt.Errorf("empty chain: %w", err)
	}
	for {
		h := blk.Header.BlockHash()
		if blockchain.HashToBig(&h).Cmp(target) <= 0 {
			return blk, nil
		}
		blk.Header.Nonce++
	}
}

func ptr[T any](v T) *T { return &v }
