package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/wire"
	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/transcript"
)

// badCase is one malformed command line: the exit code it must give (2 for
// usage errors, 1 for anything else; 0 means "1 or 2", for inputs whose
// class is arguable) and a substring of its single stderr line.
type badCase struct {
	name string
	args []string
	code int
	sub  string
}

// noDefaultWallet is the error of a wallet command without --datadir
// (tests run with a home of their own, see TestMain): the default data
// dir of mainnet holds no wallet.
const noDefaultWallet = "no wallet in data directory: "

// badFixture is a directory holding every kind of data dir a command may
// be pointed at.
type badFixture struct {
	root    string
	wallet  string // a valid regtest wallet
	file    string // a regular file
	corrupt string // a wallet dir whose wallet.db is garbage
	trunc   string // a wallet dir whose wallet.db is a truncated real one
	missing string // does not exist
	empty   string // an empty directory
	junk    string // a file of invalid JSON
	addrs   string // an addresses file whose line 4 is not an address
	filter  string // a valid serialized filter, hex
	// transcript is a valid transcript of one filterload
	transcript string
	gapped     string // a regtest wallet of gap limit 1 whose one receive address is handed out
	addrOnly   string // a regtest wallet of one address, no key
	spend      spendFixture
}

// newBadFixture builds the fixture.
func newBadFixture(t *testing.T) badFixture {
	t.Helper()
	root := t.TempDir()
	fx := badFixture{
		root:    root,
		wallet:  filepath.Join(root, "wallet"),
		file:    filepath.Join(root, "afile"),
		corrupt: filepath.Join(root, "corrupt"),
		trunc:   filepath.Join(root, "trunc"),
		missing: filepath.Join(root, "missing"),
		empty:   filepath.Join(root, "empty"),
		junk:    filepath.Join(root, "junk.jsonl"),
		addrs:   filepath.Join(root, "addresses.txt"),
		// transcript: written below, once the filter is built
		transcript: filepath.Join(root, "transcript.jsonl"),
		gapped:     filepath.Join(root, "gapped"),
		addrOnly:   filepath.Join(root, "addronly"),
	}
	fx.spend = newSpendFixture(t, root)
	code, out, errOut := runCLI(t, createArgsAt(fx.addrOnly, "--address", testTestP2PKH))
	require.Equal(t, 0, code, "create address-only fixture wallet: %d %s %s", code, out, errOut)
	code, out, errOut = runCLI(t, createArgs(fx.wallet))
	require.Equal(t, 0, code, "create fixture wallet: %d %s %s", code, out, errOut)
	code, out, errOut = runCLI(t, createArgs(fx.gapped, "--gap-external", "1"))
	require.Equal(t, 0, code, "create gapped fixture wallet: %d %s %s", code, out, errOut)
	code, out, errOut = runCLI(t, []string{"wallet", "receive", "--datadir", fx.gapped})
	require.Equal(t, 0, code, "hand out the gapped wallet's address: %d %s %s", code, out, errOut)
	db, err := os.ReadFile(filepath.Join(fx.wallet, "wallet.db"))
	require.NoError(t, err)
	for _, d := range []string{fx.corrupt, fx.trunc, fx.empty} {
		require.NoError(t, os.Mkdir(d, 0o700))
	}
	files := map[string][]byte{
		fx.file:                                []byte("not a directory\n"),
		filepath.Join(fx.corrupt, "wallet.db"): []byte(strings.Repeat("corrupt!", 2048)),
		filepath.Join(fx.trunc, "wallet.db"):   db[:len(db)/2],
		fx.junk:                                []byte("{not json\n"),
		fx.addrs:                               []byte("# watched\n\n" + testTestP2PKH + "\nbcrt1qnotanaddress # typo\n"),
	}
	for path, data := range files {
		require.NoError(t, os.WriteFile(path, data, 0o600))
	}
	code, out, errOut = runCLI(t, []string{"filter", "build", "00"})
	require.Equal(t, 0, code, "build fixture filter: %d %s", code, errOut)
	fx.filter = strings.TrimSpace(out)
	raw, err := hex.DecodeString(fx.filter)
	require.NoError(t, err)
	var tb bytes.Buffer
	require.NoError(t, transcript.Write(&tb, transcript.Record{V: 2, Seq: 1, Peer: "127.0.0.1:1", Kind: transcript.KindFilterLoad, Filter: raw}))
	require.NoError(t, os.WriteFile(fx.transcript, tb.Bytes(), 0o600))
	return fx
}

// treeHash returns a digest of every path, mode, size and content under
// root, so any change to the data dirs shows.
func treeHash(t *testing.T, root string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		line := rel + " " + info.Mode().String()
		if info.Mode().IsRegular() {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			line += " " + hex.EncodeToString(sum[:])
		}
		lines = append(lines, line)
		return nil
	})
	require.NoError(t, err)
	sort.Strings(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(sum[:])
}

