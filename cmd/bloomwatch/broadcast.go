package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/btcsuite/btcd/btcutil/psbt"
	"github.com/btcsuite/btcd/wire"
	"github.com/spf13/cobra"

	"github.com/bloomwatch/bloomwatch/internal/amount"
	"github.com/bloomwatch/bloomwatch/internal/boundedread"
	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/bloomwatch/bloomwatch/nodeapi"
	"github.com/bloomwatch/bloomwatch/session"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// reachTimeout bounds the check that some peer answers before a
// broadcast opens the light node.
const reachTimeout = 5 * time.Second

// broadcastOptions are the flags of `bloomwatch broadcast`.
type broadcastOptions struct {
	datadir     string
	txHex       string
	psbtArg     string
	connect     []string
	to          string
	maxPeers    int
	proxy       string
	isolation   bool
	timeout     time.Duration
	peerTimeout time.Duration
	logLevel    string
	transport   string
	asJSON      bool
}

// newBroadcastCmd returns `bloomwatch broadcast`.
func newBroadcastCmd() *cobra.Command {
	o := &broadcastOptions{}
	cmd := &cobra.Command{
		Use:   "broadcast --datadir D (--tx HEX | --psbt FILE|BASE64) [--connect HOST:PORT]...",
		Short: "Send a signed transaction of the wallet over a fresh connection that names no wallet, and wait until another peer relays it",
		Long: "Send a signed transaction (raw hex, or a PSBT with final scripts or signatures to\n" +
			"finalize) that spends the wallet's coins. The transaction is checked first: every\n" +
			"input must spend an unspent coin of the wallet and verify against it. The wallet's\n" +
			"light node syncs (its filter peers, as sync connects them), then the transaction goes\n" +
			"to a peer that is not the download peer over a fresh, short-lived connection that\n" +
			"never loads the wallet's filter (through --proxy on a circuit of its own), and the\n" +
			"command waits until a filter peer other than that one relays it back: then it is in\n" +
			"another mempool, and the wallet shows it pending. --broadcast-to names the peer to\n" +
			"send to; without a proxy, give one that is not a filter peer (a filter peer sees both\n" +
			"connections come from your address). When a node (sync, demo) runs on the data dir,\n" +
			"the transaction goes through it: its peers, its filter; --connect, --max-peers,\n" +
			"--proxy and --transport are then the node's.",
		Args: cobra.NoArgs,
		RunE: o.run,
	}
	f := cmd.Flags()
	registerDatadir(f, &o.datadir)
	f.StringVar(&o.txHex, "tx", "", "the signed transaction, hex")
	f.StringVar(&o.psbtArg, "psbt", "", "a signed PSBT: a file (binary or base64) or base64 text")
	f.StringArrayVar(&o.connect, "connect", nil, "peer HOST:PORT (repeatable; required on regtest and simnet)")
	f.StringVar(&o.to, "broadcast-to", "", "send to this peer HOST:PORT (default: one of the peers that is not the download peer)")
	f.IntVar(&o.maxPeers, "max-peers", spv.DefaultMaxPeers, "outbound filter peers")
	f.StringVar(&o.proxy, "proxy", "", "SOCKS5 proxy IP:PORT for every connection (Tor: 127.0.0.1:9050)")
	f.BoolVar(&o.isolation, "proxy-isolation", true, "a SOCKS username of its own per connection (a Tor circuit of its own)")
	f.DurationVar(&o.timeout, "timeout", spv.DefaultBroadcastTimeout, "give up when no other peer relays the transaction back within this")
	f.DurationVar(&o.peerTimeout, "peer-timeout", defaultPeerTimeout, "give up when no peer is usable for this long")
	f.StringVar(&o.logLevel, "log-level", "warn", "log level on stderr: debug, info, warn or error")
	f.StringVar(&o.transport, "transport", "auto", "P2P transport, as sync's: auto (BIP324 v2 first with --connect peers, then v1), v2 or v1")
	f.BoolVar(&o.asJSON, "json", false, "print JSON")
	return cmd
}

