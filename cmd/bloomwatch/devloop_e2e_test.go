package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/demo"
	"github.com/bloomwatch/bloomwatch/nodeapi"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// devLoopDest is where the loop's spend goes: the regtest form of BIP173's
// P2WPKH test vector.
const devLoopDest = "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080"

// SLIP-132 versions of a BIP84 account key on the test networks.
var (
	vprvVersion = []byte{0x04, 0x5f, 0x18, 0xbc}
	vpubVersion = []byte{0x04, 0x5f, 0x1c, 0xf6}
)

// devLoopKeys returns the account key m/84'/1'/0' of a fixed seed, as the
// vprv Electrum restores and the vpub bloomwatch watches.
func devLoopKeys(t *testing.T) (vprv, vpub string) {
	t.Helper()
	seed := bytes.Repeat([]byte{0x35}, 32)
	key, err := hdkeychain.NewMaster(seed, &chaincfg.RegressionNetParams)
	require.NoError(t, err)
	for _, i := range []uint32{84, 1, 0} {
		key, err = key.Derive(hdkeychain.HardenedKeyStart + i)
		require.NoError(t, err)
	}
	prv, err := key.CloneWithVersion(vprvVersion)
	require.NoError(t, err)
	pub, err := key.Neuter()
	require.NoError(t, err)
	pub, err = pub.CloneWithVersion(vpubVersion)
	require.NoError(t, err)
	return prv.String(), pub.String()
}

// electrumPath finds Debian's electrum: with CI set the test fails
// without it (.ci/run installs it), elsewhere it skips.
func electrumPath(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("electrum")
	if err != nil {
		require.Equal(t, "", os.Getenv("CI"), "electrum not found (apt-get install electrum; .ci/run installs it): %v", err)
		t.Skipf("electrum not found (apt-get install electrum): %v", err)
	}
	return path
}

// background is a process the loop leaves running (the demo, the sync).
type background struct {
	cmd    *exec.Cmd
	lines  *lineWatcher
	exited chan error
}

// startBackground starts bin with args in env, collecting its stderr;
// the test's end kills what is left of its process group.
func startBackground(t *testing.T, env []string, bin string, args ...string) *background {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	b := &background{cmd: cmd, lines: &lineWatcher{}, exited: make(chan error, 1)}
	go func() {
		b.lines.read(bufio.NewScanner(stderr))
		b.exited <- cmd.Wait()
	}()
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	return b
}

// interrupt stops the process as ctrl-c would and requires a clean exit.
func (b *background) interrupt(t *testing.T) {
	t.Helper()
	require.NoError(t, b.cmd.Process.Signal(syscall.SIGINT))
	select {
	case err := <-b.exited:
		require.NoError(t, err, "%s exit after the interrupt:\n%s", b.cmd.Args[1], b.lines.all())
	case <-time.After(time.Minute):
		require.FailNow(t, fmt.Sprintf("%s did not exit after the interrupt:\n%s", b.cmd.Args[1], b.lines.all()))
	}
}

// alive fails the test if the process has exited.
func (b *background) alive(t *testing.T) {
	t.Helper()
	select {
	case err := <-b.exited:
		require.FailNow(t, fmt.Sprintf("%s exited early (%v):\n%s", b.cmd.Args[1], err, b.lines.all()))
	default:
	}
}

// waitUntil polls cond every 200 ms until it holds, failing after limit
// (or when one of procs exits); what it says on failure comes from cond's
// last message.
func waitUntil(t *testing.T, limit time.Duration, what string, cond func() (bool, string), procs ...*background) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		ok, msg := cond()
		if ok {
			return
		}
		for _, p := range procs {
			p.alive(t)
		}
		require.False(t, time.Now().After(deadline), "%s: not within %s: %s", what, limit, msg)
		time.Sleep(200 * time.Millisecond)
	}
}