// badCases returns the malformed command lines of every command.
func (fx badFixture) badCases() []badCase {
	const zeroTxid = "0000000000000000000000000000000000000000000000000000000000000000"
	const wrongNetAddr = "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"
	cases := []badCase{
		// root
		{"unknown command", []string{"nosuch"}, 2, "unknown command"},
		{"unknown flag", []string{"--bogus"}, 2, "unknown flag"},

		// filter build
		{"build no elements", []string{"filter", "build"}, 2, "--n must be at least 1"},
		{"build bad hex", []string{"filter", "build", "zz"}, 2, "bad hex"},
		{"build odd hex", []string{"filter", "build", "abc"}, 2, "odd length"},
		{"build fp zero", []string{"filter", "build", "--fp", "0", "00"}, 2, "false-positive rate"},
		{"build fp one", []string{"filter", "build", "--fp", "1", "00"}, 2, "false-positive rate"},
		{"build fp negative", []string{"filter", "build", "--fp", "-0.5", "00"}, 2, "false-positive rate"},
		{"build fp NaN", []string{"filter", "build", "--fp", "NaN", "00"}, 2, "false-positive rate"},
		{"build fp word", []string{"filter", "build", "--fp", "low", "00"}, 2, "--fp"},
		{"build n negative", []string{"filter", "build", "--n", "-1", "00"}, 2, "--n"},
		{"build n overflow", []string{"filter", "build", "--n", "99999999999", "00"}, 2, "out of range"},
		{"build n zero", []string{"filter", "build", "--n", "0", "00"}, 2, "--n must be at least 1"},
		{"build tweak overflow", []string{"filter", "build", "--tweak", "0x1ffffffff", "00"}, 2, "--tweak"},
		{"build tweak negative", []string{"filter", "build", "--tweak", "-1", "00"}, 2, "--tweak"},
		{"build tweak word", []string{"filter", "build", "--tweak", "seven", "00"}, 2, "--tweak"},
		{"build bad flags", []string{"filter", "build", "--flags", "bogus", "00"}, 2, "unknown update flag"},

		// filter match
		{"match no filter", []string{"filter", "match", "00"}, 2, "--filter is required"},
		{"match filter bad hex", []string{"filter", "match", "--filter", "zz", "00"}, 2, "bad hex"},
		{"match filter truncated", []string{"filter", "match", "--filter", "00", "00"}, 2, "malformed serialized filter"},
		{"match filter trailing", []string{"filter", "match", "--filter", fx.filter + "00", "00"}, 2, "filter"},
		{"match element bad hex", []string{"filter", "match", "--filter", fx.filter, "zz"}, 2, "bad hex"},
		{"match outpoint no index", []string{"filter", "match", "--filter", fx.filter, "--outpoint", zeroTxid}, 2, "--outpoint"},
		{"match outpoint short txid", []string{"filter", "match", "--filter", fx.filter, "--outpoint", "00:1"}, 2, "--outpoint"},
		{"match outpoint negative", []string{"filter", "match", "--filter", fx.filter, "--outpoint", zeroTxid + ":-1"}, 2, "--outpoint"},
		{"match outpoint overflow", []string{"filter", "match", "--filter", fx.filter, "--outpoint", zeroTxid + ":4294967296"}, 2, "--outpoint"},
		{"match outpoint bad hex", []string{"filter", "match", "--filter", fx.filter, "--outpoint", strings.Repeat("z", 64) + ":0"}, 2, "--outpoint"},

		// merkleblock verify
		{"verify no payload", []string{"merkleblock", "verify"}, 2, "exactly one"},
		{"verify two payloads", []string{"merkleblock", "verify", "00", "00"}, 2, "exactly one"},
		{"verify bad hex", []string{"merkleblock", "verify", "zz"}, 2, "bad hex"},
		{"verify truncated", []string{"merkleblock", "verify", "00"}, 2, "decode"},
		{"verify huge hash count", []string{"merkleblock", "verify", strings.Repeat("00", 84) + "ffffffffff"}, 2, "decode"},

		// wallet create
		{"create no network", []string{"wallet", "create", "--datadir", fx.missing, "--xpub", testVpub}, 2, "--network is required"},
		{"create unknown network", []string{"wallet", "create", "--datadir", fx.missing, "--network", "moon", "--xpub", testVpub}, 2, "unknown network"},
		{"create bad xpub", []string{"wallet", "create", "--datadir", fx.missing, "--network", "regtest", "--xpub", "xpub123"}, 2, "invalid extended public key"},
		{"create xpub bad checksum", createArgsAt(fx.missing, "--xpub", testVpub[:len(testVpub)-1]+"d"), 2, "checksum"},
		{"create wrong-network xpub", []string{"wallet", "create", "--datadir", fx.missing, "--network", "regtest", "--xpub", testMainZpub}, 2, "wrong network"},
		{"create private key", []string{"wallet", "create", "--datadir", fx.missing, "--network", "mainnet", "--xpub", testMainXprv}, 2, "only public keys"},
		{"create bad address", createArgsAt(fx.missing, "--address", "notanaddress"), 2, "invalid address"},
		{"create wrong-network address", createArgsAt(fx.missing, "--address", wrongNetAddr), 2, "wrong network"},
		{"create birthday negative", createArgs(fx.missing, "--birthday", "-5"), 2, "birthday"},
		{"create birthday overflow", createArgs(fx.missing, "--birthday", "99999999999"), 2, "out of range"},
		{"create gap negative", createArgs(fx.missing, "--gap-external", "-1"), 2, "--gap-external"},
		{"create gap zero", createArgs(fx.missing, "--gap-internal", "0"), 2, "at least 1"},
		{"create gap overflow", createArgs(fx.missing, "--gap-internal", "99999999999"), 2, "out of range"},
		{"create gap too large", createArgs(fx.missing, "--gap-external", "99999999"), 2, "gap limit"},
		{"create over a wallet", createArgs(fx.wallet), 2, "already exists"},
		{"create over a corrupt wallet", createArgs(fx.corrupt), 2, "already exists"},
		{"create in a file", createArgs(fx.file), 0, "not a directory"},
		{"create under a file", createArgs(filepath.Join(fx.file, "sub")), 0, "not a directory"},
		{"create extra argument", createArgs(fx.missing, "extra"), 2, "unknown command"},

		// wallet add
		{"add neither", []string{"wallet", "add", "--datadir", fx.wallet}, 2, "exactly one"},
		{"add both", []string{"wallet", "add", "--datadir", fx.wallet, "--xpub", testVpub, "--address", testTestP2PKH}, 2, "exactly one"},
		{"add no datadir", []string{"wallet", "add", "--xpub", testVpub}, 2, noDefaultWallet},
		{"add missing datadir", []string{"wallet", "add", "--datadir", fx.missing, "--xpub", testVpub}, 2, "no wallet"},
		{"add empty datadir", []string{"wallet", "add", "--datadir", fx.empty, "--xpub", testVpub}, 2, "no wallet"},
		{"add file datadir", []string{"wallet", "add", "--datadir", fx.file, "--xpub", testVpub}, 0, "not a directory"},
		{"add corrupt wallet", []string{"wallet", "add", "--datadir", fx.corrupt, "--xpub", testVpub}, 1, "wallet"},
		{"add truncated wallet", []string{"wallet", "add", "--datadir", fx.trunc, "--xpub", testVpub}, 1, "unreadable"},
		{"add bad xpub", []string{"wallet", "add", "--datadir", fx.wallet, "--xpub", "tpubnope"}, 2, "invalid extended public key"},
		{"add wrong-network xpub", []string{"wallet", "add", "--datadir", fx.wallet, "--xpub", testMainZpub}, 2, "wrong network"},
		{"add bad address", []string{"wallet", "add", "--datadir", fx.wallet, "--address", "zz"}, 2, "invalid address"},
		{"add wrong-network address", []string{"wallet", "add", "--datadir", fx.wallet, "--address", wrongNetAddr}, 2, "wrong network"},
		{"add duplicate", []string{"wallet", "add", "--datadir", fx.wallet, "--xpub", testVpub}, 2, "already watched"},
		{"add addresses and xpub", []string{"wallet", "add", "--datadir", fx.wallet, "--xpub", testVpub, "--addresses-file", fx.addrs}, 2, "exactly one"},
		{"add addresses file bad line", []string{"wallet", "add", "--datadir", fx.wallet, "--addresses-file", fx.addrs}, 2, "addresses.txt line 4: address \"bcrt1qnotanaddress\""},
		{"add addresses file two words", []string{"wallet", "add", "--datadir", fx.wallet, "--addresses-file", fx.junk}, 2, "junk.jsonl line 1: one address per line"},
		{"add addresses file missing", []string{"wallet", "add", "--datadir", fx.wallet, "--addresses-file", fx.missing}, 2, "--addresses-file"},
		{"add addresses file is a directory", []string{"wallet", "add", "--datadir", fx.wallet, "--addresses-file", fx.empty}, 2, "--addresses-file"},
		{"add addresses file wallet missing", []string{"wallet", "add", "--datadir", fx.missing, "--addresses-file", fx.addrs}, 2, "no wallet"},
		{"add repeated address", []string{"wallet", "add", "--datadir", fx.wallet, "--address", testTestP2PKH, "--address", testTestP2PKH}, 2, "--address #2: address " + testTestP2PKH + " repeats --address #1"},

		// wallet receive
		{"receive no datadir", []string{"wallet", "receive"}, 2, noDefaultWallet},
		{"receive missing datadir", []string{"wallet", "receive", "--datadir", fx.missing}, 2, "no wallet"},
		{"receive corrupt wallet", []string{"wallet", "receive", "--datadir", fx.corrupt}, 1, "wallet"},
		{"receive past the gap limit", []string{"wallet", "receive", "--datadir", fx.gapped}, 2, "past the gap limit of 1"},
		{"receive from an unknown account", []string{"wallet", "receive", "--datadir", fx.wallet, "--from", "m/44'/1'/7"}, 2, "no receive branch"},
		{"receive from a wallet of addresses", []string{"wallet", "receive", "--datadir", fx.addrOnly}, 2, "no receive branch"},
		{"receive stray argument", []string{"wallet", "receive", "--datadir", fx.wallet, "extra"}, 2, "unknown command"},
		{"addresses unused stray argument", []string{"wallet", "addresses", "--unused", "--datadir", fx.wallet, "extra"}, 2, "unknown command"},

		// wallet psbt (the fixture wallet holds no coin)
		{"psbt no datadir", []string{"wallet", "psbt", "--to", testTestP2PKH + ":0.001", "--feerate", "2"}, 2, noDefaultWallet},
		{"psbt no fee rate", []string{"wallet", "psbt", "--datadir", fx.wallet, "--to", testTestP2PKH + ":0.001"}, 2, "no fee estimate"},
		{"psbt fee rate 0", []string{"wallet", "psbt", "--datadir", fx.wallet, "--to", testTestP2PKH + ":0.001", "--feerate", "0"}, 2, "--feerate is required"},
		{"psbt fee rate below relay", []string{"wallet", "psbt", "--datadir", fx.wallet, "--to", testTestP2PKH + ":0.001", "--feerate", "0.05"}, 2, "fee rate out of range"},
		{"psbt absurd fee rate", []string{"wallet", "psbt", "--datadir", fx.wallet, "--to", testTestP2PKH + ":0.001", "--feerate", "5000"}, 2, "fee rate out of range"},
		{"psbt fee rate NaN", []string{"wallet", "psbt", "--datadir", fx.wallet, "--to", testTestP2PKH + ":0.001", "--feerate", "NaN"}, 2, "--feerate"},
		{"psbt fee rate word", []string{"wallet", "psbt", "--datadir", fx.wallet, "--to", testTestP2PKH + ":0.001", "--feerate", "cheap"}, 2, "--feerate"},
		{"psbt no outputs", []string{"wallet", "psbt", "--datadir", fx.wallet, "--feerate", "2"}, 2, "--to ADDR:AMOUNT or --sweep"},
		{"psbt to without amount", []string{"wallet", "psbt", "--datadir", fx.wallet, "--to", testTestP2PKH, "--feerate", "2"}, 2, "ADDR:AMOUNT"},
		{"psbt amount of 9 decimals", []string{"wallet", "psbt", "--datadir", fx.wallet, "--to", testTestP2PKH + ":0.000000001", "--feerate", "2"}, 2, "at most 8 decimals"},
		{"psbt dry run with out", []string{"wallet", "psbt", "--datadir", fx.wallet, "--to", testTestP2PKH + ":0.001", "--feerate", "2", "--dry-run", "--out", fx.file}, 2, "--dry-run writes no PSBT"},
		{"psbt negative amount", []string{"wallet", "psbt", "--datadir", fx.wallet, "--to", testTestP2PKH + ":-1", "--feerate", "2"}, 2, "amount"},
		{"psbt amount above 21 million", []string{"wallet", "psbt", "--datadir", fx.wallet, "--to", testTestP2PKH + ":21000001", "--feerate", "2"}, 2, "21 million"},
		{"psbt amount above the balance", []string{"wallet", "psbt", "--datadir", fx.wallet, "--to", testTestP2PKH + ":0.001", "--feerate", "2"}, 2, "insufficient funds"},
		{"psbt address of another network", []string{"wallet", "psbt", "--datadir", fx.wallet, "--to", wrongNetAddr + ":0.001", "--feerate", "2"}, 2, "wrong network"},
		{"psbt sweep to another network", []string{"wallet", "psbt", "--datadir", fx.wallet, "--sweep", wrongNetAddr, "--feerate", "2"}, 2, "wrong network"},
		{"psbt dust", []string{"wallet", "psbt", "--datadir", fx.wallet, "--to", testTestP2PKH + ":100sat", "--feerate", "2"}, 2, "dust"},
		{"psbt bad coin selection", []string{"wallet", "psbt", "--datadir", fx.wallet, "--to", testTestP2PKH + ":0.001", "--feerate", "2", "--coin-selection", "random"}, 2, "--coin-selection"},
		{"psbt out in a missing dir", []string{"wallet", "psbt", "--datadir", fx.wallet, "--to", testTestP2PKH + ":0.001", "--feerate", "2", "--out", filepath.Join(fx.missing, "x.psbt")}, 2, "no such directory"},
		{"psbt missing datadir", []string{"wallet", "psbt", "--datadir", fx.missing, "--to", testTestP2PKH + ":0.001", "--feerate", "2"}, 2, "no wallet"},
		{"psbt corrupt wallet", []string{"wallet", "psbt", "--datadir", fx.corrupt, "--to", testTestP2PKH + ":0.001", "--feerate", "2"}, 1, "wallet"},
		{"psbt stray argument", []string{"wallet", "psbt", "--datadir", fx.wallet, "extra"}, 2, "unknown command"},

		// broadcast (checked before the light node opens; 127.0.0.1:1 is
		// a closed loopback port)
		{"broadcast nothing to send", []string{"broadcast", "--datadir", fx.spend.dir, "--connect", "127.0.0.1:1"}, 2, "exactly one of --tx and --psbt"},
		{"broadcast tx and psbt", []string{"broadcast", "--datadir", fx.spend.dir, "--tx", fx.spend.signed, "--psbt", fx.spend.unsigned, "--connect", "127.0.0.1:1"}, 2, "exactly one"},
		{"broadcast bad hex", []string{"broadcast", "--datadir", fx.spend.dir, "--tx", "zz", "--connect", "127.0.0.1:1"}, 2, "bad hex"},
		{"broadcast not a transaction", []string{"broadcast", "--datadir", fx.spend.dir, "--tx", "0200", "--connect", "127.0.0.1:1"}, 2, "not a transaction"},
		{"broadcast not a PSBT", []string{"broadcast", "--datadir", fx.spend.dir, "--psbt", "bm90IGEgcHNidA==", "--connect", "127.0.0.1:1"}, 2, "not a PSBT"},
		{"broadcast PSBT not final", []string{"broadcast", "--datadir", fx.spend.dir, "--psbt", fx.spend.unsigned, "--connect", "127.0.0.1:1"}, 2, "not final"},
		{"broadcast spends coins the wallet does not watch", []string{"broadcast", "--datadir", fx.spend.dir, "--tx", fx.spend.foreign, "--connect", "127.0.0.1:1"}, 2, "does not watch"},
		{"broadcast signature that does not verify", []string{"broadcast", "--datadir", fx.spend.dir, "--tx", fx.spend.forged, "--connect", "127.0.0.1:1"}, 2, "does not verify"},
		{"broadcast another wallet's spend", []string{"broadcast", "--datadir", fx.wallet, "--tx", fx.spend.signed, "--connect", "127.0.0.1:1"}, 2, "does not watch"},
		{"broadcast no peer reachable", []string{"broadcast", "--datadir", fx.spend.dir, "--tx", fx.spend.signed, "--connect", "127.0.0.1:1"}, 1, "no peer reachable, nothing sent"},
		{"broadcast regtest without connect", []string{"broadcast", "--datadir", fx.spend.dir, "--tx", fx.spend.signed}, 2, "no DNS seeds"},
		{"broadcast bad connect", []string{"broadcast", "--datadir", fx.spend.dir, "--tx", fx.spend.signed, "--connect", "localhost"}, 2, "--connect"},
		{"broadcast bad broadcast-to", []string{"broadcast", "--datadir", fx.spend.dir, "--tx", fx.spend.signed, "--connect", "127.0.0.1:1", "--broadcast-to", "127.0.0.1:99999"}, 2, "--broadcast-to"},
		{"broadcast proxy by name", []string{"broadcast", "--datadir", fx.spend.dir, "--tx", fx.spend.signed, "--connect", "127.0.0.1:1", "--proxy", "tor.example:9050"}, 2, "--proxy"},
		{"broadcast zero timeout", []string{"broadcast", "--datadir", fx.spend.dir, "--tx", fx.spend.signed, "--connect", "127.0.0.1:1", "--timeout", "0s"}, 2, "--timeout"},
		{"broadcast bad transport", []string{"broadcast", "--datadir", fx.spend.dir, "--tx", fx.spend.signed, "--connect", "127.0.0.1:1", "--transport", "v3"}, 2, "--transport"},
		{"broadcast bad log level", []string{"broadcast", "--datadir", fx.spend.dir, "--tx", fx.spend.signed, "--connect", "127.0.0.1:1", "--log-level", "loud"}, 2, "--log-level"},
		{"broadcast missing datadir", []string{"broadcast", "--datadir", fx.missing, "--tx", fx.spend.signed, "--connect", "127.0.0.1:1"}, 2, "no wallet"},
		{"broadcast corrupt wallet", []string{"broadcast", "--datadir", fx.corrupt, "--tx", fx.spend.signed, "--connect", "127.0.0.1:1"}, 1, "wallet"},
		{"broadcast stray argument", []string{"broadcast", "--datadir", fx.spend.dir, "extra"}, 2, "unknown command"},

		// wallet psbt on a wallet with a coin
		{"psbt above the balance of a funded wallet", []string{"wallet", "psbt", "--datadir", fx.spend.dir, "--to", testTestP2PKH + ":0.01", "--feerate", "2"}, 2, "insufficient funds"},

		// wallet export-truth
		{"export-truth no datadir", []string{"wallet", "export-truth"}, 2, noDefaultWallet},
		{"export-truth missing datadir", []string{"wallet", "export-truth", "--datadir", fx.missing}, 2, "no wallet"},
		{"export-truth corrupt wallet", []string{"wallet", "export-truth", "--datadir", fx.corrupt}, 1, "wallet"},
		{"export-truth out in a missing dir", []string{"wallet", "export-truth", "--datadir", fx.wallet, "--out", filepath.Join(fx.missing, "t.txt")}, 1, "export-truth"},
		{"export-truth stray argument", []string{"wallet", "export-truth", "--datadir", fx.wallet, "extra"}, 2, "unknown command"},

		// wallet txs
		{"txs limit negative", []string{"wallet", "txs", "--datadir", fx.wallet, "--limit", "-1"}, 2, "--limit"},

		// wallet stats
		{"stats fps negative", []string{"wallet", "stats", "--datadir", fx.wallet, "--fps", "-1"}, 2, "--fps"},
		{"stats fps overflow", []string{"wallet", "stats", "--datadir", fx.wallet, "--fps", "99999999999999999999"}, 2, "out of range"},

		// sync (validated before any wallet is created or peer contacted;
		// 127.0.0.1:1 is a closed loopback port)
		{"sync no datadir, no network", []string{"sync", "--connect", "127.0.0.1:1"}, 2, "--network is required"},
		{"sync api listen elsewhere", []string{"sync", "--datadir", fx.missing, "--network", "regtest", "--connect", "127.0.0.1:1", "--api-listen", "localhost:8332"}, 2, "--api-listen"},
		{"sync no network for a new wallet", []string{"sync", "--datadir", fx.missing, "--connect", "127.0.0.1:1"}, 2, "--network is required"},
		{"sync unknown network", syncArgs(fx.missing, "--network", "moon"), 2, "unknown network"},
		{"sync bad xpub", syncArgs(fx.missing, "--network", "regtest", "--xpub", "vpubnope"), 2, "invalid extended public key"},
		{"sync wrong-network xpub", syncArgs(fx.missing, "--network", "regtest", "--xpub", testMainZpub), 2, "wrong network"},
		{"sync wrong-network address", syncArgs(fx.missing, "--network", "regtest", "--address", wrongNetAddr), 2, "wrong network"},
		{"sync regtest without connect", []string{"sync", "--datadir", fx.missing, "--network", "regtest", "--xpub", testVpub}, 2, "--connect"},
		{"sync connect no port", syncArgs(fx.wallet, "--connect", "localhost"), 2, "--connect"},
		{"sync connect bad port", syncArgs(fx.wallet, "--connect", "127.0.0.1:99999"), 2, "--connect"},
		{"sync proxy by name", syncArgs(fx.wallet, "--proxy", "tor.example:9050"), 2, "--proxy"},
		{"sync proxy without port", syncArgs(fx.wallet, "--proxy", "127.0.0.1"), 2, "--proxy"},
		{"sync check-every below -1", syncArgs(fx.wallet, "--check-every", "-5"), 2, "--check-every"},
		{"sync max-peers zero", syncArgs(fx.wallet, "--max-peers", "0"), 2, "--max-peers"},
		{"sync max-peers overflow", syncArgs(fx.wallet, "--max-peers", "99999999999999999999"), 2, "out of range"},
		{"sync fp-rate one", syncArgs(fx.wallet, "--fp-rate", "1"), 2, "--fp-rate"},
		{"sync fp-rate NaN", syncArgs(fx.wallet, "--fp-rate", "NaN"), 2, "--fp-rate"},
		{"sync negative decoys", syncArgs(fx.wallet, "--decoys", "-1"), 2, "--decoys"},
		{"sync too many decoys", syncArgs(fx.wallet, "--decoys", "1001"), 2, "--decoys"},
		{"sync decoys not a number", syncArgs(fx.wallet, "--decoys", "three"), 2, "--decoys"},
		{"sync unknown transport", syncArgs(fx.wallet, "--transport", "v3"), 2, "--transport"},
		{"sync unknown filter padding", syncArgs(fx.wallet, "--pad-filters", "some"), 2, "--pad-filters"},
		{"sync bad log level", syncArgs(fx.wallet, "--log-level", "loud"), 2, "--log-level"},
		{"sync negative peer timeout", syncArgs(fx.wallet, "--peer-timeout", "-1s"), 2, "--peer-timeout"},
		{"sync bad peer timeout", syncArgs(fx.wallet, "--peer-timeout", "soon"), 2, "--peer-timeout"},
		{"sync birthday overflow", syncArgs(fx.missing, "--network", "regtest", "--xpub", testVpub, "--birthday", "3000000000"), 2, "out of range"},
		{"sync wrong network for the wallet", syncArgs(fx.wallet, "--network", "mainnet"), 2, "network"},
		{"sync corrupt wallet", syncArgs(fx.corrupt), 1, "wallet"},
		{"sync truncated wallet", syncArgs(fx.trunc), 1, "unreadable"},
		{"sync file datadir", syncArgs(fx.file, "--network", "regtest", "--xpub", testVpub), 0, "not a directory"},
		{"sync extra argument", syncArgs(fx.wallet, "extra"), 2, "unknown command"},

		// demo (validated before btcd starts)
		{"demo blocks negative", []string{"demo", "--json", "--blocks", "-1"}, 2, "--blocks"},
		{"demo blocks overflow", []string{"demo", "--json", "--blocks", "99999999999999999999"}, 2, "out of range"},
		{"demo addrs zero", []string{"demo", "--json", "--addrs", "0"}, 2, "--addrs"},
		{"demo txs negative", []string{"demo", "--json", "--txs", "-5"}, 2, "--txs"},
		{"demo interval negative", []string{"demo", "--json", "--interval", "-1s"}, 2, "--interval"},
		{"demo reload negative", []string{"demo", "--json", "--reload-every", "-1"}, 2, "--reload-every"},
		{"demo bad log level", []string{"demo", "--json", "--log-level", "loud"}, 2, "--log-level"},
		{"demo file datadir", []string{"demo", "--json", "--until-synced", "--blocks", "1", "--datadir", fx.file}, 0, "not a directory"},
		{"demo extra argument", []string{"demo", "--json", "extra"}, 2, "unknown command"},
		{"dashboard without a terminal", []string{"dashboard", "--datadir", fx.wallet}, 2, "needs a terminal"},
		{"dashboard extra argument", []string{"dashboard", "extra"}, 2, "unknown command"},
		{"demo api listen elsewhere", []string{"demo", "--json", "--api-listen", "0.0.0.0:8332"}, 2, "127.0.0.1"},
		{"demo pay no demo", []string{"demo", "pay", "--datadir", fx.wallet, "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080", "1"}, 2, "no demo runs"},
		{"demo pay bad amount", []string{"demo", "pay", "--datadir", fx.wallet, "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080", "lots"}, 2, "amount"},
		{"demo pay one argument", []string{"demo", "pay", "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080"}, 2, "arg(s)"},
		{"demo mine zero", []string{"demo", "mine", "--datadir", fx.wallet, "0"}, 2, "BLOCKS"},
		{"demo mine no demo", []string{"demo", "mine", "--datadir", fx.missing}, 2, "no demo runs"},

		// privacy analyze
		{"analyze no transcript", []string{"privacy", "analyze", "--synthetic", "10"}, 2, "--transcript is required"},
		{"analyze no universe", []string{"privacy", "analyze", "--transcript", fx.junk}, 2, "exactly one"},
		{"analyze two universes", []string{"privacy", "analyze", "--transcript", fx.junk, "--synthetic", "10", "--universe", fx.file}, 2, "exactly one"},
		{"analyze synthetic negative", []string{"privacy", "analyze", "--transcript", fx.junk, "--synthetic", "-1"}, 2, "--synthetic"},
		{"analyze workers negative", []string{"privacy", "analyze", "--transcript", fx.junk, "--synthetic", "10", "--workers", "-1"}, 2, "--workers"},
		{"analyze bad attack", []string{"privacy", "analyze", "--transcript", fx.junk, "--synthetic", "10", "--attacks", "bogus"}, 2, "unknown attack"},
		{"analyze rpc without credentials", []string{"privacy", "analyze", "--transcript", fx.junk, "--btcd-rpc", "127.0.0.1:1"}, 2, "--rpcuser"},
		{"analyze missing transcript", []string{"privacy", "analyze", "--transcript", fx.missing, "--synthetic", "10"}, 2, "no such file"},
		{"analyze transcript is a dir", []string{"privacy", "analyze", "--transcript", fx.empty, "--synthetic", "10"}, 2, "directory"},
		{"analyze junk transcript", []string{"privacy", "analyze", "--transcript", fx.junk, "--synthetic", "10"}, 2, "transcript"},
		{"analyze missing universe", []string{"privacy", "analyze", "--transcript", fx.transcript, "--universe", fx.missing}, 2, "--universe"},
		{"analyze missing truth", []string{"privacy", "analyze", "--transcript", fx.transcript, "--synthetic", "10", "--truth", fx.missing}, 2, "--truth"},
		{"analyze junk truth", []string{"privacy", "analyze", "--transcript", fx.transcript, "--synthetic", "10", "--truth", fx.junk}, 2, "--truth"},

		// privacy experiment
		{"experiment none", []string{"privacy", "experiment"}, 2, "give one experiment NAME: bitcoinj-sizing, single-filter,"},
		{"experiment two", []string{"privacy", "experiment", "peers", "noise"}, 2, "not 2: bitcoinj-sizing"},
		{"experiment unknown", []string{"privacy", "experiment", "nosuch"}, 2, "unknown experiment"},
		{"experiment trials negative", []string{"privacy", "experiment", "bitcoinj-sizing", "--trials", "-1"}, 2, "--trials"},
		{"experiment universe negative", []string{"privacy", "experiment", "bitcoinj-sizing", "--universe", "-1"}, 2, "--universe"},
		{"experiment rate outside [0, 1]", []string{"privacy", "experiment", "peers", "--fp-rate", "2"}, 2, "--fp-rate"},
		{"experiment 51 hash functions", []string{"privacy", "experiment", "tweak-policy", "--hash-funcs", "51"}, 2, "--hash-funcs"},
		{"experiment wallets negative", []string{"privacy", "experiment", "population", "--wallets", "-1"}, 2, "must not be negative"},
		{"experiment records negative", []string{"privacy", "experiment", "pprl", "--records", "-1"}, 2, "--records"},

		// privacy export-universe
		{"export no out", []string{"privacy", "export-universe", "--synthetic", "10"}, 2, "--out is required"},
		{"export no source", []string{"privacy", "export-universe", "--out", fx.missing}, 2, "exactly one of"},
		{"export negative height", []string{"privacy", "export-universe", "--out", fx.missing, "--btcd-rpc", "127.0.0.1:1",
			"--rpcuser", "u", "--rpcpass", "p", "--height", "-2"}, 2, "--height"},

		// privacy scan
		{"scan no synthetic", []string{"privacy", "scan", "--filter", fx.filter}, 2, "--synthetic"},
		{"scan no filter", []string{"privacy", "scan", "--synthetic", "10"}, 2, "exactly one"},
		{"scan bad filter hex", []string{"privacy", "scan", "--synthetic", "10", "--filter", "zz"}, 2, "bad hex"},
		{"scan truncated filter", []string{"privacy", "scan", "--synthetic", "10", "--filter", "00"}, 2, "malformed"},
		{"scan workers negative", []string{"privacy", "scan", "--synthetic", "10", "--filter", fx.filter, "--workers", "-2"}, 2, "--workers"},
		{"scan missing transcript", []string{"privacy", "scan", "--synthetic", "10", "--transcript", fx.missing}, 2, "no such file"},
	}
	for _, c := range []string{"balance", "txs", "utxos", "addresses", "stats"} {
		cases = append(cases,
			badCase{c + " no datadir", []string{"wallet", c}, 2, noDefaultWallet},
			badCase{c + " missing datadir", []string{"wallet", c, "--datadir", fx.missing}, 2, "no wallet"},
			badCase{c + " empty datadir", []string{"wallet", c, "--datadir", fx.empty}, 2, "no wallet"},
			badCase{c + " file datadir", []string{"wallet", c, "--datadir", fx.file}, 0, "not a directory"},
			badCase{c + " corrupt wallet", []string{"wallet", c, "--datadir", fx.corrupt}, 1, "wallet"},
			badCase{c + " truncated wallet", []string{"wallet", c, "--datadir", fx.trunc}, 1, "unreadable"},
			badCase{c + " extra argument", []string{"wallet", c, "--datadir", fx.wallet, "extra"}, 2, "unknown command"},
		)
	}
	return cases
}

