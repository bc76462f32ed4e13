package main

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"math/rand"
	"net"
	"sync/atomic"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/bloom"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/peer"
	"github.com/btcsuite/btcd/wire"

	"github.com/bloomwatch/bloomwatch/bench/clientjob"
)

// Minimal-loop tuning. A batch of filtered-block requests is followed by a
// ping; minimalInflight batches are kept outstanding so the server never
// waits for the client.
const (
	minimalBatch    = 500
	minimalInflight = 4
	// minimalMinCapacity and minimalHeadroom size the filter: UPDATE_ALL
	// adds one outpoint per matched output, so the filter must have room
	// for the wallet's future outpoints, not just its addresses.
	minimalMinCapacity = 1000
	minimalHeadroom    = 10
	minimalTimeout     = 5 * time.Minute
)

// errMinimalProtocol marks a peer message the minimal loop cannot accept.
var errMinimalProtocol = errors.New("minimal: protocol violation")

// peerMsg carries one message from the peer's input goroutine to the loop.
type peerMsg struct {
	msg wire.Message
}

// runMinimal is the "minimal" subcommand: the floor a user could write with
// btcd's peer package and btcutil/bloom. Headers first (linkage and
// proof-of-work checked), then pipelined getdata MSG_FILTERED_BLOCK for every
// block, a partial-merkle-tree check of each merkleblock against its header
// (bip37.VerifyMerkleBlock, Bitcoin Core's checks) and the matched txs
// collected and classified against the exact watch set.
func runMinimal(ctx context.Context, job *ClientJob) (*ClientResult, error) {
	params, err := clientjob.ParamsFor(job.Network)
	if err != nil {
		return nil, err
	}
	ws, err := clientjob.NewWatchSet(job.Addresses, params)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, minimalTimeout)
	defer cancel()

	var received atomic.Uint64
	msgs := make(chan peerMsg, 4096)
	verack := make(chan struct{}, 1)
	forward := func(m wire.Message) {
		select {
		case msgs <- peerMsg{m}:
		case <-ctx.Done():
		}
	}
	cfg := &peer.Config{
		UserAgentName:    "bloomwatch-bench-minimal",
		UserAgentVersion: "0.1",
		ChainParams:      params,
		Services:         0,
		ProtocolVersion:  wire.ProtocolVersion,
		DisableRelayTx:   true,
		Listeners: peer.MessageListeners{
			OnVerAck: func(*peer.Peer, *wire.MsgVerAck) {
				select {
				case verack <- struct{}{}:
				default:
				}
			},
			OnHeaders:     func(_ *peer.Peer, m *wire.MsgHeaders) { forward(m) },
			OnMerkleBlock: func(_ *peer.Peer, m *wire.MsgMerkleBlock) { forward(m) },
			OnTx:          func(_ *peer.Peer, m *wire.MsgTx) { forward(m) },
			OnPong:        func(_ *peer.Peer, m *wire.MsgPong) { forward(m) },
			OnNotFound:    func(_ *peer.Peer, m *wire.MsgNotFound) { forward(m) },
		},
	}
	p, err := peer.NewOutboundPeer(cfg, job.Connect)
	if err != nil {
		return nil, fmt.Errorf("minimal: peer: %w", err)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", job.Connect)
	if err != nil {
		return nil, fmt.Errorf("minimal: dial: %w", err)
	}
	p.AssociateConnection(clientjob.CountConn{Conn: conn, N: &received})
	defer func() {
		p.Disconnect()
		p.WaitForDisconnect()
	}()
	select {
	case <-verack:
	case <-ctx.Done():
		return nil, fmt.Errorf("minimal: handshake: %w", ctx.Err())
	}
	if p.Services()&wire.SFNodeBloom == 0 {
		return nil, fmt.Errorf("%w: peer lacks NODE_BLOOM", errMinimalProtocol)
	}

	capacity := job.Capacity
	if capacity == 0 {
		capacity = uint32(len(ws.Pushes) * minimalHeadroom)
		if capacity < minimalMinCapacity {
			capacity = minimalMinCapacity
		}
	}
	fpRate := job.FPRate
	if fpRate <= 0 {
		fpRate = 0.0001
	}
	filter := bloom.NewFilter(capacity, rand.Uint32(), fpRate, wire.BloomUpdateAll)
	for _, e := range ws.Pushes {
		filter.Add(e)
	}
	// The message sent gets its own copy of the bits: filter stays the
	// mirror of the server's copy (see onTx).
	fl := filter.MsgFilterLoad()
	p.QueueMessage(&wire.MsgFilterLoad{Filter: append([]byte(nil), fl.Filter...), HashFuncs: fl.HashFuncs,
		Tweak: fl.Tweak, Flags: fl.Flags}, nil)

	m := &minimalLoop{
		p:       p,
		params:  params,
		ws:      ws,
		filter:  filter,
		res:     &ClientResult{Client: "minimal", FPUnit: "tx", FilterBytes: len(fl.Filter)},
		hashes:  []chainhash.Hash{*params.GenesisHash},
		headers: []wire.BlockHeader{params.GenesisBlock.Header},
		powLim:  params.PowLimit,
		pending: make(map[chainhash.Hash]struct{}),
	}
	if job.Birthday > 1 {
		// Headers only below the birthday: filtered blocks from it on.
		m.requested, m.processed = int(job.Birthday-1), int(job.Birthday-1)
	}
	start := time.Now()
	m.requestHeaders()
	for !m.done() {
		select {
		case pm := <-msgs:
			if err := m.handle(pm.msg); err != nil {
				return nil, err
			}
		case <-ctx.Done():
			return nil, fmt.Errorf("minimal: sync at height %d: %w", m.processed, ctx.Err())
		}
	}
	m.res.Phases = map[string]float64{"headers": ms(m.headersAt.Sub(start)), "p2p sync": ms(time.Since(start))}
	m.res.TipHeight = int32(len(m.hashes) - 1)
	m.res.BytesReceived = received.Load()
	m.res.Filter = minimalFilterReport(filter, capacity, fpRate, len(ws.Pushes))
	return m.res, nil
}

