package hostile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand"
	"net"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"

	"github.com/bloomwatch/bloomwatch/bip37"
)

// maxRecentTxs bounds the cache of transactions served in blocks, kept to
// answer getdata MSG_TX for them.
const maxRecentTxs = 10000

// session is one connection: the handshake, then one message at a time.
type session struct {
	p    *Peer
	cfg  Config
	conn net.Conn
	pver uint32

	fork    []wire.BlockHeader // the view's fork, built once (fork scenarios)
	filter  *bip37.Filter
	applied int

	stalled   bool
	batchDone bool
	rawSent   bool
	sideSent  bool
	requested map[chainhash.Hash]bool
	recentTxs map[chainhash.Hash]*wire.MsgTx
	// done is closed when the session ends (it stops the keep-alive of
	// StallKeepAlive, the only writer besides the message loop).
	done chan struct{}
}

// newSession prepares a session on conn.
func newSession(p *Peer, conn net.Conn) *session {
	return &session{
		p:         p,
		cfg:       p.cfg,
		conn:      conn,
		pver:      p.cfg.ProtocolVersion,
		requested: make(map[chainhash.Hash]bool),
		recentTxs: make(map[chainhash.Hash]*wire.MsgTx),
		done:      make(chan struct{}),
	}
}

// errClosedByUs ends a session on the peer's own decision.
var errClosedByUs = errors.New("closed by the hostile peer")

// run performs the handshake and the message loop. It returns whether the
// peer itself decided to close, and the error that ended the session.
func (s *session) run() (bool, error) {
	defer close(s.done)
	if err := s.handshake(); err != nil {
		return false, err
	}
	s.p.count(func(st *Stats) { st.Handshakes++ })
	if s.cfg.Scenario == InvFlood {
		if err := s.flood(); err != nil {
			return false, err
		}
	}
	for {
		msg, err := s.read()
		if err != nil {
			return false, err
		}
		if s.stalled {
			continue
		}
		if err := s.handle(msg); err != nil {
			return errors.Is(err, errClosedByUs), err
		}
	}
}

// read reads the next message, skipping unknown commands.
func (s *session) read() (wire.Message, error) {
	for {
		_, msg, _, err := wire.ReadMessageWithEncodingN(s.conn, s.pver, s.cfg.Params.Net, wire.LatestEncoding)
		if errors.Is(err, wire.ErrUnknownMessage) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read: %w", err)
		}
		s.p.count(func(st *Stats) { st.Received[msg.Command()]++ })
		return msg, nil
	}
}

// write sends msg with encoding enc.
func (s *session) write(msg wire.Message, enc wire.MessageEncoding) error {
	_ = s.conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	if _, err := wire.WriteMessageWithEncodingN(s.conn, msg, s.pver, s.cfg.Params.Net, enc); err != nil {
		return fmt.Errorf("write %s: %w", msg.Command(), err)
	}
	s.p.count(func(st *Stats) { st.Sent[msg.Command()]++ })
	return nil
}

// writeRaw sends bytes as they are.
func (s *session) writeRaw(b []byte, what string) error {
	_ = s.conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	if _, err := s.conn.Write(b); err != nil {
		return fmt.Errorf("write %s: %w", what, err)
	}
	s.p.count(func(st *Stats) { st.Sent[what]++ })
	return nil
}

// canApply reports whether the misbehaviour may be applied once more.
func (s *session) canApply() bool {
	return s.cfg.Times == 0 || s.applied < s.cfg.Times
}

// markApplied records one application of the misbehaviour.
func (s *session) markApplied(what string) {
	s.applied++
	s.p.count(func(st *Stats) { st.Applied++ })
	s.p.logf("applied %s: %s", s.cfg.Scenario, what)
}

// markSkipped records an opportunity where the misbehaviour did not apply.
func (s *session) markSkipped(why error) {
	s.p.count(func(st *Stats) { st.Skipped++ })
	s.p.logf("skipped %s: %v", s.cfg.Scenario, why)
}

// services returns the service bits the scenario advertises.
func (s *session) services() wire.ServiceFlag {
	if s.cfg.Scenario == NoBloom {
		return wire.SFNodeNetwork | wire.SFNodeWitness
	}
	return wire.SFNodeNetwork | wire.SFNodeBloom | wire.SFNodeWitness | wire.SFNodeCF
}