// syncArgs is `sync --datadir dir --connect 127.0.0.1:1` (a closed loopback
// port: no case may reach the network) plus extra.
func syncArgs(dir string, extra ...string) []string {
	return append([]string{"sync", "--no-tui", "--datadir", dir, "--connect", "127.0.0.1:1", "--peer-timeout", "1s"}, extra...)
}

// createArgsAt is `wallet create` on regtest in dir without a key, so the
// caller's --xpub or --address is the only one.
func createArgsAt(dir string, extra ...string) []string {
	return append([]string{"wallet", "create", "--datadir", dir, "--network", "regtest"}, extra...)
}

// TestBadInput runs every malformed command line: each must print exactly
// one line on stderr and nothing on stdout, exit with its code, and leave
// every data dir byte-for-byte as it was.
func TestBadInput(t *testing.T) {
	fx := newBadFixture(t)
	cases := fx.badCases()
	before := treeHash(t, fx.root)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tc.args)
			switch {
			case tc.code == 0 && code != 1 && code != 2:
				require.FailNow(t, fmt.Sprintf("exit %d, want 1 or 2", code))
			case tc.code != 0 && code != tc.code:
				require.FailNow(t, fmt.Sprintf("exit %d, want %d", code, tc.code))
			}
			require.Equal(t, "", out, "stdout %q, want nothing", out)
			require.Equal(t, 1, strings.Count(errOut, "\n"), "stderr %q, want exactly one line", errOut)
			require.True(t, strings.HasSuffix(errOut, "\n"), "stderr %q, want exactly one line", errOut)
			require.Contains(t, errOut, tc.sub, "stderr %q lacks %q", errOut, tc.sub)
			after := treeHash(t, fx.root)
			require.Equal(t, before, after, "data dirs changed")
		})
	}
}