// minimalFilterReport describes the minimal loop's filter at the end of
// the sync: f mirrors the server's copy (the load plus the UPDATE_ALL
// insertions of every matched transaction).
func minimalFilterReport(f *bloom.Filter, capacity uint32, fpRate float64, elements int) *FilterReport {
	msg := f.MsgFilterLoad()
	r := &FilterReport{Bytes: len(msg.Filter), HashFuncs: msg.HashFuncs, Capacity: capacity, Elements: elements,
		TargetFPRate: fpRate, Loads: 1,
		// btcutil/bloom sizes min(-capacity ln p / ln^2 2 / 8, cap): it
		// caps where bip37.Capped does (bip37's TestCappedAgreesOnGrid).
		Capped: bip37.Capped(capacity, fpRate)}
	bf, err := bip37.NewFilterFromBits(msg.Filter, msg.HashFuncs, msg.Tweak, bip37.UpdateAll)
	if err == nil {
		r.LoadFPRate = bf.FPRate(float64(elements))
		r.EndFPRate = bf.CurrentFPRate()
	}
	return r
}

// minimalLoop is the single-goroutine state of the minimal client.
type minimalLoop struct {
	p      *peer.Peer
	params *chaincfg.Params
	ws     *clientjob.WatchSet
	res    *ClientResult
	powLim *big.Int
	// filter mirrors the server's copy of the filter: the server adds
	// the outpoints of every matched output (BLOOM_UPDATE_ALL), and
	// every transaction it matched is sent here, so replaying them in
	// order gives its bits (for the end-of-sync report only).
	filter *bloom.Filter

	hashes      []chainhash.Hash // best chain by height
	headers     []wire.BlockHeader
	headersDone bool
	headersAt   time.Time

	requested int // highest height requested as a filtered block
	processed int // highest height whose merkleblock and txs are done
	inflight  int // batches outstanding (each ends with a ping)
	nonce     uint64

	cur     int                         // height of the merkleblock being collected, 0 = none
	pending map[chainhash.Hash]struct{} // matched txids still expected for cur
}

func (m *minimalLoop) done() bool {
	return m.headersDone && m.inflight == 0 && m.processed >= len(m.hashes)-1
}

func (m *minimalLoop) requestHeaders() {
	gh := wire.NewMsgGetHeaders()
	last := m.hashes[len(m.hashes)-1]
	_ = gh.AddBlockLocatorHash(&last)
	m.p.QueueMessage(gh, nil)
}

