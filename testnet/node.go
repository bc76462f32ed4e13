package testnet

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/btcsuite/btcd/btcjson"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/rpcclient"

	"github.com/bloomwatch/bloomwatch/testnet/internal/proc"
)

// Timeouts of the node lifecycle, bcoin's as well as btcd's.
const (
	// StartTimeout bounds how long a start waits for the node's RPC
	// server when the context has no earlier deadline.
	StartTimeout = proc.StartTimeout
	// StopTimeout is how long Stop waits by default for the node to exit
	// after SIGINT before it sends SIGKILL.
	StopTimeout = proc.StopTimeout
	// WaitTimeout bounds the connection and sync waits of the methods
	// that take no context.
	WaitTimeout = proc.WaitTimeout
)

// Network names accepted by Config.Network and Options.Network.
const (
	Regtest = "regtest"
	Simnet  = "simnet"
)

// Config configures one btcd node.
type Config struct {
	// Network is "regtest" (the default) or "simnet". btcd deletes a
	// regtest database at every start; use simnet for a chain that must
	// survive a restart.
	Network string
	// DataDir is btcd's data directory; "" means a fresh temporary
	// directory that Stop removes.
	DataDir string
	// Args are extra btcd flags, appended after the harness's own (for a
	// flag given twice btcd keeps the last).
	Args []string
	// Log receives btcd's output: an *os.File gets btcd's log live (its
	// stderr stays in LogPath); any other writer gets stdout and stderr
	// when the node stops (until then they are in LogPath). nil discards
	// it.
	Log io.Writer
	// MiningAddr receives the coinbases of generated blocks; nil means the
	// harness funding key's P2WPKH address.
	MiningAddr btcutil.Address
	// StopTimeout is how long Stop waits for btcd to exit after SIGINT
	// before it sends SIGKILL (0 = StopTimeout).
	StopTimeout time.Duration
	// P2PPort and RPCPort fix the loopback ports (0 = a free port), e.g.
	// to restart a node where its peers expect it.
	P2PPort int
	RPCPort int
	// V2Transport starts btcd with --v2transport: it accepts BIP324
	// encrypted connections (v1 ones too) and advertises NODE_P2P_V2.
	V2Transport bool
}

// Node is a running btcd process on 127.0.0.1.
type Node struct {
	// ch is the process: its scratch directory holds the logs, the
	// output and the default datadir.
	ch      *proc.Child
	params  *chaincfg.Params
	p2p     string
	rpcAddr string
	rpc     *rpcclient.Client
	dataDir string
	// cfg is the effective configuration (ports and mining address set).
	cfg Config
	// logFile is btcd's own log file, for Tail when liveLog is set.
	logFile string
	// rpcUser and rpcPass are the RPC credentials, random per start.
	rpcUser, rpcPass string
}

// paramsFor maps a network name to its parameters and btcd flag.
func paramsFor(network string) (*chaincfg.Params, string, error) {
	switch network {
	case "", Regtest:
		return &chaincfg.RegressionNetParams, "--regtest", nil
	case Simnet:
		return &chaincfg.SimNetParams, "--simnet", nil
	default:
		return nil, "", fmt.Errorf("%w: %q", ErrUnknownNetwork, network)
	}
}

// ParamsFor returns the chain parameters of a network name accepted by
// Config.Network ("" is regtest).
func ParamsFor(network string) (*chaincfg.Params, error) {
	p, _, err := paramsFor(network)
	return p, err
}

// StartNode starts btcd on free 127.0.0.1 ports and waits until its RPC
// server answers. ctx bounds the start only, not the node's life. On
// failure nothing is left running and the error quotes btcd's last output.
func StartNode(ctx context.Context, cfg Config) (*Node, error) {
	params, netFlag, err := paramsFor(cfg.Network)
	if err != nil {
		return nil, err
	}
	miningAddr := cfg.MiningAddr
	if miningAddr == nil {
		if miningAddr, err = funderAddress(params); err != nil {
			return nil, err
		}
	}
	if !miningAddr.IsForNet(params) {
		return nil, fmt.Errorf("testnet: mining address %s is not for %s: %w", miningAddr, params.Name, ErrBadSpec)
	}
	bin, err := BtcdBinary(ctx)
	if err != nil {
		return nil, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, StartTimeout)
		defer cancel()
	}
	var n *Node
	err = proc.StartWithRetries(func() (retry bool, err error) {
		n, retry, err = startOnce(ctx, bin, netFlag, params, miningAddr, cfg)
		return retry, err
	})
	if err != nil {
		return nil, err
	}
	return n, nil
}

