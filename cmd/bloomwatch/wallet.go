package main

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

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
		newWalletReadCmd("balance --datadir D", "Print the confirmed, unconfirmed and immature balance", showBalance),
		newWalletReadCmd("txs --datadir D", "Print the wallet's transactions with their net amounts", showTxs),
		newWalletReadCmd("utxos --datadir D", "Print the unspent outputs", showUTXOs),
		newWalletReadCmd("addresses --datadir D", "Print every watched address with its derivation path and use", showAddresses),
		newWalletStatsCmd())
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
}

// registerDatadir adds --datadir, stored in p.
func registerDatadir(fs *pflag.FlagSet, p *string) {
	fs.StringVar(p, "datadir", "", "wallet data directory (required)")
}

// registerCreate adds every flag that describes a new wallet.
func (f *walletFlags) registerCreate(fs *pflag.FlagSet) {
	registerDatadir(fs, &f.datadir)
	fs.StringVar(&f.network, "network", "", "network: mainnet, testnet3, signet, regtest or simnet (required)")
	fs.StringArrayVar(&f.xpubs, "xpub", nil, "account extended public key: xpub/ypub/zpub, tpub/upub/vpub, spub (repeatable)")
	fs.StringArrayVar(&f.taproot, "taproot-xpub", nil, "BIP86 taproot account key, plain xpub/tpub (repeatable)")
	fs.StringArrayVar(&f.descriptors, "descriptor", nil, "output descriptor: pkh, sh(wpkh), wpkh, tr (key path), addr, raw; ranged /0/* or /<0;1>/*; #checksum verified (repeatable)")
	fs.StringArrayVar(&f.addresses, "address", nil, "single address to watch (repeatable)")
	fs.Int32Var(&f.birthday, "birthday", 0, "first block height that can hold the wallet's transactions")
	fs.Uint32Var(&f.gapExternal, "gap-external", wallet.DefaultGapExternal, "gap limit of the receive branch")
	fs.Uint32Var(&f.gapInternal, "gap-internal", wallet.DefaultGapInternal, "gap limit of the change branch")
}

// checkGaps refuses a gap limit of 0 (the wallet library reads 0 as "the
// default", which would silently turn an explicit 0 into 20).
func (f *walletFlags) checkGaps(prefix string) error {
	if f.gapExternal == 0 || f.gapInternal == 0 {
		return usagef("%s: --gap-external and --gap-internal must be at least 1", prefix)
	}
	return nil
}

// createConfig converts the flags.
func (f *walletFlags) createConfig() wallet.CreateConfig {
	return wallet.CreateConfig{
		Network:      f.network,
		Xpubs:        f.xpubs,
		TaprootXpubs: f.taproot,
		Descriptors:  f.descriptors,
		Addresses:    f.addresses,
		Birthday:     f.birthday,
		GapExternal:  f.gapExternal,
		GapInternal:  f.gapInternal,
	}
}