// handshake waits for the node's version and answers with version,
// sendaddrv2 (protocol 70016 and later) and verack.
func (s *session) handshake() error {
	_ = s.conn.SetReadDeadline(time.Now().Add(handshakeTimeout))
	defer func() { _ = s.conn.SetReadDeadline(time.Time{}) }()
	msg, err := s.read()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrHandshake, err)
	}
	ver, ok := msg.(*wire.MsgVersion)
	if !ok {
		return fmt.Errorf("%w: first message %s, want version", ErrHandshake, msg.Command())
	}
	if v := uint32(ver.ProtocolVersion); v < s.pver {
		s.pver = v
	}
	headers, err := s.p.chain.refresh()
	if err != nil {
		return err
	}
	// The advertised height is the view's tip; LowWorkFork claims the
	// honest tip instead, since a node picks its download peer by the
	// announced height and the fork is one block shorter.
	tip := int32(len(headers)) - 1
	if v, err := s.view(); err == nil && s.cfg.Scenario != LowWorkFork {
		tip = v.tipHeight()
	}
	local, _ := s.conn.LocalAddr().(*net.TCPAddr)
	remote, _ := s.conn.RemoteAddr().(*net.TCPAddr)
	if local == nil || remote == nil {
		return fmt.Errorf("%w: not a TCP connection", ErrHandshake)
	}
	me := wire.NewNetAddress(local, s.services())
	you := wire.NewNetAddress(remote, ver.Services)
	nonce := binary.LittleEndian.Uint64(s.p.randBytes(8))
	out := wire.NewMsgVersion(me, you, nonce, tip)
	out.ProtocolVersion = int32(s.cfg.ProtocolVersion)
	out.Services = s.services()
	if err := out.AddUserAgent(userAgentName, "0.1", string(s.cfg.Scenario)); err != nil {
		return fmt.Errorf("%w: user agent: %w", ErrHandshake, err)
	}
	if err := s.write(out, wire.LatestEncoding); err != nil {
		return err
	}
	if s.pver >= wire.AddrV2Version {
		if err := s.write(wire.NewMsgSendAddrV2(), wire.LatestEncoding); err != nil {
			return err
		}
	}
	if err := s.write(wire.NewMsgVerAck(), wire.LatestEncoding); err != nil {
		return err
	}
	if s.cfg.Scenario == NoBloom {
		s.markApplied("version without NODE_BLOOM")
	}
	return nil
}

// flood sends the InvFlood invs.
func (s *session) flood() error {
	for i := 0; i < s.cfg.FloodMessages; i++ {
		inv := wire.NewMsgInvSizeHint(uint(s.cfg.FloodSize))
		raw := s.p.randBytes(chainhash.HashSize * s.cfg.FloodSize)
		for j := 0; j < s.cfg.FloodSize; j++ {
			var h chainhash.Hash
			copy(h[:], raw[j*chainhash.HashSize:])
			if err := inv.AddInvVect(wire.NewInvVect(wire.InvTypeTx, &h)); err != nil {
				return fmt.Errorf("flood inv: %w", err)
			}
		}
		if err := s.write(inv, wire.LatestEncoding); err != nil {
			return err
		}
	}
	s.markApplied(fmt.Sprintf("%d invs of %d random txids", s.cfg.FloodMessages, s.cfg.FloodSize))
	return nil
}

// handle dispatches one message.
func (s *session) handle(msg wire.Message) error {
	switch m := msg.(type) {
	case *wire.MsgPing:
		return s.write(wire.NewMsgPong(m.Nonce), wire.LatestEncoding)
	case *wire.MsgGetHeaders:
		return s.getHeaders(m)
	case *wire.MsgFilterLoad:
		return s.filterLoad(m)
	case *wire.MsgFilterAdd:
		if s.filter != nil && s.cfg.Scenario != IgnoreFilter {
			if err := bip37.CheckFilterAdd(m.Data); err != nil {
				return fmt.Errorf("%w: filteradd: %w", errClosedByUs, err)
			}
			s.filter.Add(m.Data)
		}
		return nil
	case *wire.MsgFilterClear:
		s.filter = nil
		return nil
	case *wire.MsgGetData:
		return s.getData(m)
	case *wire.MsgMemPool:
		return s.mempool()
	case *wire.MsgGetCFHeaders:
		return s.getCFHeaders(m)
	case *wire.MsgGetCFCheckpt:
		return s.getCFCheckpt(m)
	case *wire.MsgGetCFilters:
		return s.getCFilters(m)
	default:
		return nil
	}
}