// startOnce launches btcd once on a fresh pair of ports. retry reports a
// bind failure worth another attempt.
func startOnce(ctx context.Context, bin, netFlag string, params *chaincfg.Params,
	miningAddr btcutil.Address, cfg Config) (n *Node, retry bool, err error) {

	scratch, err := os.MkdirTemp("", "bloomwatch-btcd-")
	if err != nil {
		return nil, false, fmt.Errorf("testnet: temp dir: %w", err)
	}
	n = &Node{params: params, dataDir: cfg.DataDir,
		ch: &proc.Child{Name: "btcd", Killed: ErrKilled, Exited: ErrNodeExited, Scratch: scratch, Log: cfg.Log, StopTimeout: cfg.StopTimeout}}
	n.ch.CloseClients = func() {
		if n.rpc != nil {
			n.rpc.Shutdown()
			n.rpc.WaitForShutdown()
		}
	}
	if n.dataDir == "" {
		n.dataDir = filepath.Join(scratch, "data")
	}
	defer func() {
		if err != nil {
			_ = n.ch.Stop()
			n = nil
		}
	}()
	ports, err := proc.Ports(cfg.P2PPort, cfg.RPCPort)
	if err != nil {
		return n, false, err
	}
	n.p2p = net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
	n.rpcAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1]))
	n.cfg = cfg
	n.cfg.P2PPort, n.cfg.RPCPort, n.cfg.MiningAddr = ports[0], ports[1], miningAddr
	user, pass := proc.RandomHex(8), proc.RandomHex(16)
	n.rpcUser, n.rpcPass = user, pass
	args := []string{
		netFlag,
		"--datadir=" + n.dataDir,
		"--logdir=" + filepath.Join(scratch, "logs"),
		"--listen=" + n.p2p,
		"--rpclisten=" + n.rpcAddr,
		"--rpcuser=" + user,
		"--rpcpass=" + pass,
		"--notls",
		"--nodnsseed",
		"--norelaypriority",
		"--txindex",
		"--trickleinterval=100ms",
		"--miningaddr=" + miningAddr.EncodeAddress(),
		"--debuglevel=info",
	}
	if cfg.V2Transport {
		args = append(args, "--v2transport")
	}
	args = append(args, cfg.Args...)
	if err := n.ch.Start(exec.Command(bin, args...), "btcd.out"); err != nil {
		return n, false, err
	}
	if n.ch.LiveLog() {
		// btcd's log goes live to the file; stderr (flag errors,
		// panics) stays in our file for Tail, with btcd's own log file.
		n.logFile = filepath.Join(scratch, "logs", params.Name, "btcd.log")
	}
	n.rpc, err = rpcclient.New(&rpcclient.ConnConfig{
		Host:         n.rpcAddr,
		User:         user,
		Pass:         pass,
		HTTPPostMode: true,
		DisableTLS:   true,
	}, nil)
	if err != nil {
		return n, false, fmt.Errorf("testnet: rpc client: %w", err)
	}
	// Probe with a bounded request of our own: rpcclient retries a
	// refused request for ~20 s and has no timeout at all, so a port that
	// accepts but never answers would hang it.
	retry, err = n.ch.WaitReady(ctx, func(ctx context.Context) error {
		return probeRPC(ctx, n.rpcAddr, user, pass)
	}, n.Tail, "address already in use")
	return n, retry, err
}

// Config returns the node's effective configuration: the ports and
// mining address it got, the DataDir as given (so a restart with it gets
// a fresh temporary directory when it was "").
func (n *Node) Config() Config { return n.cfg }

// P2PAddr returns the node's peer-to-peer address, "127.0.0.1:port".
func (n *Node) P2PAddr() string { return n.p2p }

// RPCAddr returns the node's JSON-RPC address (HTTP, no TLS).
func (n *Node) RPCAddr() string { return n.rpcAddr }

// RPCCredentials returns the user and password of the node's JSON-RPC
// server: random for each start, valid while it runs, for a client on
// 127.0.0.1 only (RPCAddr).
func (n *Node) RPCCredentials() (user, pass string) { return n.rpcUser, n.rpcPass }

// RPC returns the node's JSON-RPC client (HTTP POST mode).
func (n *Node) RPC() *rpcclient.Client { return n.rpc }

// Params returns the node's chain parameters.
func (n *Node) Params() *chaincfg.Params { return n.params }

// PID returns the btcd process id.
func (n *Node) PID() int { return n.ch.PID() }

