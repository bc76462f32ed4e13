package hostile

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"sync"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// Flooder is a peer that floods one message type: a wire-protocol server
// on 127.0.0.1 that completes the v1 handshake (NODE_BLOOM, protocol
// 70016, a chain of the genesis block alone), waits for the node's
// filterload and then writes its message as fast as the node takes it,
// until the node disconnects or the flooder is closed. With NoRead it
// stops reading its socket once the filterload came, as a peer that
// makes the node queue replies it never takes. It needs no upstream
// node: what it sends is made up.
type Flooder struct {
	cfg FloodConfig
	ln  net.Listener
	wg  sync.WaitGroup

	mu    sync.Mutex
	stats FloodStats
	quit  chan struct{}
	once  sync.Once
}

// FloodConfig configures a Flooder.
type FloodConfig struct {
	Params *chaincfg.Params
	// Cmd is the command flooded: one of FloodCommands.
	Cmd string
	// NoRead stops reading after the filterload (the pings it floods
	// then make the node queue pongs it never takes).
	NoRead bool
	// Every paces the flood: at most one message per Every (0: as fast
	// as the node reads).
	Every time.Duration
}

// FloodStats is what a Flooder did.
type FloodStats struct {
	Connections int
	Sent        int   // messages flooded
	SentBytes   int64 // their wire bytes
	// FloodStart is when the first connection's flood began; Ended when
	// that connection ended (zero while it lasts).
	FloodStart, Ended time.Time
}

// FloodCommands are the commands a Flooder can flood: every command btcd's
// wire package knows, and "sendcmpct", "wtxidrelay" and an unknown one,
// which it does not.
func FloodCommands() []string {
	return []string{
		wire.CmdVersion, wire.CmdVerAck, wire.CmdGetAddr, wire.CmdAddr, wire.CmdAddrV2,
		wire.CmdGetBlocks, wire.CmdInv, wire.CmdGetData, wire.CmdNotFound, wire.CmdBlock,
		wire.CmdTx, wire.CmdGetHeaders, wire.CmdHeaders, wire.CmdPing, wire.CmdPong,
		wire.CmdMemPool, wire.CmdFilterAdd, wire.CmdFilterClear, wire.CmdFilterLoad,
		wire.CmdMerkleBlock, wire.CmdReject, wire.CmdSendHeaders, wire.CmdFeeFilter,
		wire.CmdGetCFilters, wire.CmdGetCFHeaders, wire.CmdGetCFCheckpt, wire.CmdCFilter,
		wire.CmdCFHeaders, wire.CmdCFCheckpt, wire.CmdSendAddrV2, wire.CmdWTxIdRelay,
		"sendcmpct", "floodcmd",
	}
}

// StartFlooder listens on 127.0.0.1 and floods every connection.
func StartFlooder(ctx context.Context, cfg FloodConfig) (*Flooder, error) {
	if cfg.Params == nil {
		return nil, ErrNoParams
	}
	if _, err := floodMessage(cfg.Cmd, rand.New(rand.NewSource(1))); err != nil {
		return nil, err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("flooder: listen: %w", err)
	}
	f := &Flooder{cfg: cfg, ln: ln, quit: make(chan struct{})}
	f.wg.Add(1)
	go f.accept()
	go func() {
		select {
		case <-ctx.Done():
			_ = f.Close()
		case <-f.quit:
		}
	}()
	return f, nil
}

// Addr is the address to connect to.
func (f *Flooder) Addr() string { return f.ln.Addr().String() }

// Stats returns what the flooder did so far.
func (f *Flooder) Stats() FloodStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stats
}

// Close stops the flooder and waits for its goroutines.
func (f *Flooder) Close() error {
	f.once.Do(func() {
		close(f.quit)
		_ = f.ln.Close()
	})
	f.wg.Wait()
	return nil
}