// filterLoad loads the node's filter (NoBloom disconnects, IgnoreFilter
// ignores it).
func (s *session) filterLoad(m *wire.MsgFilterLoad) error {
	s.p.count(func(st *Stats) { st.FilterLoads++ })
	switch s.cfg.Scenario {
	case NoBloom:
		return fmt.Errorf("%w: filterload from a peer told NODE_BLOOM is off (BIP111)", errClosedByUs)
	case IgnoreFilter:
		s.markApplied("filterload ignored")
		return nil
	}
	f, err := bip37.LoadFilter(m)
	if err != nil {
		return fmt.Errorf("%w: filterload: %w", errClosedByUs, err)
	}
	s.filter = f
	return nil
}

// view returns the chain this session advertises.
func (s *session) view() (*view, error) {
	headers, err := s.p.chain.refresh()
	if err != nil {
		return nil, err
	}
	switch s.cfg.Scenario {
	case LowWorkFork, FakeWorkFork:
	default:
		return newView(headers), nil
	}
	f := s.cfg.ForkHeight
	if int(f) >= len(headers) {
		return newView(headers), nil
	}
	if s.fork == nil {
		n := len(headers) - int(f) - 2 // ends one block below the tip
		lie := s.cfg.Scenario == FakeWorkFork
		if lie {
			n = len(headers) - int(f) + 1 // longer than the honest chain
		}
		if n <= 0 {
			return newView(headers), nil
		}
		fork, err := forgeFork(headers, f, n, lie)
		if err != nil {
			return nil, err
		}
		s.fork = fork
	}
	return newView(append(headers[:f+1:f+1], s.fork...)), nil
}

// getHeaders answers getheaders from the view, applying the header
// scenarios.
func (s *session) getHeaders(m *wire.MsgGetHeaders) error {
	if (s.cfg.Scenario == Oversized || s.cfg.Scenario == Garbage) && !s.rawSent && s.canApply() {
		s.rawSent = true
		return s.sendRaw()
	}
	v, err := s.view()
	if err != nil {
		return err
	}
	start, hdrs := v.answer(m.BlockLocatorHashes, m.HashStop, wire.MaxBlockHeadersPerMsg)
	if (s.cfg.Scenario == LowWorkFork || s.cfg.Scenario == FakeWorkFork) && s.fork != nil && s.canApply() {
		if end := start + int32(len(hdrs)); len(hdrs) > 0 && end > s.cfg.ForkHeight {
			s.markApplied(fmt.Sprintf("fork headers %d..%d", start+1, start+int32(len(hdrs))))
		}
	}
	switch s.cfg.Scenario {
	case HeaderBadPoW, HeaderBadBits, HeaderTimeTooOld, HeaderTimeTooNew:
		if s.canApply() {
			hdrs = hdrs[:min(len(hdrs), wire.MaxBlockHeadersPerMsg-1)]
			base := v.headers[:int(start)+len(hdrs)+1]
			h, err := forgeHeader(s.cfg.Scenario, base, s.cfg.Now())
			if err != nil {
				s.markSkipped(err)
			} else {
				hdrs = append(hdrs, h)
				s.markApplied(fmt.Sprintf("header %v at height %d", h.BlockHash(), len(base)))
			}
		}
	case HeadersNotConnecting:
		if s.canApply() {
			h, err := forgeHeader(s.cfg.Scenario, v.headers, s.cfg.Now())
			if err != nil {
				s.markSkipped(err)
			} else {
				hdrs = []wire.BlockHeader{h}
				s.markApplied(fmt.Sprintf("orphan header %v", h.BlockHash()))
			}
		}
	}
	if err := s.writeHeaders(hdrs); err != nil {
		return err
	}
	if s.cfg.Scenario == SideBranchFlood && !s.sideSent && s.canApply() {
		s.sideSent = true
		return s.floodSideBranches(v)
	}
	return nil
}

// writeHeaders sends one headers message.
func (s *session) writeHeaders(hdrs []wire.BlockHeader) error {
	msg := wire.NewMsgHeaders()
	for i := range hdrs {
		if err := msg.AddBlockHeader(&hdrs[i]); err != nil {
			return fmt.Errorf("headers: %w", err)
		}
	}
	return s.write(msg, wire.LatestEncoding)
}

