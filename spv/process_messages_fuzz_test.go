package spv

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/watch/watchtest"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// The message-sequence fuzz target, in the manner of Bitcoin Core's
// process_messages harness: the input is a program of operations by up
// to three simulated peers (an arbitrary message decoded from the input's
// bytes, the honest server answering what the manager asked, a tick of the
// clock, a disconnect and a reconnect, a block or headers or a transaction
// of the real chain out of turn). Every message passes the peer's account
// at the connection, as on a real connection, before the manager. After
// every operation the memory held for each peer is within its budget;
// after the program the watcher holds no confirmed transaction the chain
// lacks, and Stop leaves no goroutine.

// fuzzChain is the chain the simulated peers serve: six blocks, three of
// which pay the watched script, mined once per process.
var fuzzChain struct {
	once   sync.Once
	blocks []*wire.MsgBlock
	truth  map[chainhash.Hash]int32 // txid -> height
}

// fuzzScript is the script the fuzzed watcher watches.
var fuzzScript = p2wpkh(0x33)

// fuzzCmds are the commands an arbitrary message is decoded as: every
// message type the manager handles and some it does not.
var fuzzCmds = []string{
	wire.CmdHeaders, wire.CmdMerkleBlock, wire.CmdTx, wire.CmdBlock, wire.CmdInv,
	wire.CmdNotFound, wire.CmdPong, wire.CmdReject, wire.CmdPing, wire.CmdAddr,
	wire.CmdGetData, wire.CmdGetHeaders, wire.CmdFeeFilter, wire.CmdSendHeaders,
}

// newFuzzMessage returns an empty message of cmd.
func newFuzzMessage(cmd string) wire.Message {
	switch cmd {
	case wire.CmdHeaders:
		return &wire.MsgHeaders{}
	case wire.CmdMerkleBlock:
		return &wire.MsgMerkleBlock{}
	case wire.CmdTx:
		return &wire.MsgTx{}
	case wire.CmdBlock:
		return &wire.MsgBlock{}
	case wire.CmdInv:
		return &wire.MsgInv{}
	case wire.CmdNotFound:
		return &wire.MsgNotFound{}
	case wire.CmdPong:
		return &wire.MsgPong{}
	case wire.CmdReject:
		return &wire.MsgReject{}
	case wire.CmdPing:
		return &wire.MsgPing{}
	case wire.CmdAddr:
		return &wire.MsgAddr{}
	case wire.CmdGetData:
		return &wire.MsgGetData{}
	case wire.CmdGetHeaders:
		return &wire.MsgGetHeaders{}
	case wire.CmdFeeFilter:
		return &wire.MsgFeeFilter{}
	}
	return &wire.MsgSendHeaders{}
}

// fuzzProgram reads operations from the fuzzer's bytes.
type fuzzProgram struct{ data []byte }

// next returns the next byte (0 past the end).
func (p *fuzzProgram) next() byte {
	if len(p.data) == 0 {
		return 0
	}
	b := p.data[0]
	p.data = p.data[1:]
	return b
}

// take returns the next n bytes, or fewer at the end.
func (p *fuzzProgram) take(n int) []byte {
	n = min(n, len(p.data))
	b := p.data[:n]
	p.data = p.data[n:]
	return b
}

// fuzzSeeds are programs for the seed corpus: an honest sync, one with
// junk between answers, a disconnect in the middle, a flood of pings.
func fuzzSeeds() [][]byte {
	honest := bytes.Repeat([]byte{2*3 + 0, 2*3 + 1, 2*3 + 2}, 8)
	junk := append([]byte{}, honest[:6]...)
	junk = append(junk, 0, 4, 80, 0x01, 0x00) // an inv of one item from peer 0, then its header bytes
	junk = append(junk, bytes.Repeat([]byte{0xaa}, 80)...)
	junk = append(junk, honest...)
	drop := append([]byte{}, honest[:9]...)
	drop = append(drop, 4*3+0, 2*3+0, 4*3+1, 2*3+1)
	drop = append(drop, honest...)
	pings := append([]byte{}, honest[:3]...)
	for range 40 {
		pings = append(pings, 0*3+1, 8, 8, 1, 2, 3, 4, 5, 6, 7, 8)
	}
	chainOps := []byte{5*3 + 0, 2, 6*3 + 1, 0, 7*3 + 2, 1, 3*3 + 0, 200, 2*3 + 0, 2*3 + 1}
	return [][]byte{honest, junk, drop, pings, chainOps}
}

func FuzzMessageSequences(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		runFuzzProgram(t, data)
	})
}

// TestFuzzHarnessSyncs: the honest seed program syncs the watcher to the
// chain's three payments, so the target's checks see a working sync.
func TestFuzzHarnessSyncs(t *testing.T) {
	got := runFuzzProgram(t, fuzzSeeds()[0])
	require.Equal(t, 3, got, "the honest program confirmed %d payments, want 3", got)
}