// TestDeveloperLoop runs a wallet developer's whole loop on 127.0.0.1 with
// the real binary, as docs/API.md's commands give it: the demo runs; an
// own BIP84 wallet (a vpub) is created in the default data dir of regtest
// (no --datadir anywhere); the faucet pays its receive address; while
// `sync` runs on that wallet, `wallet balance` answers through the node
// API; `wallet psbt` builds the spend; Electrum (Debian's electrum, a
// signer nobody here wrote) restored from the account's vprv signs it
// offline; `broadcast` sends it through the running node; the faucet
// mines it and the wallet shows it confirmed with the balance the chain
// holds.
func TestDeveloperLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two btcd, a sync and electrum")
	}
	el := electrumPath(t)
	dir := t.TempDir()
	bin := buildBinary(t, dir)
	home := filepath.Join(dir, "home")
	require.NoError(t, os.Mkdir(home, 0o700))
	env := append(os.Environ(), "HOME="+home)
	run := func(args ...string) (string, string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = env
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		return out.String(), errOut.String(), err
	}
	must := func(args ...string) string {
		t.Helper()
		out, errOut, err := run(args...)
		require.NoError(t, err, "%v: %s", args, errOut)
		return out
	}

	// 1. The demo, whose chain moves only when the faucet mines.
	d := startBackground(t, env, bin, "demo", "--no-tui", "--blocks", "30", "--interval", "1h", "--log-level", "warn")
	var connect []string
	waitUntil(t, 4*time.Minute, "the demo's sync line", func() (bool, string) {
		line, ok := d.lines.after("your own wallet on the demo's chain (one filter peer, the other left for broadcast): ")
		if !ok {
			return false, d.lines.all()
		}
		fields := strings.Fields(line)
		for i, f := range fields {
			if f == "--connect" && i+1 < len(fields) {
				connect = append(connect, "--connect", fields[i+1])
			}
		}
		return true, ""
	}, d)
	require.Len(t, connect, 4)
	waitUntil(t, 2*time.Minute, "the demo's faucet", func() (bool, string) {
		_, errOut, err := run("demo", "mine")
		return err == nil, errOut
	}, d)

	// 2. An own wallet: the account's vpub, in ~/.bloomwatch/regtest.
	vprv, vpub := devLoopKeys(t)
	must("wallet", "create", "--network", "regtest", "--xpub", vpub)
	datadir := filepath.Join(home, ".bloomwatch", "regtest")
	var recv wallet.ReceiveInfo
	require.NoError(t, json.Unmarshal([]byte(must("wallet", "receive", "--network", "regtest", "--json")), &recv))

	// 3. Paid by the faucet (confirmed in a block it mines).
	out := must("demo", "pay", recv.Address, "0.5", "--json")
	checkJSONKeys(t, "bloomwatch demo pay", []byte(out))
	var paid demo.Payment
	require.NoError(t, json.Unmarshal([]byte(out), &paid))
	require.Equal(t, int64(50_000_000), paid.AmountSat)

	// 4. The balance while the sync runs: through the node's API (the
	// wallet's files are the node's while it runs).
	// One filter peer of the two: the broadcast goes to the other, which
	// never had the wallet's filter (broadcast's advice without a proxy).
	args := append([]string{"sync", "--network", "regtest", "--no-tui", "--log-level", "warn", "--max-peers", "1"}, connect...)
	s := startBackground(t, env, bin, args...)
	waitUntil(t, time.Minute, "the node API's address file", func() (bool, string) {
		_, err := os.Stat(filepath.Join(datadir, nodeapi.AddressFile))
		return err == nil, s.lines.all()
	}, s, d)
	var bal balanceReport
	waitUntil(t, 2*time.Minute, "the payment in the balance", func() (bool, string) {
		out, errOut, err := run("wallet", "balance", "--network", "regtest", "--json")
		require.NoError(t, err, "wallet balance while the sync runs: %s", errOut)
		checkJSONKeys(t, "bloomwatch wallet balance", []byte(out))
		require.NoError(t, json.Unmarshal([]byte(out), &bal))
		return bal.Confirmed == 50_000_000, out
	}, s, d)
	c, err := nodeapi.Dial(context.Background(), datadir)
	require.NoError(t, err, "the balance came while a node ran on the data dir")
	c.Close()

	// 5. The spend, built by the node's wallet.
	unsigned := filepath.Join(dir, "unsigned.psbt")
	out = must("wallet", "psbt", "--network", "regtest", "--to", devLoopDest+":0.2", "--feerate", "2", "--out", unsigned, "--json")
	var built wallet.PSBT
	require.NoError(t, json.Unmarshal([]byte(out), &built))
	require.NotEmpty(t, built.Base64)

	// 6. Signed by Electrum, offline, from the account's vprv.
	eldir := filepath.Join(dir, "electrum")
	electrum := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, el, append([]string{"--regtest", "--offline", "-D", eldir}, args...)...)
		cmd.Env = env
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		require.NoError(t, cmd.Run(), "electrum %s: %s%s", args[0], out.String(), errOut.String())
		return strings.TrimSpace(out.String())
	}
	electrum("restore", vprv)
	var first []string
	require.NoError(t, json.Unmarshal([]byte(electrum("listaddresses", "--receiving")), &first))
	require.Equal(t, recv.Address, first[0], "electrum derives the wallet's first receive address")
	signed := electrum("signtransaction", built.Base64)
	t.Logf("electrum signtransaction printed %.60q...", signed)
	var signedStr string
	if json.Unmarshal([]byte(signed), &signedStr) == nil {
		signed = signedStr
	}
	flag := "--tx"
	if strings.HasPrefix(signed, "cHNidP") {
		flag = "--psbt"
	}

	// 7. Broadcast through the running node.
	out = must("broadcast", "--network", "regtest", flag, signed, "--json")
	checkJSONKeys(t, "bloomwatch broadcast", []byte(out))
	var sent struct {
		Txid        string `json:"txid"`
		Rebroadcast bool   `json:"rebroadcast"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &sent))
	require.NotEmpty(t, sent.Txid)
	require.True(t, sent.Rebroadcast, "the running node holds the spend for rebroadcast: %s", out)

	// 8. Confirmed: the faucet mines it; the wallet holds what the chain does.
	out = must("demo", "mine", "--json")
	checkJSONKeys(t, "bloomwatch demo mine", []byte(out))
	var mined demo.Mined
	require.NoError(t, json.Unmarshal([]byte(out), &mined))
	waitUntil(t, 2*time.Minute, "the spend confirmed", func() (bool, string) {
		out := must("wallet", "txs", "--network", "regtest", "--json")
		var txs []wallet.TxSummary
		require.NoError(t, json.Unmarshal([]byte(out), &txs))
		for _, tx := range txs {
			if tx.Txid.String() == sent.Txid && tx.Height == mined.Height {
				return true, ""
			}
		}
		return false, out
	}, s, d)
	// The node's balance is a snapshot taken after each batch of its
	// events: it follows the block that confirmed the spend.
	want := int64(50_000_000-20_000_000) - int64(built.Fee)
	waitUntil(t, time.Minute, "the balance after the spend", func() (bool, string) {
		out := must("wallet", "balance", "--network", "regtest", "--json")
		require.NoError(t, json.Unmarshal([]byte(out), &bal))
		return bal.SyncedHeight >= mined.Height, out
	}, s, d)
	require.Equal(t, want, int64(bal.Confirmed))
	require.Zero(t, int64(bal.Unconfirmed))
	require.Zero(t, int64(bal.PendingSpent))

	s.interrupt(t)
	d.interrupt(t)
	_, err = os.Stat(filepath.Join(datadir, nodeapi.CookieFile))
	require.ErrorIs(t, err, os.ErrNotExist, "the node removes its cookie when it stops")
}