// TestBadInputCoversEveryCommand fails when a runnable command has no
// malformed case in badCases, so a new command cannot skip the suite.
func TestBadInputCoversEveryCommand(t *testing.T) {
	fx := badFixture{}
	root := newRootCmd()
	covered := map[string]bool{}
	for _, tc := range fx.badCases() {
		cmd, _, err := root.Find(tc.args)
		if err == nil {
			covered[cmd.CommandPath()] = true
		}
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if !c.Runnable() || c.Name() == "help" || c.Name() == "completion" || c.HasParent() && c.Parent().Name() == "completion" {
			return
		}
		require.True(t, covered[c.CommandPath()], "command %q has no bad-input case", c.CommandPath())
	}
	walk(root)
}

// TestTruncatedWalletReopen opens a truncated wallet twice in one process:
// both attempts must report the damage and the way to recover (bbolt once
// panicked inside Open after taking the file lock, leaking the lock, so the
// second attempt said "database in use"; the wallet now checks the file's
// meta pages before bbolt sees it).
func TestTruncatedWalletReopen(t *testing.T) {
	fx := newBadFixture(t)
	for i := 0; i < 2; i++ {
		code, _, errOut := runCLI(t, []string{"wallet", "balance", "--datadir", fx.trunc})
		require.Equal(t, 1, code, "open %d: exit %d, stderr %q", i+1, code, errOut)
		require.Contains(t, errOut, "unreadable", "open %d: exit %d, stderr %q", i+1, code, errOut)
		require.Contains(t, errOut, "create the wallet again", "open %d: exit %d, stderr %q", i+1, code, errOut)
	}
}

