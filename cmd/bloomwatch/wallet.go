package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/bloomwatch/bloomwatch/nodeapi"
	"github.com/bloomwatch/bloomwatch/session"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// newWalletCmd returns `bloomwatch wallet`, which groups the watch-only
// wallet commands.
func newWalletCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "wallet",
		Short: "Create and inspect the watch-only wallet",
	}
	cmd.AddCommand(newWalletCreateCmd(), newWalletAddCmd(),
		newWalletReadCmd("balance --datadir D", "Print the confirmed, unconfirmed, immature and pending-spent balance and the worst-case total", readBalance),
		newWalletTxsCmd(),
		newWalletReadCmd("utxos --datadir D", "Print the unspent outputs and the unconfirmed spends of each", readUTXOs),
		newWalletAddressesCmd(), newWalletReceiveCmd(), newWalletPSBTCmd(),
		newWalletStatsCmd(), newWalletExportTruthCmd())
	return cmd
}

// walletFlags are the flags that open or create a wallet; `wallet create`
// and `sync` share them.
type walletFlags struct {
	datadir     string
	network     string
	xpubs       []string
	taproot     []string
	descriptors []string
	addresses   []string
	birthday    int32
	gapExternal uint32
	gapInternal uint32
	lookahead   uint32
}

// registerCreate adds every flag that describes a new wallet.
func (f *walletFlags) registerCreate(fs *pflag.FlagSet) {
	fs.StringVar(&f.network, "network", "", "network: mainnet, testnet3, testnet4, signet, regtest or simnet (required for a new wallet; names the default data dir ~/.bloomwatch/NETWORK)")
	registerDatadir(fs, &f.datadir)
	fs.StringArrayVar(&f.xpubs, "xpub", nil, "account extended public key: xpub/ypub/zpub, tpub/upub/vpub, spub (repeatable)")
	fs.StringArrayVar(&f.taproot, "taproot-xpub", nil, "BIP86 taproot account key, plain xpub/tpub (repeatable)")
	fs.StringArrayVar(&f.descriptors, "descriptor", nil, "output descriptor: pkh, sh(wpkh), wpkh, tr (key path), sh/wsh/sh(wsh) of multi and sortedmulti, addr, raw; ranged /0/* or /<0;1>/*; #checksum verified (repeatable)")
	fs.StringArrayVar(&f.addresses, "address", nil, "single address to watch (repeatable)")
	fs.Int32Var(&f.birthday, "birthday", 0, "first block height that can hold the wallet's transactions")
	fs.Uint32Var(&f.gapExternal, "gap-external", wallet.DefaultGapExternal, "gap limit of the receive branch")
	fs.Uint32Var(&f.gapInternal, "gap-internal", wallet.DefaultGapInternal, "gap limit of the change branch")
	fs.Uint32Var(&f.lookahead, "lookahead", wallet.DefaultReserve,
		"unused addresses each HD branch keeps derived beyond its gap limit, in every filter, so a payment needs no filter reload "+
			"(grows with the branch's pace; 1,000 before a catch-up; 0: none, each payment past the gap makes the node re-fetch blocks)")
}

// options returns the wallet's run-time options from the flags.
func (f *walletFlags) options() []wallet.Option {
	return []wallet.Option{wallet.WithReserve(f.lookahead)}
}

// checkGaps refuses a gap limit of 0 (the wallet library reads 0 as "the
// default", which would silently turn an explicit 0 into 20).
func (f *walletFlags) checkGaps(prefix string) error {
	if f.gapExternal == 0 || f.gapInternal == 0 {
		return usagef("%s: --gap-external and --gap-internal must be at least 1", prefix)
	}
	return nil
}

// spec converts the flags.
func (f *walletFlags) spec() wallet.CreateConfig {
	return wallet.CreateConfig{
		Network: f.network, Xpubs: f.xpubs, TaprootXpubs: f.taproot, Descriptors: f.descriptors,
		Addresses: f.addresses, Birthday: f.birthday, GapExternal: f.gapExternal, GapInternal: f.gapInternal,
	}
}

// walletErr marks errors caused by the user's input (wallet.IsInputError:
// bad key, address, network, settings, missing or existing wallet; the
// running node's refusal of an input, nodeapi.IsInputError) as usage
// errors.
func walletErr(prefix string, err error) error {
	if nodeapi.IsInputError(err) {
		return usageError{fmt.Errorf("%s: %w", prefix, err)}
	}
	return fmt.Errorf("%s: %w", prefix, err)
}