// Exited reports whether the btcd process has exited (and reaps it).
func (n *Node) Exited() bool { return n.ch.HasExited() }

// Stop stops btcd: SIGINT (its graceful shutdown; not the stop RPC,
// since rpcclient has no request timeout and a wedged btcd would hang
// it), then SIGKILL by PID after the stop timeout (the error then wraps
// ErrKilled); it reaps the process, hands btcd's output to Config.Log
// and removes the temporary directory. It is idempotent and returns the
// first call's result.
func (n *Node) Stop() error { return n.ch.Stop() }

// DataDir returns btcd's data directory.
func (n *Node) DataDir() string { return n.dataDir }

// LogPath returns the file that receives btcd's output while it runs
// (only its stderr when Config.Log is an *os.File, which then gets the
// log live).
func (n *Node) LogPath() string { return n.ch.OutPath() }

// Tail returns the last couple of kilobytes of btcd's output.
func (n *Node) Tail() string {
	out := n.ch.Tail()
	if n.logFile != "" {
		if log := proc.TailOf(n.logFile); log != "" {
			out = strings.TrimSpace(log + "\n" + out)
		}
	}
	return out
}

// alive returns ErrStopped or ErrNodeExited when the node cannot serve.
func (n *Node) alive() error { return n.ch.Alive(n.Tail) }

// Generate mines nblocks blocks (with the mempool's transactions) and
// returns their hashes.
func (n *Node) Generate(nblocks uint32) ([]*chainhash.Hash, error) {
	if err := n.alive(); err != nil {
		return nil, err
	}
	hashes, err := n.rpc.Generate(nblocks)
	if err != nil {
		return nil, fmt.Errorf("testnet: generate %d: %w", nblocks, err)
	}
	return hashes, nil
}

// BestBlock returns the hash and height of the node's tip.
func (n *Node) BestBlock() (*chainhash.Hash, int32, error) {
	if err := n.alive(); err != nil {
		return nil, 0, err
	}
	hash, height, err := n.rpc.GetBestBlock()
	if err != nil {
		return nil, 0, fmt.Errorf("testnet: getbestblock: %w", err)
	}
	return hash, height, nil
}

// WaitForHeight polls until the node's tip is at least h.
func (n *Node) WaitForHeight(ctx context.Context, h int32) error {
	return poll(ctx, fmt.Sprintf("height %d", h), func() (bool, error) {
		_, height, err := n.BestBlock()
		return height >= h, err
	})
}

// poll is proc.Poll: cond every 25 ms until true, an error or ctx's end
// (WaitTimeout without a deadline).
func poll(ctx context.Context, what string, cond func() (bool, error)) error {
	return proc.Poll(ctx, what, cond)
}

// peerWith returns n's peer entry whose address is addr, if any.
func (n *Node) peerWith(addr string) (*btcjson.GetPeerInfoResult, error) {
	if err := n.alive(); err != nil {
		return nil, err
	}
	peers, err := n.rpc.GetPeerInfo()
	if err != nil {
		return nil, fmt.Errorf("testnet: getpeerinfo: %w", err)
	}
	for i := range peers {
		if peers[i].Addr == addr {
			return &peers[i], nil
		}
	}
	return nil, nil
}

// ConnectTo connects n to other (a one-time connection, `node connect
// temp`, asked again every few polls until it holds; nothing to do when
// they are already connected), waits until the handshake is done on both
// sides and then until both nodes have the same tip (the one with less
// work syncs from the other). It does not use `addnode add`: btcd retries a
// permanent peer in the background with a growing delay and can end up
// with two connections to one address, which made reorg loops hang.
func (n *Node) ConnectTo(other *Node) error {
	return n.ConnectToCtx(context.Background(), other)
}

// ConnectToCtx is ConnectTo bounded by ctx.
func (n *Node) ConnectToCtx(ctx context.Context, other *Node) error {
	p, err := n.peerWith(other.p2p)
	if err != nil {
		return err
	}
	temp := "temp"
	if p == nil {
		if err := n.rpc.Node(btcjson.NConnect, other.p2p, &temp); err != nil {
			return fmt.Errorf("testnet: connect %s: %w", other.p2p, err)
		}
	}
	var local string
	polls := 0
	err = poll(ctx, "peer handshake with "+other.p2p, func() (bool, error) {
		polls++
		p, err := n.peerWith(other.p2p)
		if err != nil {
			return false, err
		}
		if p == nil && polls%disconnectNudgePolls == 0 {
			_ = n.rpc.Node(btcjson.NConnect, other.p2p, &temp)
		}
		if p == nil || p.Version == 0 || p.AddrLocal == "" {
			return false, nil
		}
		local = p.AddrLocal
		back, err := other.peerWith(local)
		return back != nil && back.Version != 0, err
	})
	if err != nil {
		return fmt.Errorf("%w (peers of %s: %s; peers of %s: %s)", err, n.p2p, n.peerList(), other.p2p, other.peerList())
	}
	return n.WaitSynced(ctx, other)
}