// floodSideBranches sends the SideBranchFlood branches: one headers
// message per fork height 1, 2, ..., each ending two blocks below the tip.
func (s *session) floodSideBranches(v *view) error {
	sent := 0
	for f := int32(1); sent < s.cfg.FloodMessages; f++ {
		n := min(int(v.tipHeight()-f)-2, wire.MaxBlockHeadersPerMsg)
		if n <= 0 {
			break
		}
		fork, err := forgeFork(v.headers, f, n, false)
		if err != nil {
			s.markSkipped(err)
			return nil
		}
		if err := s.writeHeaders(fork); err != nil {
			return err
		}
		sent++
		s.markApplied(fmt.Sprintf("side branch of %d headers from height %d", n, f))
	}
	return nil
}

// sendRaw writes the Oversized header or the Garbage bytes.
func (s *session) sendRaw() error {
	switch s.cfg.Scenario {
	case Oversized:
		hdr := make([]byte, 24)
		binary.LittleEndian.PutUint32(hdr[0:4], uint32(s.cfg.Params.Net))
		copy(hdr[4:16], wire.CmdHeaders)
		binary.LittleEndian.PutUint32(hdr[16:20], wire.MaxMessagePayload+1)
		if err := s.writeRaw(hdr, "oversized-header"); err != nil {
			return err
		}
		s.markApplied(fmt.Sprintf("message header announcing %d bytes", wire.MaxMessagePayload+1))
	case Garbage:
		// A well-framed headers message (right magic, command, length and
		// checksum) whose payload is random bytes behind a count of 2^32-1.
		payload := append([]byte{0xfe, 0xff, 0xff, 0xff, 0xff}, s.p.randBytes(1019)...)
		hdr := make([]byte, 24)
		binary.LittleEndian.PutUint32(hdr[0:4], uint32(s.cfg.Params.Net))
		copy(hdr[4:16], wire.CmdHeaders)
		binary.LittleEndian.PutUint32(hdr[16:20], uint32(len(payload)))
		copy(hdr[20:24], chainhash.DoubleHashB(payload)[:4])
		if err := s.writeRaw(append(hdr, payload...), "garbage"); err != nil {
			return err
		}
		s.markApplied("headers message of 1024 random bytes")
	}
	return nil
}

// getData serves a getdata message.
func (s *session) getData(m *wire.MsgGetData) error {
	var filtered []*wire.InvVect
	for _, iv := range m.InvList {
		if iv.Type == wire.InvTypeFilteredBlock || iv.Type == wire.InvTypeFilteredWitnessBlock {
			filtered = append(filtered, iv)
		}
	}
	cut := -1 // index in filtered at which to stall or disconnect
	if (s.cfg.Scenario == StallMidBatch || s.cfg.Scenario == StallKeepAlive || s.cfg.Scenario == DisconnectMidBatch) &&
		len(filtered) > 0 && !s.batchDone && s.canApply() {
		s.batchDone = true
		cut = len(filtered) / 2
	}
	if s.cfg.Scenario == UnrequestedBlock && len(filtered) > 0 && s.canApply() && s.filter != nil {
		if err := s.sendUnrequested(m.InvList); err != nil {
			return err
		}
	}
	notFound := wire.NewMsgNotFound()
	nFiltered := 0
	for _, iv := range m.InvList {
		switch iv.Type {
		case wire.InvTypeFilteredBlock, wire.InvTypeFilteredWitnessBlock:
			if nFiltered == cut {
				return s.cutBatch(cut, len(filtered))
			}
			nFiltered++
			s.requested[iv.Hash] = true
			served, err := s.serveFiltered(iv.Hash)
			if err != nil {
				return err
			}
			if !served {
				_ = notFound.AddInvVect(iv)
			}
		case wire.InvTypeBlock, wire.InvTypeWitnessBlock:
			if s.cfg.Scenario == CFWithholdBlock && s.canApply() {
				s.markApplied("notfound for block " + iv.Hash.String())
				_ = notFound.AddInvVect(iv)
				continue
			}
			b, err := s.p.chain.block(iv.Hash)
			if err != nil {
				_ = notFound.AddInvVect(iv)
				continue
			}
			enc := wire.BaseEncoding
			if iv.Type == wire.InvTypeWitnessBlock {
				enc = wire.WitnessEncoding
			}
			if err := s.write(b, enc); err != nil {
				return err
			}
		case wire.InvTypeTx, wire.InvTypeWitnessTx:
			tx := s.lookupTx(iv.Hash)
			if tx == nil {
				_ = notFound.AddInvVect(iv)
				continue
			}
			enc := wire.BaseEncoding
			if iv.Type == wire.InvTypeWitnessTx {
				enc = wire.WitnessEncoding
			}
			if err := s.write(tx, enc); err != nil {
				return err
			}
		default:
			_ = notFound.AddInvVect(iv)
		}
	}
	if len(notFound.InvList) > 0 {
		return s.write(notFound, wire.LatestEncoding)
	}
	return nil
}