// accept serves connections one at a time until Close.
func (f *Flooder) accept() {
	defer f.wg.Done()
	for {
		conn, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		f.stats.Connections++
		first := f.stats.Connections == 1
		f.mu.Unlock()
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			f.serve(conn, first)
		}()
	}
}

// floodConn is one flooded connection.
type floodConn struct {
	f      *Flooder
	conn   net.Conn
	wmu    sync.Mutex // writes, and loaded
	pver   uint32
	loaded bool // the node's filterload came
}

// serve runs one connection: handshake, filterload, flood.
func (f *Flooder) serve(conn net.Conn, first bool) {
	defer conn.Close()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-f.quit:
			_ = conn.Close()
		case <-stop:
		}
	}()
	c := &floodConn{f: f, conn: conn, pver: wire.ProtocolVersion}
	if err := c.handshake(); err != nil {
		return
	}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		c.readLoop(f.cfg.NoRead)
	}()
	if !c.waitFilterLoad(readDone) {
		return
	}
	if first {
		f.mu.Lock()
		f.stats.FloodStart = time.Now()
		f.mu.Unlock()
	}
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	var tick <-chan time.Time
	if f.cfg.Every > 0 {
		t := time.NewTicker(f.cfg.Every)
		defer t.Stop()
		tick = t.C
	}
	for {
		if tick != nil {
			select {
			case <-tick:
			case <-f.quit:
				return
			}
		}
		msg, _ := floodMessage(f.cfg.Cmd, rng)
		n, err := c.write(msg)
		if err != nil {
			break
		}
		f.mu.Lock()
		f.stats.Sent++
		f.stats.SentBytes += int64(n)
		f.mu.Unlock()
	}
	if first {
		f.mu.Lock()
		f.stats.Ended = time.Now()
		f.mu.Unlock()
	}
}