// WaitSynced polls until n and other have the same best block.
func (n *Node) WaitSynced(ctx context.Context, other *Node) error {
	return poll(ctx, "sync with "+other.p2p, func() (bool, error) {
		a, _, err := n.BestBlock()
		if err != nil {
			return false, err
		}
		b, _, err := other.BestBlock()
		if err != nil {
			return false, err
		}
		return a.IsEqual(b), nil
	})
}

// DisconnectFrom ends n's connections to other (a permanent one too, from
// an earlier addnode) and waits until neither node lists the other.
func (n *Node) DisconnectFrom(other *Node) error {
	return n.DisconnectFromCtx(context.Background(), other)
}

// DisconnectFromCtx is DisconnectFrom bounded by ctx.
func (n *Node) DisconnectFromCtx(ctx context.Context, other *Node) error {
	p, err := n.peerWith(other.p2p)
	if err != nil {
		return err
	}
	var local string
	if p != nil {
		local = p.AddrLocal
	}
	if p == nil {
		return nil
	}
	n.dropPeersAt(other.p2p)
	// Under load btcd sometimes keeps a peer after addnode remove (seen as
	// a rare timeout here): every couple of seconds, drop whatever is
	// left on both sides by hand.
	polls := 0
	err = poll(ctx, "disconnect from "+other.p2p, func() (bool, error) {
		polls++
		nudge := polls%disconnectNudgePolls == 0
		p, err := n.peerWith(other.p2p)
		if err != nil {
			return false, err
		}
		if p != nil {
			if nudge {
				n.dropPeersAt(other.p2p)
			}
			return false, nil
		}
		if local == "" {
			return true, nil
		}
		back, err := other.peerWith(local)
		if err == nil && back != nil && nudge {
			_ = other.rpc.Node(btcjson.NDisconnect, local, nil)
		}
		return back == nil, err
	})
	if err != nil {
		return fmt.Errorf("%w (peers of %s: %s; peers of %s: %s)", err, n.p2p, n.peerList(), other.p2p, other.peerList())
	}
	return nil
}

// dropPeersAt ends every connection of n to addr, by node id: btcd can
// hold two permanent connections to one address (an addnode add while an
// earlier connection request was still retrying), and `node remove` or
// `node disconnect` by address ends only one of them. Errors are ignored:
// the caller polls until none is left.
func (n *Node) dropPeersAt(addr string) {
	peers, err := n.rpc.GetPeerInfo()
	if err != nil {
		return
	}
	for _, p := range peers {
		if p.Addr != addr {
			continue
		}
		id := strconv.Itoa(int(p.ID))
		if n.rpc.Node(btcjson.NRemove, id, nil) != nil {
			_ = n.rpc.Node(btcjson.NDisconnect, id, nil)
		}
	}
}

// peerList describes n's peers for an error message.
func (n *Node) peerList() string {
	peers, err := n.rpc.GetPeerInfo()
	if err != nil {
		return err.Error()
	}
	var parts []string
	for _, p := range peers {
		dir := "out"
		if p.Inbound {
			dir = "in"
		}
		parts = append(parts, fmt.Sprintf("%s %s (local %s)", dir, p.Addr, p.AddrLocal))
	}
	return strings.Join(parts, ", ")
}

// disconnectNudgePolls is how many polls DisconnectFromCtx waits before it
// disconnects a lingering peer by hand.
const disconnectNudgePolls = 10

// probeTimeout bounds one readiness probe.
const probeTimeout = time.Second

// probeRPC sends getblockcount to a btcd RPC server and reports whether
// it answered 200 OK within probeTimeout.
func probeRPC(ctx context.Context, addr, user, pass string) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	body := strings.NewReader(`{"jsonrpc":"1.0","id":0,"method":"getblockcount","params":[]}`)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr, body)
	if err != nil {
		return fmt.Errorf("testnet: rpc probe: %w", err)
	}
	req.Close = true // no idle connection left in the shared transport
	req.SetBasicAuth(user, pass)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return fmt.Errorf("testnet: rpc probe: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("testnet: rpc probe: %s", resp.Status)
	}
	return nil
}