// cutBatch stalls or disconnects after served of total filtered blocks.
func (s *session) cutBatch(served, total int) error {
	what := fmt.Sprintf("after %d of %d filtered blocks", served, total)
	s.markApplied(what)
	if s.cfg.Scenario == DisconnectMidBatch {
		return fmt.Errorf("%w: disconnect %s", errClosedByUs, what)
	}
	s.stalled = true
	if s.cfg.Scenario == StallKeepAlive {
		go s.keepAlive()
	}
	return nil
}

// keepAlive sends an empty headers message every KeepAliveInterval until
// the session ends. The message loop writes nothing once stalled, so it is
// the only writer.
func (s *session) keepAlive() {
	t := time.NewTicker(s.cfg.KeepAliveInterval)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
			if err := s.writeHeaders(nil); err != nil {
				return
			}
		}
	}
}

// sendUnrequested sends a valid merkleblock for the lowest block of the
// view the node has not asked for and is not asking for in batch.
func (s *session) sendUnrequested(batch []*wire.InvVect) error {
	v, err := s.view()
	if err != nil {
		return err
	}
	asked := make(map[chainhash.Hash]bool, len(batch))
	for _, iv := range batch {
		asked[iv.Hash] = true
	}
	for h := 1; h < len(v.headers); h++ {
		hash := v.headers[h].BlockHash()
		if asked[hash] || s.requested[hash] {
			continue
		}
		b, err := s.p.chain.block(hash)
		if err != nil {
			return err
		}
		mb, _ := bip37.FilterBlock(s.filter.Clone(), b)
		if err := s.write(mb, wire.LatestEncoding); err != nil {
			return err
		}
		s.requested[hash] = true // send each at most once
		s.markApplied(fmt.Sprintf("unrequested merkleblock %v at height %d", hash, h))
		return nil
	}
	s.markSkipped(fmt.Errorf("every block was requested: %w", ErrCannotForge))
	return nil
}

// serveFiltered sends the merkleblock for hash and its matched txs, with
// the scenario's change. It reports false when the block is unknown.
func (s *session) serveFiltered(hash chainhash.Hash) (bool, error) {
	if s.filter == nil && s.cfg.Scenario != IgnoreFilter {
		// btcd and Core send nothing for a filtered block without a
		// filter loaded.
		return true, nil
	}
	block, err := s.p.chain.block(hash)
	if err != nil {
		return false, nil
	}
	mb, txs := s.merkleBlock(block)
	if err := s.write(mb, wire.LatestEncoding); err != nil {
		return true, err
	}
	for _, tx := range txs {
		s.remember(tx)
		enc := wire.BaseEncoding
		if s.cfg.Scenario == RewriteWitness && s.canApply() {
			tx, enc = rewriteWitness(tx), wire.WitnessEncoding
			s.markApplied(fmt.Sprintf("witness of tx %v rewritten", tx.TxHash()))
		}
		if err := s.write(tx, enc); err != nil {
			return true, err
		}
	}
	if s.cfg.Scenario == TxNotInBlock && s.canApply() {
		parent, err := s.p.chain.block(block.Header.PrevBlock)
		if err != nil || len(parent.Transactions) == 0 {
			s.markSkipped(fmt.Errorf("no parent block for %v: %w", hash, ErrCannotForge))
			return true, nil
		}
		tx := parent.Transactions[0]
		if err := s.write(tx, wire.BaseEncoding); err != nil {
			return true, err
		}
		s.markApplied(fmt.Sprintf("tx %v after merkleblock %v", tx.TxHash(), hash))
	}
	return true, nil
}

