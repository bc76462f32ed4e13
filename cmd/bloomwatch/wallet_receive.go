package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/bloomwatch/bloomwatch/nodeapi"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// walletReceiveOptions are the flags of `wallet receive`.
type walletReceiveOptions struct {
	datadir   string
	from      string
	beyondGap bool
	asJSON    bool
}

// newWalletReceiveCmd returns `wallet receive`.
func newWalletReceiveCmd() *cobra.Command {
	o := &walletReceiveOptions{}
	cmd := &cobra.Command{
		Use:   "receive --datadir D [--from ACCOUNT|CHECKSUM] [--beyond-gap]",
		Short: "Hand out the next unused receive address (the next call gives the next one)",
		Long: "Hand out the next receive address of an account or descriptor that was neither paid\n" +
			"nor handed out before, and record it as handed out, as Bitcoin Core's getnewaddress\n" +
			"does. The filter always holds the gap limit's worth of addresses beyond the last one\n" +
			"handed out. A wallet restored from the same key finds payments only up to the gap\n" +
			"limit past the last paid address, so an address past it is refused (exit 2) unless\n" +
			"--beyond-gap is given: this wallet then watches it, another restored with that gap\n" +
			"limit would not. --from names the account (as printed: m/84'/1'/0) or the\n" +
			"descriptor (its checksum) when the wallet has several.",
		Args: cobra.NoArgs,
		RunE: o.run,
	}
	f := cmd.Flags()
	registerDatadir(f, &o.datadir)
	f.StringVar(&o.from, "from", "", "account (m/84'/1'/0) or descriptor checksum to hand out from")
	f.BoolVar(&o.beyondGap, "beyond-gap", false, "hand out an address past the gap limit")
	f.BoolVar(&o.asJSON, "json", false, "print JSON")
	return cmd
}

// run implements `wallet receive`.
func (o *walletReceiveOptions) run(cmd *cobra.Command, _ []string) (err error) {
	const prefix = "wallet receive"
	w, done, err := openSource(cmd.Context(), prefix, o.datadir)
	if err != nil {
		return err
	}
	defer done(&err)
	info, err := w.Receive(cmd.Context(), wallet.ReceiveOptions{From: o.from, BeyondGap: o.beyondGap})
	if err != nil {
		return walletErr(prefix, err)
	}
	if o.asJSON {
		return writeJSON(cmd, info)
	}
	where := fmt.Sprintf("index %d of %s", info.Index, info.From)
	if info.Path != "" {
		where += ", path " + info.Path
	}
	note := fmt.Sprintf("%d of %d unpaid before the gap limit", info.Unpaid, info.GapLimit)
	if info.BeyondGap {
		note = fmt.Sprintf("%d unpaid: past the gap limit of %d", info.Unpaid, info.GapLimit)
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s  %s %s, %s\n", info.Address, info.Kind, where, note)
	return err
}

// newWalletAddressesCmd returns `wallet addresses`.
func newWalletAddressesCmd() *cobra.Command {
	o := &walletReadOptions{}
	cmd := o.command("addresses --datadir D [--unused]", "Print every watched address with its derivation path and use", readAddresses)
	cmd.Flags().BoolVar(&o.unused, "unused", false, "only addresses no payment used (handed-out ones are marked)")
	return cmd
}

// readAddresses implements `wallet addresses`.
func readAddresses(ctx context.Context, w nodeapi.Wallet, o *walletReadOptions) (any, func(io.Writer) error, error) {
	info, err := w.Addresses(ctx)
	if err != nil {
		return nil, nil, err
	}
	addrs := info.Addresses
	if o.unused {
		kept := addrs[:0]
		for _, a := range addrs {
			if !a.Used {
				kept = append(kept, a)
			}
		}
		addrs = kept
	}
	return nonNil(addrs), func(out io.Writer) error { return writeAddressTable(out, addrs) }, err
}