// openWallet opens the wallet of --datadir.
func openWallet(prefix, datadir string) (*wallet.Wallet, error) {
	if datadir == "" {
		return nil, usagef("%s: --datadir is required", prefix)
	}
	w, err := wallet.Open(datadir)
	if err != nil {
		return nil, walletErr(prefix, err)
	}
	return w, nil
}

// openSource returns the wallet of datadir to read and ask: the running
// node's API client when a node serves the data dir (its files are then
// locked), else the wallet's files (openWallet). done releases it,
// keeping the first error.
func openSource(ctx context.Context, prefix, datadir string) (nodeapi.Wallet, func(*error), error) {
	if datadir == "" {
		return nil, nil, usagef("%s: --datadir is required", prefix)
	}
	c, err := nodeapi.Dial(ctx, datadir)
	if err == nil {
		return c, func(*error) { c.Close() }, nil
	}
	if !errors.Is(err, nodeapi.ErrNoNode) {
		return nil, nil, fmt.Errorf("%s: %w", prefix, err)
	}
	w, err := openWallet(prefix, datadir)
	if err != nil {
		return nil, nil, err
	}
	return &nodeapi.Local{W: w}, func(e *error) { closeWallet(w, e) }, nil
}

// openOrCreateWallet opens the wallet of --datadir (session.OpenWallet):
// created from the flags when the directory holds none, given any --xpub or
// --address it does not watch yet otherwise. It reports whether it created
// the wallet.
func openOrCreateWallet(prefix string, f *walletFlags) (*wallet.Wallet, bool, error) {
	if f.datadir == "" {
		return nil, false, usagef("%s: --datadir is required", prefix)
	}
	if !wallet.Exists(f.datadir) {
		if f.network == "" {
			return nil, false, usagef("%s: no wallet in %s; --network is required to create one", prefix, f.datadir)
		}
		if err := f.checkGaps(prefix); err != nil {
			return nil, false, err
		}
	}
	w, created, err := session.OpenWallet(f.datadir, f.spec(), f.options()...)
	if err != nil {
		return nil, false, walletErr(prefix, err)
	}
	return w, created, nil
}

// closeWallet closes w, keeping the first error.
func closeWallet(w *wallet.Wallet, err *error) {
	if cerr := w.Close(); cerr != nil && *err == nil {
		*err = fmt.Errorf("close wallet: %w", cerr)
	}
}

// walletCreateOptions are the flags of `wallet create`.
type walletCreateOptions struct {
	walletFlags
	asJSON bool
}

// newWalletCreateCmd returns `wallet create`.
func newWalletCreateCmd() *cobra.Command {
	o := &walletCreateOptions{}
	cmd := &cobra.Command{
		Use:   "create --datadir D --network N [--xpub X]... [--taproot-xpub X]... [--descriptor DESC]... [--address A]...",
		Short: "Create a watch-only wallet from extended public keys, output descriptors and addresses",
		Long: "Create a watch-only wallet. Every key, descriptor and address is checked before\n" +
			"anything is written; on error the data directory is left as it was. The key version\n" +
			"selects the address type (SLIP-132): xpub/tpub/spub P2PKH, ypub/upub P2SH-P2WPKH,\n" +
			"zpub/vpub P2WPKH; --taproot-xpub takes a BIP86 account key. Descriptors (BIP380-386,\n" +
			"multipath per BIP389) name their own script type; a #checksum is verified when given.\n" +
			"Private keys (xprv, WIF) are refused: bloomwatch never holds them.",
		Args: cobra.NoArgs,
		RunE: o.run,
	}
	o.registerCreate(cmd.Flags())
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print JSON")
	return cmd
}

// walletAddOptions are the flags of `wallet add`.
type walletAddOptions struct {
	datadir    string
	xpub       string
	taproot    string
	descriptor string
	addresses  []string
	addrFile   string
	asJSON     bool
}