// merkleBlock builds the merkleblock and the transactions to send for
// block under the scenario.
func (s *session) merkleBlock(block *wire.MsgBlock) (*wire.MsgMerkleBlock, []*wire.MsgTx) {
	if s.cfg.Scenario == IgnoreFilter {
		return bip37.BuildMerkleBlock(block, func(int, *wire.MsgTx) bool { return true }), block.Transactions
	}
	mb, idx := bip37.FilterBlock(s.filter, block)
	matched := make([]bool, len(block.Transactions))
	for _, i := range idx {
		matched[i] = true
	}
	pick := func() []*wire.MsgTx {
		var out []*wire.MsgTx
		for i, tx := range block.Transactions {
			if matched[i] {
				out = append(out, tx)
			}
		}
		return out
	}
	hash := block.BlockHash()
	if !s.canApply() {
		return mb, pick()
	}
	var err error
	switch s.cfg.Scenario {
	case BadMerkleRoot:
		err = flipFirstHash(mb)
	case DuplicateHash:
		var dup *wire.MsgMerkleBlock
		if dup, err = duplicateTree(block, matched); err == nil {
			mb = dup
		}
	case UnusedHashes:
		err = appendUnusedHash(mb)
	case UnusedBits:
		appendUnusedBits(mb)
	case TxCountZero:
		mb.Transactions = 0
	case TxCountTooBig:
		mb.Transactions = bip37.MaxMerkleTxs + 1
	case OmitMatchedTx:
		if len(idx) == 0 {
			return mb, nil
		}
		return s.omit(block, matched, idx[len(idx)-1]), pick()
	case OmitRandomMatch:
		if len(idx) == 0 {
			return mb, pick()
		}
		victim, lie := s.p.draw(func(r *rand.Rand) (int, bool) {
			return idx[r.Intn(len(idx))], r.Float64() < s.cfg.OmitRate
		})
		if !lie {
			return mb, pick()
		}
		return s.omit(block, matched, victim), pick()
	case InflateFP:
		added := 0
		for i := len(block.Transactions) - 1; i >= 0 && added < s.cfg.ExtraTxs; i-- {
			if !matched[i] {
				matched[i] = true
				added++
			}
		}
		if added == 0 {
			return mb, pick()
		}
		mb = bip37.BuildMerkleBlock(block, func(i int, _ *wire.MsgTx) bool { return matched[i] })
		s.markApplied(fmt.Sprintf("%d unmatched txs marked matched in block %v", added, hash))
		return mb, pick()
	default:
		return mb, pick()
	}
	if err != nil {
		s.markSkipped(err)
		return mb, pick()
	}
	s.markApplied(fmt.Sprintf("merkleblock %v", hash))
	return mb, pick()
}

// omit clears the match of transaction i of block, records it and returns
// the merkleblock of the remaining matches (a valid proof).
func (s *session) omit(block *wire.MsgBlock, matched []bool, i int) *wire.MsgMerkleBlock {
	matched[i] = false
	id := block.Transactions[i].TxHash()
	s.p.count(func(st *Stats) { st.Omitted = append(st.Omitted, id) })
	s.markApplied(fmt.Sprintf("omitted tx %v of block %v", id, block.BlockHash()))
	return bip37.BuildMerkleBlock(block, func(j int, _ *wire.MsgTx) bool { return matched[j] })
}

// remember keeps tx to answer a later getdata MSG_TX.
func (s *session) remember(tx *wire.MsgTx) {
	if len(s.recentTxs) >= maxRecentTxs {
		for k := range s.recentTxs {
			delete(s.recentTxs, k)
			break
		}
	}
	s.recentTxs[tx.TxHash()] = tx
}

// lookupTx finds a tx served in a block or in the upstream's mempool.
func (s *session) lookupTx(hash chainhash.Hash) *wire.MsgTx {
	if tx, ok := s.recentTxs[hash]; ok {
		return tx
	}
	tx, err := s.p.cfg.Upstream.GetRawTransaction(&hash)
	if err != nil {
		return nil
	}
	return tx.MsgTx()
}

// mempool answers BIP35 mempool with an inv of the upstream mempool's
// transactions that match the filter.
func (s *session) mempool() error {
	hashes, err := s.p.cfg.Upstream.GetRawMempool()
	if err != nil {
		return fmt.Errorf("upstream mempool: %w", err)
	}
	inv := wire.NewMsgInv()
	for _, h := range hashes {
		if len(inv.InvList) >= wire.MaxInvPerMsg {
			break
		}
		tx, err := s.p.cfg.Upstream.GetRawTransaction(h)
		if err != nil {
			continue
		}
		if s.cfg.Scenario != IgnoreFilter && (s.filter == nil || !s.filter.MatchTxAndUpdate(tx.MsgTx())) {
			continue
		}
		_ = inv.AddInvVect(wire.NewInvVect(wire.InvTypeTx, h))
	}
	if len(inv.InvList) == 0 {
		return nil
	}
	return s.write(inv, wire.LatestEncoding)
}
