package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/bloomwatch/bloomwatch/internal/table"
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
		newWalletReadCmd("balance --datadir D", "Print the confirmed, unconfirmed, immature and pending-spent balance and the worst-case total", showBalance),
		newWalletReadCmd("txs --datadir D", "Print the wallet's transactions with their net amounts (unconfirmed: expiry and conflicts)", showTxs),
		newWalletReadCmd("utxos --datadir D", "Print the unspent outputs and the unconfirmed spends of each", showUTXOs),
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
	fs.StringVar(&f.network, "network", "", "network: mainnet, testnet3, testnet4, signet, regtest or simnet (required)")
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

// spec converts the flags.
func (f *walletFlags) spec() session.WalletSpec {
	return session.WalletSpec{
		Dir: f.datadir, Network: f.network, Xpubs: f.xpubs, TaprootXpubs: f.taproot, Descriptors: f.descriptors,
		Addresses: f.addresses, Birthday: f.birthday, GapExternal: f.gapExternal, GapInternal: f.gapInternal,
	}
}

// walletErr marks errors caused by the user's input (wallet.IsInputError:
// bad key, address, network, settings, missing or existing wallet) as
// usage errors.
func walletErr(prefix string, err error) error {
	if wallet.IsInputError(err) {
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
	w, created, err := session.OpenWallet(f.spec())
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
	w, err := wallet.Create(f.datadir, f.spec().CreateConfig())
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
		fmt.Fprintf(&b, "account %s %s %s\n", a.Scope, a.Name, a.Kind)
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
		line = fmt.Sprintf("added account %s %s %s", info.Scope, info.Name, info.Kind)
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
		line += fmt.Sprintf("; the next sync rescans from the birthday (%d)", w.Birthday())
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
		{"immature", int64(bal.Immature)}, {"pending spent", int64(bal.PendingSpent)}, {"total", out.Total}} {
		fmt.Fprintf(tw, "%s\t%d sat\t%s\t\n", row.name, row.sat, formatBTC(row.sat))
	}
	fmt.Fprintf(tw, "conflicts\t%d tx\t\t\n", bal.Conflicts)
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err = fmt.Fprintln(cmd.OutOrStdout(), balanceNote+"\n"+syncedLine(out.SyncedHeight))
	return err
}

// balanceNote explains the balance rows under the table.
const balanceNote = "confirmed ignores unconfirmed spends (they are pending spent until a block confirms them);\n" +
	"total is the worst case: confirmed + immature + unconfirmed - pending spent, without the\n" +
	"outputs of conflicting unconfirmed transactions (conflicts: at most one of each set confirms)"

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
	tw := table.New(cmd.OutOrStdout())
	fmt.Fprintln(tw, "HEIGHT\tTXID\tDELTA (sat)\tCONFIRMATIONS\tEXPIRES\tCONFLICTS")
	for _, t := range txs {
		height, expires, conflicts := fmt.Sprint(t.Height), "-", "-"
		if t.Height < 0 {
			height = "mempool"
			if t.Expires != nil {
				expires = t.Expires.UTC().Format(expiryLayout)
			}
			conflicts = conflictsCell(t)
		}
		fmt.Fprintf(tw, "%s\t%s\t%+d\t%d\t%s\t%s\n", height, t.Txid, t.Delta, t.Confirmations, expires, conflicts)
	}
	return tw.Flush()
}

// expiryLayout formats when an unconfirmed transaction expires.
const expiryLayout = "2006-01-02 15:04 UTC"

// conflictsCell describes an unconfirmed transaction's conflicts: the
// transactions spending the same coins, or a conflicted parent.
func conflictsCell(t wallet.TxSummary) string {
	switch {
	case len(t.Conflicts) > 0:
		ids := make([]string, len(t.Conflicts))
		for i, c := range t.Conflicts {
			ids[i] = c.String()
		}
		return strings.Join(ids, ",")
	case t.Conflicted:
		return "via a conflicted parent"
	default:
		return "-"
	}
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
	tw := table.New(cmd.OutOrStdout())
	fmt.Fprintln(tw, "OUTPOINT\tAMOUNT (sat)\tHEIGHT\tCONFIRMATIONS\tADDRESS\tPENDING")
	for _, u := range utxos {
		fmt.Fprintf(tw, "%s:%d\t%d\t%d\t%d\t%s\t%s\n", u.Txid, u.Index, int64(u.Amount), u.Height, u.Confirmations, u.Address, pendingCell(u))
	}
	return tw.Flush()
}

// pendingCell describes what unconfirmed transactions do to an output: the
// first that spends it (and how many more conflict over it), and whether
// it is an output of a conflicted unconfirmed transaction.
func pendingCell(u wallet.UTXO) string {
	var parts []string
	if u.Conflicted {
		parts = append(parts, "conflicted")
	}
	if len(u.SpentBy) > 0 {
		p := "spent by " + u.SpentBy[0].String()
		if n := len(u.SpentBy) - 1; n > 0 {
			p += fmt.Sprintf(" (+%d conflicting)", n)
		}
		parts = append(parts, p)
	} else if u.PendingSpend {
		parts = append(parts, "spent")
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, "; ")
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
	tw := table.New(cmd.OutOrStdout())
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
	Addresses        wallet.AddressCounts    `json:"addresses"`
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
	counts, err := w.AddressCounts()
	if err != nil {
		return err
	}
	out := walletStatsJSON{Stats: st, Addresses: counts, Descriptors: descs}
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
	fmt.Fprintf(&b, "addresses %d derived (%d used), %d imported (%d used)\n",
		counts.Derived, counts.DerivedUsed, counts.Imported, counts.ImportedUsed)
	for _, d := range descs {
		fmt.Fprintf(&b, "descriptor %s checksum %s (%s)\n", d.Descriptor, d.Checksum, d.Kind)
	}
	for _, fp := range out.FalsePositiveTxs {
		fmt.Fprintf(&b, "false positive %s height %d\n", fp.Txid, fp.Height)
	}
	_, err = fmt.Fprint(cmd.OutOrStdout(), b.String())
	return err
}