// runFuzzProgram runs one program against a fresh manager and returns the
// number of confirmed transactions the watcher holds.
func runFuzzProgram(t *testing.T, data []byte) int {
	g0 := runtime.NumGoroutine()
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	w := watchtest.NewMemWatcher(1, fuzzScript)
	n, m := newTestManager(t, w, Config{SpotCheckEvery: 1, clock: clock, Tuning: Tuning{BatchSize: 3}})
	fuzzChain.once.Do(func() {
		fuzzChain.truth = make(map[chainhash.Hash]int32)
		fuzzChain.blocks = mineBlocks(t, n.cfg.Network, genesis(n), 6, func(i int) []*wire.MsgTx {
			if i%2 == 1 {
				return nil
			}
			return []*wire.MsgTx{payTo(byte(i+1), int64(1000*(i+1)), fuzzScript), payTo(byte(100+i), 5, p2wpkh(0x99))}
		})
		for h, b := range fuzzChain.blocks {
			for _, tx := range b.Transactions {
				fuzzChain.truth[tx.TxHash()] = int32(h + 1)
			}
		}
	})
	chain := fuzzChain.blocks
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var sims [3]*simServer
	connect := func(i int) {
		s := newSimPeer(t, m, "sim:"+string(rune('1'+i)), chain, i)
		s.ps.acct = newPeerAccount(ctx, n, s.ps)
		s.connect()
		sims[i] = s
	}
	// deliver passes msg through the peer's account, as btcd's OnRead
	// and a listener do, then to the manager.
	deliver := func(s *simServer, msg wire.Message) {
		if !s.ps.ready {
			return
		}
		s.ps.acct.onRead(int(msgWire(msg)), msg, nil)
		if s.ps.acct.dropped() {
			return
		}
		held, ok := s.ps.acct.hold()
		if !ok {
			return
		}
		m.handle(peerWireMsg{ps: s.ps, msg: msg, held: held})
	}
	for i := range sims {
		connect(i)
	}
	p := &fuzzProgram{data: data}
	for ops := 0; len(p.data) > 0 && ops < 400; ops++ {
		b := p.next()
		s := sims[int(b)%3]
		switch (b / 3) % 8 {
		case 0: // an arbitrary message decoded from the input
			msg := newFuzzMessage(fuzzCmds[int(p.next())%len(fuzzCmds)])
			payload := p.take(int(p.next()) * 4)
			if msg.BtcDecode(bytes.NewReader(payload), wire.ProtocolVersion, wire.WitnessEncoding) == nil {
				deliver(s, msg)
			}
		case 1: // the honest server answers some of what it was asked
			for k := int(p.next()%8) + 1; k > 0 && len(s.queue) > 0; k-- {
				s.runOneVia(deliver)
			}
		case 2: // and all of it
			for k := 0; k < 2000 && len(s.queue) > 0; k++ {
				s.runOneVia(deliver)
			}
		case 3: // the clock moves on
			clock.now = clock.now.Add(time.Duration(p.next()) * time.Second)
			m.onTick(clock.now)
		case 4: // the peer disconnects; another takes its slot
			m.handle(peerDoneMsg{ps: s.ps})
			s.ps.acct.close()
			connect(int(b) % 3)
		case 5: // a block of the chain, filtered, out of turn
			blk := chain[int(p.next())%len(chain)]
			if s.filter != nil {
				mb, idx := bip37.FilterBlock(s.filter, blk)
				deliver(s, mb)
				for _, j := range idx {
					deliver(s, blk.Transactions[j])
				}
			}
		case 6: // headers of the chain from some height
			from := int(p.next()) % len(chain)
			hs := wire.NewMsgHeaders()
			for _, blk := range chain[from:] {
				_ = hs.AddBlockHeader(&blk.Header)
			}
			deliver(s, hs)
		case 7: // a transaction of the chain relayed
			blk := chain[int(p.next())%len(chain)]
			deliver(s, blk.Transactions[len(blk.Transactions)-1])
		}
		for _, s := range sims {
			held := s.ps.stateBytes() + s.ps.acct.held()
			require.LessOrEqual(t, held, int64(maxPeerStateBytes+maxWriteQueueBytes+maxInboxBytes), "peer %s holds %d bytes", s.ps.addr, held)
		}
	}
	confirmed := 0
	for txid, tx := range w.Txs() {
		if tx.Height < 0 {
			continue
		}
		confirmed++
		h, ok := fuzzChain.truth[txid]
		require.True(t, ok, "the watcher confirms %v at %d; the chain has it at %d (%v)", txid, tx.Height, h, ok)
		require.Equal(t, tx.Height, h, "the watcher confirms %v at %d; the chain has it at %d (%v)", txid, tx.Height, h, ok)
	}
	for _, s := range sims {
		s.ps.acct.close()
	}
	cancel()
	require.NoError(t, n.Stop(), "stop")
	// Stop waits for what it started: nothing may be left. (A test
	// goroutine of the package may still be ending: give it a moment.)
	for i := 0; runtime.NumGoroutine() > g0; i++ {
		if i == 500 {
			buf := make([]byte, 1<<16)
			require.FailNow(t, fmt.Sprintf("%d goroutines after Stop, %d before:\n%s", runtime.NumGoroutine(), g0, buf[:runtime.Stack(buf, true)]))
		}
		time.Sleep(2 * time.Millisecond)
	}
	return confirmed
}

// runOneVia answers the first queued request as runOne does, handing
// each answer to deliver instead of the manager.
func (s *simServer) runOneVia(deliver func(*simServer, wire.Message)) {
	s.deliverVia = deliver
	defer func() { s.deliverVia = nil }()
	s.runOne()
}