// walletErr marks errors caused by the user's input (bad key, address,
// network, settings, missing or existing wallet) as usage errors.
func walletErr(prefix string, err error) error {
	var ie *wallet.InputError
	if errors.As(err, &ie) ||
		errors.Is(err, wallet.ErrNoWallet) ||
		errors.Is(err, wallet.ErrExists) ||
		errors.Is(err, wallet.ErrWrongNetwork) ||
		errors.Is(err, wallet.ErrUnknownNetwork) ||
		errors.Is(err, wallet.ErrDuplicate) {
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
	w, created, err := session.OpenWallet(session.WalletSpec{
		Dir: f.datadir, Network: f.network, Xpubs: f.xpubs, TaprootXpubs: f.taproot, Descriptors: f.descriptors,
		Addresses: f.addresses, Birthday: f.birthday, GapExternal: f.gapExternal, GapInternal: f.gapInternal,
	})
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
	address    string
	asJSON     bool
}

// newWalletAddCmd returns `wallet add`.
func newWalletAddCmd() *cobra.Command {
	o := &walletAddOptions{}
	cmd := &cobra.Command{
		Use:   "add --datadir D (--xpub X | --taproot-xpub X | --descriptor DESC | --address A)",
		Short: "Watch one more account key, descriptor or address (a synced wallet rescans from its birthday)",
		Args:  cobra.NoArgs,
		RunE:  o.run,
	}
	f := cmd.Flags()
	registerDatadir(f, &o.datadir)
	f.StringVar(&o.xpub, "xpub", "", "account extended public key to watch")
	f.StringVar(&o.taproot, "taproot-xpub", "", "BIP86 taproot account key to watch (plain xpub/tpub)")
	f.StringVar(&o.descriptor, "descriptor", "", "output descriptor to watch")
	f.StringVar(&o.address, "address", "", "single address to watch")
	f.BoolVar(&o.asJSON, "json", false, "print JSON")
	return cmd
}

// walletReadOptions are the flags of the commands that read the wallet.
type walletReadOptions struct {
	datadir string
	asJSON  bool
	fps     int // wallet stats only
}

// walletReader prints what a read command reads from the open wallet.
type walletReader func(cmd *cobra.Command, w *wallet.Wallet, o *walletReadOptions) error

// newWalletReadCmd returns a wallet subcommand that opens the wallet of
// --datadir, hands it to read and closes it.
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
	cmd := o.command("stats --datadir D [--fps N]", "Print match statistics: relevant transactions and false positives", showStats)
	cmd.Flags().IntVar(&o.fps, "fps", 0, "also list up to N false-positive txids, newest first")
	return cmd
}

// run opens the wallet, reads it with read and closes it.
func (o *walletReadOptions) run(cmd *cobra.Command, read walletReader) (err error) {
	prefix := "wallet " + cmd.Name()
	if o.fps < 0 {
		return usagef("%s: --fps must not be negative", prefix)
	}
	w, err := openWallet(prefix, o.datadir)
	if err != nil {
		return err
	}
	defer closeWallet(w, &err)
	if err := read(cmd, w, o); err != nil {
		return fmt.Errorf("%s: %w", prefix, err)
	}
	return nil
}