// fill keeps minimalInflight batches of filtered-block requests outstanding.
func (m *minimalLoop) fill() {
	for m.inflight < minimalInflight && m.requested < len(m.hashes)-1 {
		if !m.headersDone && len(m.hashes)-1-m.requested < minimalBatch {
			return // wait for a full batch while headers still arrive
		}
		gd := wire.NewMsgGetDataSizeHint(minimalBatch)
		for m.requested < len(m.hashes)-1 && len(gd.InvList) < minimalBatch {
			m.requested++
			_ = gd.AddInvVect(wire.NewInvVect(wire.InvTypeFilteredBlock, &m.hashes[m.requested]))
		}
		m.p.QueueMessage(gd, nil)
		m.nonce++
		m.p.QueueMessage(wire.NewMsgPing(m.nonce), nil)
		m.inflight++
	}
}

func (m *minimalLoop) handle(msg wire.Message) error {
	switch msg := msg.(type) {
	case *wire.MsgHeaders:
		return m.onHeaders(msg)
	case *wire.MsgMerkleBlock:
		return m.onMerkleBlock(msg)
	case *wire.MsgTx:
		return m.onTx(msg)
	case *wire.MsgPong:
		if err := m.finishBlock(); err != nil {
			return err
		}
		m.inflight--
		m.fill()
	case *wire.MsgNotFound:
		return fmt.Errorf("%w: notfound for %d items", errMinimalProtocol, len(msg.InvList))
	}
	return nil
}

func (m *minimalLoop) onHeaders(msg *wire.MsgHeaders) error {
	for _, h := range msg.Headers {
		prev := m.hashes[len(m.hashes)-1]
		if h.PrevBlock != prev {
			return fmt.Errorf("%w: header %d does not connect", errMinimalProtocol, len(m.hashes))
		}
		hash := h.BlockHash()
		target := blockchain.CompactToBig(h.Bits)
		if target.Sign() <= 0 || target.Cmp(m.powLim) > 0 ||
			blockchain.HashToBig(&hash).Cmp(target) > 0 {
			return fmt.Errorf("%w: header %d: bad proof of work", errMinimalProtocol, len(m.hashes))
		}
		m.hashes = append(m.hashes, hash)
		m.headers = append(m.headers, *h)
	}
	if len(msg.Headers) == wire.MaxBlockHeadersPerMsg {
		m.requestHeaders()
	} else {
		m.headersDone = true
		m.headersAt = time.Now()
	}
	m.fill()
	return nil
}

func (m *minimalLoop) onMerkleBlock(mb *wire.MsgMerkleBlock) error {
	if err := m.finishBlock(); err != nil {
		return err
	}
	h := m.processed + 1
	if h > m.requested {
		return fmt.Errorf("%w: unrequested merkleblock", errMinimalProtocol)
	}
	hash := mb.Header.BlockHash()
	if hash != m.hashes[h] {
		return fmt.Errorf("%w: merkleblock %s out of order (want height %d)", errMinimalProtocol, hash, h)
	}
	matches, _, err := bip37.VerifyMerkleBlock(mb)
	if err != nil {
		return fmt.Errorf("minimal: merkleblock at %d: %w", h, err)
	}
	m.cur = h
	m.res.BlocksFetched++
	for _, txid := range matches {
		m.pending[txid] = struct{}{}
	}
	return nil
}

func (m *minimalLoop) onTx(tx *wire.MsgTx) error {
	txid := tx.TxHash()
	if _, ok := m.pending[txid]; !ok || m.cur == 0 {
		return fmt.Errorf("%w: unrequested tx %s", errMinimalProtocol, txid)
	}
	delete(m.pending, txid)
	m.filter.MatchTxAndUpdate(btcutil.NewTx(tx))
	if m.ws.Apply(tx) {
		m.res.Txs = append(m.res.Txs, FoundTx{Txid: txid.String(), Height: int32(m.cur)})
	} else {
		m.res.FalsePositives++
	}
	return nil
}

// finishBlock closes the merkleblock being collected: its matched txs have
// all arrived or are counted missing.
func (m *minimalLoop) finishBlock() error {
	if m.cur == 0 {
		return nil
	}
	m.res.Missing += len(m.pending)
	clear(m.pending)
	m.processed = m.cur
	m.cur = 0
	return nil
}