// TestPrivacyAnalyzeBadTranscript feeds `privacy analyze` transcripts a
// node would refuse or that were cut short: each must exit 2 with one
// stderr line naming the record (its line, and its sequence number when
// the line parsed), print nothing, and leave no --csv or --png file, not
// even a partial one.
func TestPrivacyAnalyzeBadTranscript(t *testing.T) {
	dir := t.TempDir()
	good, err := bip37.NewFilter(20, 0.01, 1, bip37.UpdateAll)
	require.NoError(t, err)
	good.Add([]byte("an element"))
	// serialized builds a filterload payload by hand: BIP37's layout with
	// any size and hash count.
	serialized := func(size int, k uint32) []byte {
		var b bytes.Buffer
		require.NoError(t, wire.WriteVarInt(&b, 0, uint64(size)))
		b.Write(make([]byte, size))
		_ = binary.Write(&b, binary.LittleEndian, k)
		_ = binary.Write(&b, binary.LittleEndian, uint32(7))
		b.WriteByte(byte(bip37.UpdateAll))
		return b.Bytes()
	}
	record := func(seq uint64, kind transcript.Kind, filter []byte) string {
		var b bytes.Buffer
		require.NoError(t, transcript.Write(&b, transcript.Record{Seq: seq, Peer: "127.0.0.1:1", Kind: kind, Filter: filter}))
		return b.String()
	}
	first := record(1, transcript.KindFilterLoad, good.Serialize())
	cases := []struct {
		name, content, sub string
	}{
		{"truncated", first + record(2, transcript.KindFilterLoad, good.Serialize())[:40], "line 2"},
		{"filter over 36,000 bytes", first + record(2, transcript.KindFilterLoad, serialized(bip37.MaxFilterSize+1, 5)), "line 2 (seq 2)"},
		{"over 50 hash functions", first + record(2, transcript.KindFilterLoad, serialized(100, bip37.MaxHashFuncs+1)), "line 2 (seq 2)"},
		{"unknown kind", first + record(7, "filterzap", nil), "line 2 (seq 7)"},
		{"no filterload", record(3, transcript.KindFilterClear, nil), "no filterload"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".jsonl")
			require.NoError(t, os.WriteFile(path, []byte(tc.content), 0o600))
			csvPath, pngPath := path+".csv", path+".png"
			code, out, errOut := runCLI(t, []string{"privacy", "analyze", "--transcript", path, "--synthetic", "100",
				"--csv", csvPath, "--png", pngPath})
			require.Equal(t, 2, code, "exit %d, stdout %q; want 2 and nothing", code, out)
			require.Equal(t, "", out, "exit %d, stdout %q; want 2 and nothing", code, out)
			require.Equal(t, 1, strings.Count(errOut, "\n"), "stderr %q: want one line naming %s and %q", errOut, path, tc.sub)
			require.Contains(t, errOut, tc.sub, "stderr %q: want one line naming %s and %q", errOut, path, tc.sub)
			require.Contains(t, errOut, path, "stderr %q: want one line naming %s and %q", errOut, path, tc.sub)
			for _, p := range []string{csvPath, pngPath} {
				_, err := os.Stat(p)
				require.ErrorIs(t, err, fs.ErrNotExist, "%s: %v; want no output file", p, err)
			}
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			for _, e := range entries {
				require.NotContains(t, e.Name(), ".tmp", "temporary file %s left behind", e.Name())
			}
		})
	}
	// A good transcript writes both files whole.
	path := filepath.Join(dir, "good.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(first), 0o600))
	code, _, errOut := runCLI(t, []string{"privacy", "analyze", "--transcript", path, "--synthetic", "100",
		"--csv", path + ".csv", "--png", path + ".png"})
	require.Equal(t, 0, code, "good transcript: exit %d: %s", code, errOut)
	for _, p := range []string{path + ".csv", path + ".png"} {
		st, err := os.Stat(p)
		require.NoError(t, err, "%s", p)
		require.NotEqual(t, int64(0), st.Size(), "%s: %v", p, err)
	}
	// When one output cannot be written, the other is not left behind.
	csvPath := filepath.Join(dir, "alone.csv")
	code, _, errOut = runCLI(t, []string{"privacy", "analyze", "--transcript", path, "--synthetic", "100",
		"--csv", csvPath, "--png", filepath.Join(dir, "no-such-dir", "x.png")})
	require.Equal(t, 1, code, "unwritable --png: exit %d, %q", code, errOut)
	require.Contains(t, errOut, "no-such-dir", "unwritable --png: exit %d, %q", code, errOut)
	_, err = os.Stat(csvPath)
	require.ErrorIs(t, err, fs.ErrNotExist, "--csv written although --png failed: %v", err)
}