// walletCreateJSON is the --json output of `wallet create`.
type walletCreateJSON struct {
	Datadir     string                  `json:"datadir"`
	Network     string                  `json:"network"`
	Birthday    int32                   `json:"birthday"`
	GapExternal uint32                  `json:"gap_external"`
	GapInternal uint32                  `json:"gap_internal"`
	Accounts    []wallet.AccountInfo    `json:"accounts"`
	Descriptors []wallet.DescriptorInfo `json:"descriptors"`
	Addresses   []wallet.AddressInfo    `json:"imported"`
	Elements    int                     `json:"filter_elements"`
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
	w, err := wallet.Create(f.datadir, f.createConfig())
	if err != nil {
		return walletErr(prefix, err)
	}
	defer closeWallet(w, &err)
	accounts, err := w.Accounts()
	if err != nil {
		return fmt.Errorf("%s: %w", prefix, err)
	}
	addrs, err := w.Addresses()
	if err != nil {
		return fmt.Errorf("%s: %w", prefix, err)
	}
	var imported []wallet.AddressInfo
	for _, a := range addrs {
		if a.Imported {
			imported = append(imported, a)
		}
	}
	st, err := w.Stats()
	if err != nil {
		return fmt.Errorf("%s: %w", prefix, err)
	}
	descs, err := w.Descriptors()
	if err != nil {
		return fmt.Errorf("%s: %w", prefix, err)
	}
	if descs == nil {
		descs = []wallet.DescriptorInfo{}
	}
	ext, in := w.GapLimits()
	out := walletCreateJSON{
		Datadir: f.datadir, Network: w.Network(), Birthday: w.Birthday(), GapExternal: ext, GapInternal: in,
		Accounts: accounts, Descriptors: descs, Addresses: imported, Elements: st.Elements,
	}
	if o.asJSON {
		return writeJSON(cmd, out)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "created %s wallet in %s (birthday %d, gap limits %d/%d, %d filter elements)\n",
		out.Network, out.Datadir, out.Birthday, ext, in, out.Elements)
	for _, a := range accounts {
		fmt.Fprintf(&b, "account %s %s %s\n", a.Scope, a.Name, a.Kind)
		if a.Depth != accountDepth {
			fmt.Fprintf(&b, "  note: key depth %d, not %d (an account key): addresses are derived as key/0/i and key/1/i\n", a.Depth, accountDepth)
		}
	}
	for _, d := range descs {
		fmt.Fprintf(&b, "descriptor %s %s\n", d.Descriptor, d.Kind)
	}
	for _, a := range imported {
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
	for _, v := range []string{o.xpub, o.taproot, o.descriptor, o.address} {
		if v != "" {
			given++
		}
	}
	if given != 1 {
		return usagef("%s: give exactly one of --xpub, --taproot-xpub, --descriptor and --address", prefix)
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
		line = fmt.Sprintf("added account %s %s %s", info.Scope, info.Name, info.Kind)
	case o.descriptor != "":
		info, err := w.AddDescriptor(o.descriptor)
		if err != nil {
			return walletErr(prefix, err)
		}
		result, rescan = info, info.Rescan
		line = fmt.Sprintf("added descriptor %s (%s)", info.Descriptor, info.Kind)
	default:
		info, err := w.AddAddress(o.address)
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
		line += fmt.Sprintf("; the next sync rescans from the birthday (%d)", w.Birthday())
	}
	_, err = fmt.Fprintln(cmd.OutOrStdout(), line)
	return err
}

// walletBalanceJSON is the --json output of `wallet balance`.
type walletBalanceJSON struct {
	wallet.Balance
	Total        int64  `json:"total"`
	SyncedHeight int32  `json:"synced_height"`
	SyncedHash   string `json:"synced_hash,omitempty"`
}

// showBalance implements `wallet balance`.
func showBalance(cmd *cobra.Command, w *wallet.Wallet, o *walletReadOptions) error {
	bal, err := w.Balance()
	if err != nil {
		return err
	}
	sp, err := w.SyncedTo()
	if err != nil {
		return err
	}
	out := walletBalanceJSON{Balance: bal, Total: int64(bal.Total()), SyncedHeight: sp.Height}
	if sp.Height >= 0 {
		out.SyncedHash = sp.Hash.String()
	}
	if o.asJSON {
		return writeJSON(cmd, out)
	}
	tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, row := range []struct {
		name string
		sat  int64
	}{{"confirmed", int64(bal.Confirmed)}, {"unconfirmed", int64(bal.Unconfirmed)},
		{"immature", int64(bal.Immature)}, {"total", out.Total}} {
		fmt.Fprintf(tw, "%s\t%d sat\t%s\t\n", row.name, row.sat, formatBTC(row.sat))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err = fmt.Fprintln(cmd.OutOrStdout(), syncedLine(out.SyncedHeight))
	return err
}

// formatBTC formats satoshis as BTC with eight decimals.
func formatBTC(sat int64) string {
	const satPerBTC = 100_000_000
	sign := ""
	if sat < 0 {
		sign, sat = "-", -sat
	}
	return fmt.Sprintf("%s%d.%08d BTC", sign, sat/satPerBTC, sat%satPerBTC)
}

// syncedLine describes a sync point.
func syncedLine(height int32) string {
	if height < 0 {
		return "not synced yet"
	}
	return fmt.Sprintf("synced to height %d", height)
}

// showTxs implements `wallet txs`.
func showTxs(cmd *cobra.Command, w *wallet.Wallet, o *walletReadOptions) error {
	txs, err := w.Txs()
	if err != nil {
		return err
	}
	if o.asJSON {
		if txs == nil {
			txs = []wallet.TxSummary{}
		}
		return writeJSON(cmd, txs)
	}
	tw := newTable(cmd.OutOrStdout())
	fmt.Fprintln(tw, "HEIGHT\tTXID\tDELTA (sat)\tCONFIRMATIONS")
	for _, t := range txs {
		height := fmt.Sprint(t.Height)
		if t.Height < 0 {
			height = "mempool"
		}
		fmt.Fprintf(tw, "%s\t%s\t%+d\t%d\n", height, t.Txid, t.Delta, t.Confirmations)
	}
	return tw.Flush()
}

// showUTXOs implements `wallet utxos`.
func showUTXOs(cmd *cobra.Command, w *wallet.Wallet, o *walletReadOptions) error {
	utxos, err := w.UTXOs()
	if err != nil {
		return err
	}
	if o.asJSON {
		if utxos == nil {
			utxos = []wallet.UTXO{}
		}
		return writeJSON(cmd, utxos)
	}
	tw := newTable(cmd.OutOrStdout())
	fmt.Fprintln(tw, "OUTPOINT\tAMOUNT (sat)\tHEIGHT\tCONFIRMATIONS\tADDRESS")
	for _, u := range utxos {
		fmt.Fprintf(tw, "%s:%d\t%d\t%d\t%d\t%s\n", u.Txid, u.Index, int64(u.Amount), u.Height, u.Confirmations, u.Address)
	}
	return tw.Flush()
}

// showAddresses implements `wallet addresses`.
func showAddresses(cmd *cobra.Command, w *wallet.Wallet, o *walletReadOptions) error {
	addrs, err := w.Addresses()
	if err != nil {
		return err
	}
	if o.asJSON {
		if addrs == nil {
			addrs = []wallet.AddressInfo{}
		}
		return writeJSON(cmd, addrs)
	}
	tw := newTable(cmd.OutOrStdout())
	fmt.Fprintln(tw, "ADDRESS\tKIND\tPATH\tUSED\tDESCRIPTOR")
	for _, a := range addrs {
		path := "imported"
		if !a.Imported {
			path = a.Path
		}
		shown := a.Address
		if shown == "" {
			shown = "script:" + a.Element
		}
		desc := "-"
		if a.Descriptor != "" {
			desc = "#" + a.Descriptor
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%t\t%s\n", shown, a.Kind, path, a.Used, desc)
	}
	return tw.Flush()
}

// walletStatsJSON is the --json output of `wallet stats`.
type walletStatsJSON struct {
	wallet.Stats
	Descriptors      []wallet.DescriptorInfo `json:"descriptors"`
	FalsePositiveTxs []wallet.FalsePositive  `json:"false_positive_txs,omitempty"`
}

// showStats implements `wallet stats`.
func showStats(cmd *cobra.Command, w *wallet.Wallet, o *walletReadOptions) error {
	st, err := w.Stats()
	if err != nil {
		return err
	}
	descs, err := w.Descriptors()
	if err != nil {
		return err
	}
	out := walletStatsJSON{Stats: st, Descriptors: descs}
	if out.Descriptors == nil {
		out.Descriptors = []wallet.DescriptorInfo{}
	}
	if o.fps > 0 {
		if out.FalsePositiveTxs, err = w.FalsePositives(o.fps); err != nil {
			return err
		}
	}
	if o.asJSON {
		return writeJSON(cmd, out)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "blocks applied %d\n", st.BlocksApplied)
	fmt.Fprintf(&b, "block matches %d: relevant %d, false positives %d\n", st.Matched, st.Relevant, st.FalsePositives)
	fmt.Fprintf(&b, "mempool matches %d: relevant %d, false positives %d\n", st.MempoolMatched, st.MempoolRelevant, st.MempoolFalsePositives)
	fmt.Fprintf(&b, "filter elements %d data + %d outpoints, %d watched scripts\n", st.Elements, st.OutPoints, st.Scripts)
	for _, d := range descs {
		fmt.Fprintf(&b, "descriptor %s checksum %s (%s)\n", d.Descriptor, d.Checksum, d.Kind)
	}
	for _, fp := range out.FalsePositiveTxs {
		fmt.Fprintf(&b, "false positive %s height %d\n", fp.Txid, fp.Height)
	}
	_, err = fmt.Fprint(cmd.OutOrStdout(), b.String())
	return err
}