// newWalletAddCmd returns `wallet add`.
func newWalletAddCmd() *cobra.Command {
	o := &walletAddOptions{}
	cmd := &cobra.Command{
		Use:   "add --datadir D (--xpub X | --taproot-xpub X | --descriptor DESC | --address A... | --addresses-file FILE)",
		Short: "Watch one more account key or descriptor, or more addresses (a synced wallet rescans from its birthday)",
		Long: "Watch one more account key or descriptor, or more single addresses. Several\n" +
			"addresses (--address repeated, --addresses-file, or both) are imported in one\n" +
			"commit, all or nothing: an address that does not decode, belongs to another\n" +
			"network, is repeated or already watched refuses the whole list, the error names\n" +
			"its line, and nothing is written. The file holds one address per line; blank\n" +
			"lines and everything after a # are ignored; - reads standard input.",
		Args: cobra.NoArgs,
		RunE: o.run,
	}
	f := cmd.Flags()
	registerDatadir(f, &o.datadir)
	f.StringVar(&o.xpub, "xpub", "", "account extended public key to watch")
	f.StringVar(&o.taproot, "taproot-xpub", "", "BIP86 taproot account key to watch (plain xpub/tpub)")
	f.StringVar(&o.descriptor, "descriptor", "", "output descriptor to watch")
	f.StringArrayVar(&o.addresses, "address", nil, "single address to watch (repeatable)")
	f.StringVar(&o.addrFile, "addresses-file", "", "file of addresses to watch, one per line, # comments (- for standard input)")
	f.BoolVar(&o.asJSON, "json", false, "print JSON")
	return cmd
}

// walletReadOptions are the flags of the commands that read the wallet.
type walletReadOptions struct {
	datadir string
	asJSON  bool
	fps     int  // wallet stats only
	limit   int  // wallet txs only
	unused  bool // wallet addresses only
}

// walletReader reads what a read command prints from the wallet (its
// files, or the node that runs on them): the value --json prints, and the
// writer of its text otherwise.
type walletReader func(ctx context.Context, w nodeapi.Wallet, o *walletReadOptions) (any, func(io.Writer) error, error)

// newWalletReadCmd returns a wallet subcommand that opens the wallet of
// --datadir (or asks the node running on it), hands it to read and closes
// it.
func newWalletReadCmd(use, short string, read walletReader) *cobra.Command {
	return (&walletReadOptions{}).command(use, short, read)
}

// command returns a read command whose flags live in o.
func (o *walletReadOptions) command(use, short string, read walletReader) *cobra.Command {
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return o.run(cmd, read) },
	}
	registerDatadir(cmd.Flags(), &o.datadir)
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print JSON")
	return cmd
}

// newWalletStatsCmd returns `wallet stats`.
func newWalletStatsCmd() *cobra.Command {
	o := &walletReadOptions{}
	cmd := o.command("stats --datadir D [--fps N]", "Print match statistics: relevant transactions and false positives", readStats)
	cmd.Flags().IntVar(&o.fps, "fps", 0, "also list up to N false-positive txids, newest first")
	return cmd
}

// newWalletTxsCmd returns `wallet txs`.
func newWalletTxsCmd() *cobra.Command {
	o := &walletReadOptions{}
	cmd := o.command("txs --datadir D [--limit N]", "Print the wallet's transactions with their net amounts (unconfirmed: expiry and conflicts)", readTxs)
	cmd.Flags().IntVar(&o.limit, "limit", 0, "print only the newest N transactions (unconfirmed ones are the newest); 0: all")
	return cmd
}

// run opens the wallet (or the node's client), reads it with read and
// closes it.
func (o *walletReadOptions) run(cmd *cobra.Command, read walletReader) (err error) {
	prefix := "wallet " + cmd.Name()
	if o.fps < 0 {
		return usagef("%s: --fps must not be negative", prefix)
	}
	if o.limit < 0 {
		return usagef("%s: --limit must not be negative", prefix)
	}
	w, done, err := openSource(cmd.Context(), prefix, o.datadir)
	if err != nil {
		return err
	}
	defer done(&err)
	out, text, err := read(cmd.Context(), w, o)
	switch {
	case err != nil:
	case o.asJSON:
		err = writeJSON(cmd, out)
	default:
		err = text(cmd.OutOrStdout())
	}
	if err != nil {
		return fmt.Errorf("%s: %w", prefix, err)
	}
	return nil
}