// readTx reads the transaction of --tx or --psbt: a PSBT is finalized
// when it holds signatures and no final scripts, and must then be
// complete.
func (o *broadcastOptions) readTx(prefix string) (*wire.MsgTx, error) {
	if (o.txHex == "") == (o.psbtArg == "") {
		return nil, usagef("%s: give exactly one of --tx and --psbt", prefix)
	}
	if o.txHex != "" {
		raw, err := hex.DecodeString(strings.TrimSpace(o.txHex))
		if err != nil {
			return nil, usagef("%s: --tx: bad hex: %w", prefix, err)
		}
		tx := wire.NewMsgTx(2)
		if err := tx.Deserialize(bytes.NewReader(raw)); err != nil {
			return nil, usagef("%s: --tx: not a transaction: %w", prefix, err)
		}
		return tx, nil
	}
	data := []byte(strings.TrimSpace(o.psbtArg))
	if raw, err := boundedread.ReadFile(o.psbtArg, maxPSBTFileBytes, "maxPSBTFileBytes"); err == nil {
		data = raw
	} else if !errors.Is(err, os.ErrNotExist) && !strings.Contains(err.Error(), "file name too long") {
		return nil, usagef("%s: --psbt: %w", prefix, err)
	}
	b64 := !bytes.HasPrefix(data, []byte("psbt\xff"))
	if b64 {
		data = bytes.TrimSpace(data)
	}
	p, err := psbt.NewFromRawBytes(bytes.NewReader(data), b64)
	if err != nil {
		return nil, usagef("%s: --psbt: not a PSBT (a file, binary or base64, or base64 text): %w", prefix, err)
	}
	if !p.IsComplete() {
		_ = psbt.MaybeFinalizeAll(p)
	}
	if !p.IsComplete() {
		for i := range p.Inputs {
			if len(p.Inputs[i].FinalScriptSig) == 0 && len(p.Inputs[i].FinalScriptWitness) == 0 {
				return nil, usagef("%s: --psbt: the PSBT is not final: input %d has no final script and not the signatures to finalize it; sign it first", prefix, i)
			}
		}
	}
	tx, err := psbt.Extract(p)
	if err != nil {
		return nil, usagef("%s: --psbt: %w", prefix, err)
	}
	return tx, nil
}

// checkFlags refuses bad flags before anything is opened.
func (o *broadcastOptions) checkFlags(prefix string) error {
	if o.datadir == "" {
		return usagef("%s: --datadir is required", prefix)
	}
	if _, err := parseLogLevel(o.logLevel); err != nil {
		return usagef("%s: %w", prefix, err)
	}
	if o.maxPeers < 1 {
		return usagef("%s: --max-peers must be at least 1", prefix)
	}
	if o.timeout <= 0 || o.peerTimeout < 0 {
		return usagef("%s: --timeout must be positive and --peer-timeout not negative", prefix)
	}
	for _, c := range append(append([]string(nil), o.connect...), o.to) {
		if c == "" {
			continue
		}
		if err := spv.CheckPeerAddr(c); err != nil {
			return usagef("%s: --connect/--broadcast-to: %w", prefix, err)
		}
	}
	if o.proxy != "" {
		if _, err := spv.CheckProxy(o.proxy); err != nil {
			return usagef("%s: --proxy: %w", prefix, err)
		}
	}
	if _, err := spv.ParseTransport(o.transport); err != nil {
		return usagef("%s: --transport: %w", prefix, err)
	}
	return nil
}

