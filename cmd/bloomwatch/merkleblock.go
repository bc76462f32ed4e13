package main

import (
	"fmt"
	"strings"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/spf13/cobra"
)

// newMerkleblockCmd returns `bloomwatch merkleblock`, which groups the
// merkleblock tools.
func newMerkleblockCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "merkleblock",
		Short: "Inspect BIP37 merkleblock messages",
	}
	cmd.AddCommand(newMerkleblockVerifyCmd())
	return cmd
}

// merkleblockVerifyOptions holds the flags of `merkleblock verify`.
type merkleblockVerifyOptions struct {
	asJSON bool
}

// newMerkleblockVerifyCmd returns `merkleblock verify`, which verifies a
// merkleblock payload.
func newMerkleblockVerifyCmd() *cobra.Command {
	o := &merkleblockVerifyOptions{}
	cmd := &cobra.Command{
		Use:   "verify [--json] HEX",
		Short: "Verify a merkleblock message payload and list the matched transactions",
		Long: "Decode a merkleblock message payload given in hex, run Bitcoin Core's partial merkle\n" +
			"tree checks and compare the computed root with the header's. Prints the block hash,\n" +
			"the transaction count and the matched txids with their indexes. A payload that does\n" +
			"not decode is bad input (exit 2); a tree that fails a check exits 1 naming the check.",
		RunE: o.run,
	}
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print JSON")
	return cmd
}

// merkleMatchJSON is one matched transaction in --json output.
type merkleMatchJSON struct {
	Index uint32 `json:"index"`
	Txid  string `json:"txid"`
}

// merkleblockJSON is the --json output of `merkleblock verify`.
type merkleblockJSON struct {
	BlockHash    string            `json:"block_hash"`
	MerkleRoot   string            `json:"merkle_root"`
	Transactions uint32            `json:"transactions"`
	Matches      []merkleMatchJSON `json:"matches"`
}

// run implements `merkleblock verify`.
func (o *merkleblockVerifyOptions) run(cmd *cobra.Command, args []string) error {
	if len(args) != 1 {
		return usagef("merkleblock verify: want exactly one HEX payload, got %d arguments", len(args))
	}
	raw, err := decodeHex(args[0])
	if err != nil {
		return usagef("merkleblock verify: %w", err)
	}
	mb, err := bip37.DecodeMerkleBlock(raw)
	if err != nil {
		return usagef("merkleblock verify: %w", err)
	}
	matches, indexes, err := bip37.VerifyMerkleBlock(mb)
	if err != nil {
		return fmt.Errorf("merkleblock verify: %w", err)
	}
	out := merkleblockJSON{
		BlockHash:    mb.Header.BlockHash().String(),
		MerkleRoot:   mb.Header.MerkleRoot.String(),
		Transactions: mb.Transactions,
		Matches:      make([]merkleMatchJSON, len(matches)),
	}
	for i := range matches {
		out.Matches[i] = merkleMatchJSON{Index: indexes[i], Txid: matches[i].String()}
	}
	if o.asJSON {
		return writeJSON(cmd, out)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "block %s\ntransactions %d\nmatched %d\n", out.BlockHash, out.Transactions, len(out.Matches))
	for _, m := range out.Matches {
		fmt.Fprintf(&b, "%d %s\n", m.Index, m.Txid)
	}
	_, err = fmt.Fprint(cmd.OutOrStdout(), b.String())
	return err
}