// run implements `wallet create`.
func (o *walletCreateOptions) run(cmd *cobra.Command, _ []string) (err error) {
	const prefix = "wallet create"
	f := &o.walletFlags
	if f.datadir == "" {
		return usagef("%s: --datadir is required", prefix)
	}
	if f.network == "" {
		return usagef("%s: --network is required", prefix)
	}
	if err := f.checkGaps(prefix); err != nil {
		return err
	}
	w, err := wallet.Create(f.datadir, f.spec(), f.options()...)
	if err != nil {
		return walletErr(prefix, err)
	}
	defer closeWallet(w, &err)
	out, err := w.Overview()
	if err != nil {
		return fmt.Errorf("%s: %w", prefix, err)
	}
	if o.asJSON {
		return writeJSON(cmd, out)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "created %s wallet in %s (birthday %d, gap limits %d/%d, %d filter elements)\n",
		out.Network, out.Datadir, out.Birthday, out.GapExternal, out.GapInternal, out.Elements)
	for _, a := range out.Accounts {
		fmt.Fprintf(&b, "account %s (key %s) %s\n", a.ID, a.Path, a.Kind)
		if a.Depth != accountDepth {
			fmt.Fprintf(&b, "  note: key depth %d, not %d (an account key): addresses are derived as key/0/i and key/1/i\n", a.Depth, accountDepth)
		}
	}
	for _, d := range out.Descriptors {
		fmt.Fprintf(&b, "descriptor %s %s\n", d.Descriptor, d.Kind)
	}
	for _, a := range out.Imported {
		fmt.Fprintf(&b, "address %s %s\n", a.Address, a.Kind)
	}
	_, err = fmt.Fprint(cmd.OutOrStdout(), b.String())
	return err
}

// accountDepth is the depth of a BIP44/49/84 account key (m/purpose'/coin'/account').
const accountDepth = 3

// run implements `wallet add`.
func (o *walletAddOptions) run(cmd *cobra.Command, _ []string) (err error) {
	const prefix = "wallet add"
	given := 0
	for _, v := range []bool{o.xpub != "", o.taproot != "", o.descriptor != "", len(o.addresses) > 0 || o.addrFile != ""} {
		if v {
			given++
		}
	}
	if given != 1 {
		return usagef("%s: give exactly one of --xpub, --taproot-xpub, --descriptor and --address/--addresses-file", prefix)
	}
	var list []wallet.ListedAddress
	if len(o.addresses) > 1 || o.addrFile != "" {
		if list, err = o.addressList(cmd); err != nil {
			return err
		}
	}
	w, err := openWallet(prefix, o.datadir)
	if err != nil {
		return err
	}
	defer closeWallet(w, &err)
	var (
		result any
		line   string
		rescan bool
	)
	switch {
	case o.xpub != "" || o.taproot != "":
		add := w.AddXpub
		key := o.xpub
		if o.taproot != "" {
			add, key = w.AddTaprootXpub, o.taproot
		}
		info, err := add(key)
		if err != nil {
			return walletErr(prefix, err)
		}
		result, rescan = info, info.Rescan
		line = fmt.Sprintf("added account %s (key %s) %s", info.ID, info.Path, info.Kind)
	case o.descriptor != "":
		info, err := w.AddDescriptor(o.descriptor)
		if err != nil {
			return walletErr(prefix, err)
		}
		result, rescan = info, info.Rescan
		line = fmt.Sprintf("added descriptor %s (%s)", info.Descriptor, info.Kind)
	case list != nil:
		infos, err := w.AddAddressList(list)
		if err != nil {
			return walletErr(prefix, err)
		}
		rescan = len(infos) > 0 && infos[0].Rescan
		result = walletAddAddressesJSON{Added: len(infos), Addresses: infos, Rescan: rescan}
		noun := "addresses"
		if len(infos) == 1 {
			noun = "address"
		}
		line = fmt.Sprintf("added %d %s (%s)", len(infos), noun, countKinds(infos))
	default:
		info, err := w.AddAddress(o.addresses[0])
		if err != nil {
			return walletErr(prefix, err)
		}
		result, rescan = info, info.Rescan
		line = fmt.Sprintf("added address %s %s", info.Address, info.Kind)
	}
	if o.asJSON {
		return writeJSON(cmd, result)
	}
	if rescan {
		line += fmt.Sprintf("; the next sync rescans from the birthday (%d); until then the wallet shows what it found up to height %d",
			w.Birthday(), w.HistoryPoint().Height)
	}
	_, err = fmt.Fprintln(cmd.OutOrStdout(), line)
	return err
}