// reachable dials the explicit peers (or the proxy) until one answers,
// so that a broadcast with no reachable peer stops before the light node
// opens its state.
func (o *broadcastOptions) reachable(ctx context.Context) error {
	addrs := o.connect
	if o.proxy != "" {
		addrs = []string{o.proxy}
	}
	if len(addrs) == 0 {
		return nil // DNS seeds: the node finds its peers
	}
	var errs []error
	for _, a := range addrs {
		var d net.Dialer
		dctx, cancel := context.WithTimeout(ctx, reachTimeout)
		conn, err := d.DialContext(dctx, "tcp", a)
		cancel()
		if err == nil {
			_ = conn.Close()
			return nil
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// broadcastJSON is the --json output.
type broadcastJSON struct {
	*spv.BroadcastResult
	Wallet *wallet.TxSummary `json:"wallet,omitempty"`
}

// run implements `bloomwatch broadcast`.
func (o *broadcastOptions) run(cmd *cobra.Command, _ []string) (err error) {
	const prefix = "broadcast"
	if err := o.checkFlags(prefix); err != nil {
		return err
	}
	tx, err := o.readTx(prefix)
	if err != nil {
		return err
	}
	var (
		res  *spv.BroadcastResult
		held *wallet.TxSummary
	)
	c, err := nodeapi.Dial(cmd.Context(), o.datadir)
	standalone := false
	switch {
	case err == nil:
		defer c.Close()
		res, held, err = o.viaNode(cmd.Context(), prefix, c, tx)
	case errors.Is(err, nodeapi.ErrNoNode):
		standalone = true
		res, held, err = o.ownNode(cmd, prefix, tx)
	default:
		err = fmt.Errorf("%s: %w", prefix, err)
	}
	if err != nil {
		return err
	}
	if o.asJSON {
		return writeJSON(cmd, broadcastJSON{res, held})
	}
	_, err = fmt.Fprintln(cmd.OutOrStdout(), broadcastText(res, held, standalone, o.proxy))
	return err
}

// broadcastText is the text output of a broadcast: what was sent to
// whom, the targets left, whether it is rebroadcast (never by a
// standalone broadcast, whose node stops), and the wallet's view of it.
func broadcastText(res *spv.BroadcastResult, held *wallet.TxSummary, standalone bool, proxy string) string {
	how := fmt.Sprintf("relayed back by %s", res.ConfirmedBy)
	switch {
	case res.Mined:
		how = fmt.Sprintf("mined (seen from %s)", res.ConfirmedBy)
	case res.AlreadyKnown:
		how = "which already held it (counted as sent, as bitcoind's sendrawtransaction does)"
	}
	line := fmt.Sprintf("sent %s to %s over a fresh connection (%s, %s), %s after %.1f s",
		res.Txid, res.SentTo, res.Transport, res.Via, how, res.Elapsed.Seconds())
	for _, s := range res.Skipped {
		line += "\nnot sent to " + s
	}
	if res.AlsoFilterPeer && proxy == "" {
		line += "; note: that peer is also a filter peer and saw both connections come from your address"
	}
	if res.Rebroadcast {
		line += "\nrebroadcast: the running node sends it again over a fresh connection on each block until its first confirmation"
	} else {
		line += "\nnot rebroadcast: " + noRebroadcastWhy(standalone)
	}
	if held != nil {
		state := "pending"
		if held.Height >= 0 {
			state = fmt.Sprintf("confirmed at %d", held.Height)
		}
		line += fmt.Sprintf("\nwallet: %s, %s BTC", state, amount.BTC(held.Delta))
	}
	return line
}

// noRebroadcastWhy says why a broadcast is not rebroadcast: a standalone
// broadcast's node stops once it is sent; a running node's set was full
// or a block confirmed it already.
func noRebroadcastWhy(standalone bool) string {
	if standalone {
		return "no node runs on this wallet and this process exits, so nothing resends it if it is dropped (run bloomwatch sync to keep a node that does)"
	}
	return "the node does not hold it (mined already, or its pending-rebroadcast set is full: see its log)"
}

// viaNode broadcasts tx through the node that runs on the data dir (its
// peers; --connect, --max-peers, --proxy and --transport are the node's
// own): the node checks it against the wallet and sends it.
func (o *broadcastOptions) viaNode(ctx context.Context, prefix string, c *nodeapi.Client, tx *wire.MsgTx) (*spv.BroadcastResult, *wallet.TxSummary, error) {
	info, err := c.Broadcast(ctx, tx, o.to, o.timeout)
	if err != nil {
		return nil, nil, walletErr(prefix+": through the node running on "+o.datadir, err)
	}
	return info.Result, info.Wallet, nil
}

// ownNode broadcasts tx through a light node of its own on the wallet's
// files, when none runs on them: it syncs, sends and stops.
func (o *broadcastOptions) ownNode(cmd *cobra.Command, prefix string, tx *wire.MsgTx) (_ *spv.BroadcastResult, _ *wallet.TxSummary, err error) {
	w, err := openWallet(prefix, o.datadir)
	if err != nil {
		return nil, nil, err
	}
	defer closeWallet(w, &err)
	if n, nerr := netparams.Lookup(w.Network()); nerr == nil && len(o.connect) == 0 && len(n.Seeds) == 0 {
		return nil, nil, usagef("%s: %s has no DNS seeds: give --connect HOST:PORT", prefix, n.Name)
	}
	if err := w.CheckSpend(tx); err != nil {
		return nil, nil, walletErr(prefix, err)
	}
	if err := o.reachable(cmd.Context()); err != nil {
		return nil, nil, fmt.Errorf("%s: no peer reachable, nothing sent: %w", prefix, err)
	}
	level, _ := parseLogLevel(o.logLevel)
	transport, _ := spv.ParseTransport(o.transport)
	s, err := session.New(session.Config{
		Wallet: w, PeerTimeout: o.peerTimeout, LogLevel: level, Stderr: cmd.ErrOrStderr(),
		Node: spv.Config{Connect: o.connect, MaxPeers: o.maxPeers, Transport: transport,
			Proxy: o.proxy, NoProxyIsolation: !o.isolation},
	})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", prefix, err)
	}
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	if err := s.Start(ctx); err != nil {
		_ = s.Stop()
		return nil, nil, fmt.Errorf("%s: %w", prefix, err)
	}
	// This node stops once the transaction is sent: nothing would
	// rebroadcast it.
	res, berr := s.Broadcast(ctx, tx, spv.BroadcastOptions{To: o.to, Timeout: o.timeout, NoRebroadcast: true})
	if serr := s.Stop(); berr == nil {
		berr = serr
	}
	if berr != nil {
		if res != nil && res.SentTo != "" {
			return nil, nil, fmt.Errorf("%s: %s sent to %s: %w", prefix, tx.TxHash(), res.SentTo, berr)
		}
		return nil, nil, fmt.Errorf("%s: %w", prefix, berr)
	}
	var held *wallet.TxSummary
	txs, err := w.Txs()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", prefix, err)
	}
	for i := range txs {
		if txs[i].Txid == res.Txid {
			held = &txs[i]
		}
	}
	return res, held, nil
}