// waitFilterLoad waits for the node's filterload (read by readLoop),
// reporting whether it came.
func (c *floodConn) waitFilterLoad(readDone <-chan struct{}) bool {
	deadline := time.NewTimer(time.Minute)
	defer deadline.Stop()
	for {
		c.wmu.Lock()
		got := c.loaded
		c.wmu.Unlock()
		if got {
			return true
		}
		select {
		case <-readDone:
			c.wmu.Lock()
			got = c.loaded
			c.wmu.Unlock()
			return got
		case <-deadline.C:
			return false
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// handshake exchanges version and verack.
func (c *floodConn) handshake() error {
	_ = c.conn.SetDeadline(time.Now().Add(30 * time.Second))
	defer func() { _ = c.conn.SetDeadline(time.Time{}) }()
	msg, err := c.read()
	if err != nil {
		return err
	}
	if _, ok := msg.(*wire.MsgVersion); !ok {
		return fmt.Errorf("flooder: first message %s, not version", msg.Command())
	}
	me := wire.NewNetAddressIPPort(net.IPv4(127, 0, 0, 1), 0, wire.SFNodeNetwork|wire.SFNodeBloom|wire.SFNodeWitness)
	you := wire.NewNetAddressIPPort(net.IPv4(127, 0, 0, 1), 0, 0)
	ver := wire.NewMsgVersion(me, you, rand.Uint64(), 0)
	ver.Services = me.Services
	ver.ProtocolVersion = int32(wire.ProtocolVersion)
	if err := ver.AddUserAgent(userAgentName, "0.1", "flood"); err != nil {
		return err
	}
	if _, err := c.write(ver); err != nil {
		return err
	}
	if _, err := c.write(wire.NewMsgVerAck()); err != nil {
		return err
	}
	return nil
}

// read reads one message, skipping unknown commands.
func (c *floodConn) read() (wire.Message, error) {
	for {
		_, msg, _, err := wire.ReadMessageWithEncodingN(c.conn, c.pver, c.f.cfg.Params.Net, wire.LatestEncoding)
		if errors.Is(err, wire.ErrUnknownMessage) {
			continue
		}
		return msg, err
	}
}

// readLoop reads until the filterload and then, unless noRead, on:
// answering pings, ignoring the rest.
func (c *floodConn) readLoop(noRead bool) {
	for {
		msg, err := c.read()
		if err != nil {
			return
		}
		switch m := msg.(type) {
		case *wire.MsgFilterLoad:
			c.wmu.Lock()
			c.loaded = true
			c.wmu.Unlock()
			if noRead {
				return
			}
		case *wire.MsgPing:
			if _, err := c.write(wire.NewMsgPong(m.Nonce)); err != nil {
				return
			}
		}
	}
}

// write writes msg, returning its wire bytes.
func (c *floodConn) write(msg wire.Message) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	return wire.WriteMessageWithEncodingN(c.conn, msg, c.pver, c.f.cfg.Params.Net, wire.LatestEncoding)
}

// rawMessage is a message of any command with any payload: the commands
// btcd's wire does not know.
type rawMessage struct {
	cmd     string
	payload []byte
}

// BtcDecode implements wire.Message: the payload as it is.
func (m *rawMessage) BtcDecode(r io.Reader, _ uint32, _ wire.MessageEncoding) error {
	var err error
	m.payload, err = io.ReadAll(r)
	return err
}

// BtcEncode implements wire.Message: the payload as it is.
func (m *rawMessage) BtcEncode(w io.Writer, _ uint32, _ wire.MessageEncoding) error {
	_, err := w.Write(m.payload)
	return err
}

// Command implements wire.Message.
func (m *rawMessage) Command() string { return m.cmd }

// MaxPayloadLength implements wire.Message: wire's largest.
func (m *rawMessage) MaxPayloadLength(uint32) uint32 { return wire.MaxMessagePayload }

// floodRejectReason is the size of a flooded reject's reason: 1 MiB, which
// an unbounded log would write as 4 MiB of escaped text per message.
const floodRejectReason = 1 << 20

// floodMessage makes one message of cmd with random content: valid on
// the wire, made up in substance (unknown hashes, unrequested blocks).
func floodMessage(cmd string, rng *rand.Rand) (wire.Message, error) {
	hash := func() *chainhash.Hash {
		var h chainhash.Hash
		rng.Read(h[:])
		return &h
	}
	tx := func() *wire.MsgTx {
		tx := wire.NewMsgTx(2)
		tx.AddTxIn(wire.NewTxIn(wire.NewOutPoint(hash(), 0), []byte{0x51}, nil))
		tx.AddTxOut(wire.NewTxOut(1000, []byte{0x51}))
		return tx
	}
	header := func() *wire.BlockHeader {
		return wire.NewBlockHeader(4, hash(), hash(), 0x207fffff, rng.Uint32())
	}
	switch cmd {
	case wire.CmdVersion:
		me := wire.NewNetAddressIPPort(net.IPv4(127, 0, 0, 1), 0, wire.SFNodeBloom)
		return wire.NewMsgVersion(me, me, rng.Uint64(), 0), nil
	case wire.CmdVerAck:
		return wire.NewMsgVerAck(), nil
	case wire.CmdGetAddr:
		return wire.NewMsgGetAddr(), nil
	case wire.CmdAddr:
		m := wire.NewMsgAddr()
		for range wire.MaxAddrPerMsg {
			ip := make(net.IP, 4)
			binary.BigEndian.PutUint32(ip, rng.Uint32())
			_ = m.AddAddress(wire.NewNetAddressIPPort(ip, 8333, wire.SFNodeNetwork))
		}
		return m, nil
	case wire.CmdAddrV2:
		m := wire.NewMsgAddrV2()
		for range wire.MaxV2AddrPerMsg {
			ip := make(net.IP, 4)
			binary.BigEndian.PutUint32(ip, rng.Uint32())
			m.AddrList = append(m.AddrList, wire.NetAddressV2FromBytes(time.Now(), wire.SFNodeNetwork, ip, 8333))
		}
		return m, nil
	case wire.CmdGetBlocks:
		m := wire.NewMsgGetBlocks(hash())
		_ = m.AddBlockLocatorHash(hash())
		return m, nil
	case wire.CmdInv:
		m := wire.NewMsgInv()
		_ = m.AddInvVect(wire.NewInvVect(wire.InvTypeBlock, hash()))
		return m, nil
	case wire.CmdGetData:
		m := wire.NewMsgGetData()
		_ = m.AddInvVect(wire.NewInvVect(wire.InvTypeTx, hash()))
		return m, nil
	case wire.CmdNotFound:
		m := wire.NewMsgNotFound()
		_ = m.AddInvVect(wire.NewInvVect(wire.InvTypeTx, hash()))
		return m, nil
	case wire.CmdBlock:
		b := wire.NewMsgBlock(header())
		_ = b.AddTransaction(tx())
		return b, nil
	case wire.CmdTx:
		return tx(), nil
	case wire.CmdGetHeaders:
		m := wire.NewMsgGetHeaders()
		_ = m.AddBlockLocatorHash(hash())
		return m, nil
	case wire.CmdHeaders:
		return wire.NewMsgHeaders(), nil // empty, as the keep-alive stall sent
	case wire.CmdPing:
		return wire.NewMsgPing(rng.Uint64()), nil
	case wire.CmdPong:
		return wire.NewMsgPong(rng.Uint64()), nil
	case wire.CmdMemPool:
		return wire.NewMsgMemPool(), nil
	case wire.CmdFilterAdd:
		return wire.NewMsgFilterAdd(hash()[:]), nil
	case wire.CmdFilterClear:
		return wire.NewMsgFilterClear(), nil
	case wire.CmdFilterLoad:
		return wire.NewMsgFilterLoad(make([]byte, 1000), 10, 0, wire.BloomUpdateNone), nil
	case wire.CmdMerkleBlock:
		m := wire.NewMsgMerkleBlock(header())
		m.Transactions = 1
		_ = m.AddTxHash(hash())
		m.Flags = []byte{1}
		return m, nil
	case wire.CmdReject:
		return wire.NewMsgReject(wire.CmdTx, wire.RejectInvalid, string(bytes.Repeat([]byte{0x1b}, floodRejectReason))), nil
	case wire.CmdSendHeaders:
		return wire.NewMsgSendHeaders(), nil
	case wire.CmdFeeFilter:
		return wire.NewMsgFeeFilter(1000), nil
	case wire.CmdGetCFilters:
		return wire.NewMsgGetCFilters(wire.GCSFilterRegular, 0, hash()), nil
	case wire.CmdGetCFHeaders:
		return wire.NewMsgGetCFHeaders(wire.GCSFilterRegular, 0, hash()), nil
	case wire.CmdGetCFCheckpt:
		return wire.NewMsgGetCFCheckpt(wire.GCSFilterRegular, hash()), nil
	case wire.CmdCFilter:
		return wire.NewMsgCFilter(wire.GCSFilterRegular, hash(), make([]byte, 100)), nil
	case wire.CmdCFHeaders:
		m := wire.NewMsgCFHeaders()
		m.StopHash, m.PrevFilterHeader = *hash(), *hash()
		_ = m.AddCFHash(hash())
		return m, nil
	case wire.CmdCFCheckpt:
		m := wire.NewMsgCFCheckpt(wire.GCSFilterRegular, hash(), 1)
		_ = m.AddCFHeader(hash())
		return m, nil
	case wire.CmdSendAddrV2:
		return wire.NewMsgSendAddrV2(), nil
	case wire.CmdWTxIdRelay, "sendcmpct", "floodcmd":
		return &rawMessage{cmd: cmd, payload: make([]byte, 9)}, nil
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownFlood, cmd)
}