// walletAddAddressesJSON is the --json output of `wallet add` with several
// addresses (one --address prints the ImportInfo alone).
type walletAddAddressesJSON struct {
	Added     int                  `json:"added"`
	Addresses []*wallet.ImportInfo `json:"addresses"`
	Rescan    bool                 `json:"rescan"`
}

// addressList collects the addresses of --address and --addresses-file, in
// that order, before the wallet is opened: a file that cannot be read or
// holds a malformed line (wallet.ReadAddressList) is refused with its line
// named.
func (o *walletAddOptions) addressList(cmd *cobra.Command) ([]wallet.ListedAddress, error) {
	const prefix = "wallet add"
	var list []wallet.ListedAddress
	for i, a := range o.addresses {
		list = append(list, wallet.ListedAddress{Address: a, Where: fmt.Sprintf("--address #%d", i+1)})
	}
	if o.addrFile == "" {
		return list, nil
	}
	name, in := o.addrFile, io.Reader(nil)
	if name == "-" {
		name, in = "standard input", cmd.InOrStdin()
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, usageError{fmt.Errorf("%s: --addresses-file: %w", prefix, err)}
		}
		defer f.Close()
		in = f
	}
	file, err := wallet.ReadAddressList(in, name)
	switch {
	case errors.Is(err, wallet.ErrBadAddressList):
		return nil, usagef("%s: %w; nothing was imported", prefix, err)
	case errors.Is(err, wallet.ErrEmptyAddressList):
		return nil, usagef("%s: %w", prefix, err)
	case err != nil:
		return nil, usageError{fmt.Errorf("%s: --addresses-file %s: %w", prefix, name, err)}
	}
	return append(list, file...), nil
}

// countKinds summarizes imported addresses by kind ("p2wpkh 9, p2tr 1").
func countKinds(infos []*wallet.ImportInfo) string {
	counts := map[wallet.Kind]int{}
	var order []wallet.Kind
	for _, info := range infos {
		if counts[info.Kind] == 0 {
			order = append(order, info.Kind)
		}
		counts[info.Kind]++
	}
	parts := make([]string, len(order))
	for i, k := range order {
		parts[i] = fmt.Sprintf("%s %d", k, counts[k])
	}
	return strings.Join(parts, ", ")
}

// readBalance implements `wallet balance`.
func readBalance(ctx context.Context, w nodeapi.Wallet, _ *walletReadOptions) (any, func(io.Writer) error, error) {
	r, err := readBalanceReport(ctx, w)
	return r, r.writeTable, err
}

// readTxs implements `wallet txs`: every transaction, or the newest
// --limit (the end of the list: confirmed by height, then unconfirmed),
// in the same order, with a line saying how many were left out.
func readTxs(ctx context.Context, w nodeapi.Wallet, o *walletReadOptions) (any, func(io.Writer) error, error) {
	info, err := w.Txs(ctx)
	if err != nil {
		return nil, nil, err
	}
	txs := info.Txs
	note := stateRescanNote(info.State)
	total := len(txs)
	if o.limit > 0 && total > o.limit {
		txs = txs[total-o.limit:]
		more := fmt.Sprintf("the newest %d of %d transactions; --limit 0 prints all", o.limit, total)
		if note != "" {
			more += "\n" + note
		}
		note = more
	}
	return nonNil(txs), func(out io.Writer) error { return withNote(out, note, writeTxTable(out, txs)) }, err
}

// readUTXOs implements `wallet utxos`.
func readUTXOs(ctx context.Context, w nodeapi.Wallet, _ *walletReadOptions) (any, func(io.Writer) error, error) {
	info, err := w.UTXOs(ctx)
	if err != nil {
		return nil, nil, err
	}
	utxos := info.UTXOs
	note := stateRescanNote(info.State)
	return nonNil(utxos), func(out io.Writer) error { return withNote(out, note, writeUTXOTable(out, utxos)) }, err
}

// withNote writes note (rescanNote) under a table that was written
// without error; an empty note writes nothing.
func withNote(out io.Writer, note string, err error) error {
	if err != nil || note == "" {
		return err
	}
	_, err = fmt.Fprintln(out, note)
	return err
}

// readStats implements `wallet stats`.
func readStats(ctx context.Context, w nodeapi.Wallet, o *walletReadOptions) (any, func(io.Writer) error, error) {
	r, err := readStatsReport(ctx, w, o.fps)
	return r, r.writeText, err
}

// nonNil returns s, or an empty slice for nil, so that JSON prints [].
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
